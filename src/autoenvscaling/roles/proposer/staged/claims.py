"""Checks of an instruction against what the draft really is, beside the text rules of ``text.py``: a filter's
recorded output that breaks a comparison the instruction states (``status code less than 500``, and a recorded
line holds 500), an order (``orders.py``), a removal, a quoted line, a text the kept lines lack or a field
(``sources.py``) or a count it states, and the direction of a "filter out" that the output settles
(``with_direction``)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from autoenvscaling.roles.proposer.staged.grading import normalized
from autoenvscaling.roles.proposer.staged.orders import order_violation, sort_violation, without_total
from autoenvscaling.roles.proposer.staged.references import ABS_PATH
from autoenvscaling.roles.proposer.staged.sources import (
    HINT_LINE,
    both_violation,
    field_violation,
    lacking_violation,
    lines_violation,
)
from autoenvscaling.roles.proposer.staged.sources import SENTENCE as _SENTENCE

_CLAIM = re.compile(
    r"(greater than or equal to|less than or equal to|greater than|less than|more than|higher than|lower than"
    r"|at least|at most|above|below|over|under|>=|<=|>|<)\s*(\d+)\b"
)
_CLAIM_OPS: dict[str, Callable[[int, int], bool]] = {
    **dict.fromkeys(("greater than or equal to", "at least", ">="), lambda a, b: a >= b),
    **dict.fromkeys(("less than or equal to", "at most", "<="), lambda a, b: a <= b),
    **dict.fromkeys(("greater than", "more than", "higher than", "above", "over", ">"), lambda a, b: a > b),
    **dict.fromkeys(("less than", "lower than", "below", "under", "<"), lambda a, b: a < b),
}
# A sentence with one of these words may state the rule's complement or an alternative: no claim is read from it.
_NOT_A_PLAIN_CLAIM = re.compile(
    r"\b(?:or|not|no|nor|except|exclud\w*|without|out|drop\w*|remov\w*|ignor\w*|skip\w*|other|between|unless)\b"
)


def claim_violation(instruction: str, output: str, inputs: dict[str, str]) -> str | None:
    """Why the output contradicts a comparison the instruction states, or None.

    For each plain claim (``status code less than 500``: no negation and no "or" in its sentence) of a number
    with as many digits as the values of some whole-number column of the output: when no such column holds the
    claim on every line, the output contradicts it (yield series v13 #0: "status code less than 500", and the
    recorded lines of a filter held a 500). When no column of a filter has such a number on every line (its
    fields shift: a request path with a space), a line whose numbers of as many digits all break the claim
    contradicts it (v16 A1 #14: ">= 400", and `[400-999]` kept every line). For an output that is no filter
    (counts per status code), only a column whose every value is a field of the inputs is compared, a last
    ``total`` line left out (v14 #4: "greater than 400", and the counts listed status 200). A claim that no
    column can be compared with (a count, a size) is not checked."""
    lines = normalized(output)
    known = {ln for text in inputs.values() for ln in normalized(text)}
    if not lines:
        return None
    # Not a filter (counts per status, say): only a column whose every value is a field of the inputs is compared.
    fields = None if all(ln in known for ln in lines) else {f for ln in known for f in ln.split()}
    rows = [ln.split() for ln in lines]
    if fields is not None:
        rows = without_total(rows)
    if not rows:
        return None
    width = min(len(r) for r in rows)
    for claim, op, number, digits in _plain_claims(instruction):
        columns = [
            j
            for j in range(width)
            if all(r[j].isdigit() and len(r[j]) == digits and (fields is None or r[j] in fields) for r in rows)
        ]
        if columns and not any(all(op(int(r[j]), number) for r in rows) for j in columns):
            j = columns[-1]
            bad = next(" ".join(r) for r in rows if not op(int(r[j]), number))
            return f'the instruction says "{claim}", but the output line `{bad}` does not hold it'
        if not columns and fields is None:  # a filter whose fields shift (a path with a space): line by line
            shifted = next((" ".join(r) for r in rows if _breaks(r, op, number, digits)), None)
            if shifted is not None:
                return f'the instruction says "{claim}", but the output line `{shifted}` does not hold it'
    return None


def _plain_claims(instruction: str) -> Iterator[tuple[str, Callable[[int, int], bool], int, int]]:
    """Each plain comparison the instruction states, as (its text, the test, the number, the number's digits):
    ``status code less than 500``, from a sentence with no negation, removal or alternative."""
    for sentence in re.split(r"[.;\n]", instruction):
        lower = sentence.lower()
        if _NOT_A_PLAIN_CLAIM.search(lower.replace("or equal to", "")):
            continue
        for m in _CLAIM.finditer(lower):
            yield sentence[m.start() : m.end()], _CLAIM_OPS[m.group(1)], int(m.group(2)), len(m.group(2))


# A filter that keeps some of the lines holding its rule: a first few, the unique ones, a sample.
_SOME_LINES = re.compile(
    r"\b(?:first|last|top|bottom|head|tail|uniq\w*|distinct|duplicat\w*|limit\w*|sampl\w*|random\w*)\b"
)
_WORD = re.compile(r"[a-z0-9_]+")


def claim_gap(instruction: str, output: str, inputs: dict[str, str]) -> str | None:
    """Why a filter's output lacks an input line that holds the comparison the instruction states, or None: the
    other side of ``claim_violation``. Every output line is a line of one input; a plain claim (no negation,
    removal or alternative in its sentence) holds on exactly one whole-number column of every output line; an
    input line holds it too and the output lacks it; and no word of the instruction outside its mechanical hints
    is in every output line but not in that one (a second condition: ``admin``, ``GET``). Nor is it read where
    the instruction keeps only some such lines (the first, the unique ones). Five proposals of the
    hackable-share runs (265fe3a to 3558cbc) were such: "status code greater than 400" of a ``grep -E
    '40[0-9]'`` that left out the 500 lines (four), "less than 500" of a ``grep -E '200|300|400'`` that left out
    the 404 lines. One was accepted and calibrated too hard; two were rejected only after a blind solver's
    reproductions failed."""
    lines = normalized(output)
    rows = [ln.split() for ln in lines]
    texts = (normalized(text) for text in inputs.values())
    source = next((il for il in texts if lines and set(lines) <= set(il)), None)
    prose = "\n".join(ln for ln in instruction.splitlines() if not HINT_LINE.match(ln))
    if source is None or _SOME_LINES.search(prose.lower()):
        return None
    told = set(_WORD.findall(prose.lower()))
    common = set.intersection(*(set(_WORD.findall(ln.lower())) for ln in lines))
    width = min(len(r) for r in rows)
    for claim, op, number, digits in _plain_claims(prose):
        holds = [j for j in range(width) if all(_holds(r[j], op, number, digits) for r in rows)]
        if len(holds) != 1:
            continue
        for line in source:
            fields = line.split()
            if line in lines or len(fields) <= holds[0] or not _holds(fields[holds[0]], op, number, digits):
                continue
            if not (common - set(_WORD.findall(line.lower()))) & told:
                return f'the instruction says "{claim}", but the output lacks the input line `{line}`, which holds it'
    return None


def _holds(field: str, op: Callable[[int, int], bool], number: int, digits: int) -> bool:
    return field.isdigit() and len(field) == digits and op(int(field), number)


def _breaks(row: list[str], op: Callable[[int, int], bool], number: int, digits: int) -> bool:
    """Whether ``row`` has whole numbers of ``digits`` digits and none of them holds the claim."""
    values = [int(f) for f in row if f.isdigit() and len(f) == digits]
    return bool(values) and not any(op(v, number) for v in values)


def contradiction(instruction: str, output: str, inputs: dict[str, str], compare: str = "exact") -> str | None:
    """The first way the output contradicts what the instruction states: a comparison (``claim_violation``; and
    ``claim_gap``, an input line that holds it missing from a filter's output), an order
    (``orders.order_violation``), lines it says to remove (``removal_violation``), status codes it names
    (``value_violation``), an input line it says the output holds (``quote_violation``), the lines holding the
    one text it says to keep (``keep_violation``), two texts it says the kept lines hold or a text it says they
    lack (``sources.both_violation``, ``sources.lacking_violation``, of the input lines an output line comes
    from), a field it says it extracts or names of an output of whole lines (``sources.field_violation``), lines
    it says it keeps of an output of one field (``sources.lines_violation``), values it says appear exactly once
    in an input (``once_violation``) or a sort (``orders.sort_violation``; not where the tests compare
    ``sorted_lines``, which any order passes); None when none."""
    return (
        claim_violation(instruction, output, inputs)
        or claim_gap(instruction, output, inputs)
        or order_violation(instruction, output, inputs)
        or removal_violation(instruction, output, inputs)
        or value_violation(instruction, output, inputs)
        or quote_violation(instruction, output, inputs)
        or keep_violation(instruction, output, inputs)
        or both_violation(instruction, output, inputs)
        or lacking_violation(instruction, output, inputs)
        or field_violation(instruction, output, inputs)
        or lines_violation(instruction, output, inputs)
        or once_violation(instruction, output, inputs)
        or (sort_violation(instruction, output) if compare != "sorted_lines" else None)
    )


_STATUS_IS = re.compile(
    r"\bstatus(?: codes?)?\s+(?:is\s+|of\s+|equal to\s+|=+\s*)?(\d{3})"
    r"((?:\s*(?:,\s*(?:or\b|and\b)?|\bor\b|\band\b)\s*\d{3})*)\b"  # "400, 500, or 600" is one list
)
_COUNTED = re.compile(r"^\d+\s+")


def value_violation(instruction: str, output: str, inputs: dict[str, str]) -> str | None:
    """Why a line of the output has none of the status codes the instruction names, or None: a plain sentence
    (no negation, no removal) says "status code 400 or 500" (or "of 404", "is 200"), every output line is an
    input line (with a ``uniq -c`` count in front or not), and a line holds none of those codes as a field (yield
    series v16 A1 #11: "the status code is 400 or 500" of `grep -E '400|500'`, which kept a 200 line of size
    6400)."""
    known = {ln for text in inputs.values() for ln in normalized(text)}
    lines = [_COUNTED.sub("", ln) if ln not in known else ln for ln in normalized(output)]
    if not lines or not all(ln in known for ln in lines):
        return None
    for sentence in _SENTENCE.split(instruction.lower()):
        if _NOT.search(sentence) or _REMOVE.search(sentence) or _FILTER_OUT.search(sentence) or "except" in sentence:
            continue
        for m in _STATUS_IS.finditer(sentence):
            codes = {m.group(1), *re.findall(r"\d{3}", m.group(2))}
            bad = next((ln for ln in lines if not codes & set(ln.split())), None)
            if bad is not None:
                return f'the instruction says "{m.group(0)}", but the output line `{bad}` holds none of them'
    return None


_SAYS_HOLDS = re.compile(r"\b(?:start|begin|contain|include|hold|consist|read)s?\b|\bwill be\b|\bfollowed by\b")
_SHAPE = re.compile(r"\b(?:format|like|looks?|such as|e\.g\.|example|form|shape|similar)\b")
_BACKTICKED = re.compile(r"`([^`\n]{8,})`")


def quote_violation(instruction: str, output: str, inputs: dict[str, str]) -> str | None:
    """Why the output lacks an input line the instruction says it holds, or None: a plain sentence about the
    output (no negation, no removal, no word of format or example) says it starts with, holds or contains a
    quoted whole input line, and no output line holds that line (yield series v19 A1 #1: "The output file will
    start with the first line of the input file, which is `10.0.0.1 GET /index.html 200`", of a ``grep 500``
    that kept one other line)."""
    known = {ln for text in inputs.values() for ln in normalized(text)}
    lines = normalized(output)
    if not lines:
        return None
    for sentence in _SENTENCE.split(instruction):
        lower = sentence.lower()
        if not re.search(r"\b(?:output|result)\b", lower) or not _SAYS_HOLDS.search(lower):
            continue
        if _NOT.search(lower) or _REMOVE.search(lower) or _FILTER_OUT.search(sentence) or _SHAPE.search(lower):
            continue
        for q in _BACKTICKED.finditer(sentence):
            quoted = " ".join(q.group(1).split())
            if quoted in known and not any(quoted in ln for ln in lines):
                return f"the instruction says the output holds `{quoted}`, an input line it does not hold"
    return None


_KEEP_WORD = re.compile(r"\b(?:select\w*|keep\w*|extract\w*|contain\w*|includ\w*|retain\w*|only|match\w*)\b")
# A second condition, a count, a rewrite or a number: an instruction with one states more than which lines to keep.
_MORE_THAN_A_FILTER = re.compile(
    r"\b(?:or|but|except|unless|without|other|status|code|first|last|count\w*|number|sort\w*|uniq\w*|per|each"
    r"|replac\w*|field|column)\b|\d"
)


def keep_violation(instruction: str, output: str, inputs: dict[str, str]) -> str | None:
    """Why a filter's output is not the input lines that hold the one text the instruction quotes, or None.

    Read only from the plainest instructions: one quoted text (paths aside), a word of keeping (select, keep,
    contain, only, ...), and no negation, removal, comparison, number or word of a second condition anywhere;
    and only where every output line is an input line. Then an input line that holds the text (as quoted) and
    is missing from the output, or an output line without it (case aside), breaks it. In a flywheel round on
    265fe3a, "Select lines where the request path contains the word 'login'" of a ``grep "GET /login"`` left
    out `10.0.0.1 POST /login 500`: validated, reproduced by a blind solver's guess, then too hard for every
    solver that read it as written."""
    quoted = {t for q in _QUOTED.finditer(instruction) if (t := next(g for g in q.groups() if g)).strip()}
    quoted = {t for t in quoted if not t.startswith("/")}
    if len(quoted) != 1:
        return None
    (text,) = quoted
    bare = ABS_PATH.sub(" ", _QUOTED.sub(" ", instruction)).lower()
    if not _KEEP_WORD.search(bare) or _NOT.search(bare) or _REMOVE.search(bare) or _FILTER_OUT.search(instruction):
        return None
    if _CLAIM.search(bare) or _MORE_THAN_A_FILTER.search(bare):
        return None
    known = list(dict.fromkeys(ln for t in inputs.values() for ln in normalized(t)))
    lines = set(normalized(output))
    if not lines or not lines <= set(known):
        return None
    if missing := next((ln for ln in known if text in ln and ln not in lines), None):
        return f"the instruction keeps the lines with '{text}', but the output lacks the input line `{missing}`"
    if extra := next((ln for ln in sorted(lines) if text.lower() not in ln.lower()), None):
        return f"the instruction keeps the lines with '{text}', but the output line `{extra}` does not hold it"
    return None


_ONCE = re.compile(
    r"\b(?:appear(?:s|ing)?|occur(?:s|ring)?)\s+(?:exactly|only|just)\s+once\s+in\s+(the\s+(?:input|file|log)\b|`?/[^\s`]+)"
)


def once_violation(instruction: str, output: str, inputs: dict[str, str]) -> str | None:
    """Why an output line is a value that appears more than once in the input the instruction says it appears
    exactly once in, or None: a sentence with no negation says "(the values) that appear exactly (only, just)
    once in" an input (its path, or "the input" of a task with one), and an output line, as a whole input line
    or as a value standing alone in one (`port = 8080`), occurs there more than once. The output's own "each
    line appears once" is a de-duplication and is not read. In a hackable-share round on ad011ff, "the port
    numbers that appear exactly once in /app/data/app.conf" was said of a ``sort -u`` that kept 8080, which
    the file held four times: accepted, and calibrated learnable at a pass rate of 0.5."""
    lines = normalized(output)
    for sentence in _SENTENCE.split(instruction):
        m = _ONCE.search(sentence)
        if m is None or _NOT.search(sentence.lower()):
            continue
        where = m.group(1).strip("`").rstrip(".,;:")
        text = inputs.get(where) if where.startswith("/") else next(iter(inputs.values())) if len(inputs) == 1 else None
        if text is None:
            continue
        held = normalized(text)
        for line in lines:
            seen = held.count(line) if line in held else len(re.findall(rf"(?<![\w.]){re.escape(line)}(?![\w.])", text))
            if seen > 1:
                said = " ".join(m.group(0).split()).rstrip(".,;:")
                return f'the instruction says "{said}", but the output line `{line}` appears {seen} times there'
    return None


_REMOVE = re.compile(
    r"\b(?:remov(?:e|es|ing)|exclud(?:e|es|ing)|drop(?:s|ping)?|discard(?:s|ing)?|delet(?:e|es|ing)|omit(?:s|ting)?)\b"
)
# A title writes it "Filter Out Lines Containing 'system'" (demo series 9c79f5b run 1, of a grep that kept them).
_FILTER_OUT = re.compile(r"\b([Ff])ilter(s|ing)? [Oo]ut\b")
# A sentence with one of these words may name the lines to keep, or an alternative: no direction is read from it.
_KEEPS = re.compile(r"\b(?:nor|never|without|except|unless|other|keep\w*|only|retain\w*|select\w*|extract\w*|or)\b")
_NOT = re.compile(r"\b(?:not|no)\b|n't\b")
_CLAUSE_END = re.compile(r"\band\b|\bthen\b|\bbut\b|,")
_QUOTED = re.compile(r"(?<![A-Za-z])'([^'\n]{2,})'(?![A-Za-z])|\"([^\"\n]{2,})\"|`([^`\n]{2,})`")
# Values a field equals, "the status is 400 or 500" (a demo run on d9a345e accepted "filter out lines where the
# status is 400 or 500" of an awk that kept them): their "or" is no alternative of a rule.
_VALUES = re.compile(r"\b(?:is|are|of|equals?|equal to|==?)\s+(\d+(?:(?:\s*,\s*|\s*,?\s+or\s+)\d+)*)\b(?!\.\d|%)")


def _every_line_matches(clause: str, lines: list[str], inputs: dict[str, str]) -> tuple[bool, str] | None:
    """Whether every output line matches what ``clause`` names (its first comparison ``status >= 400``, else the
    values a field equals, ``status is 400 or 500``, else its first quoted text that is no file's path; a request
    path an input line holds, `/index.html`, is a text): (True, the predicate) when every line does (holds one of
    the values), (False, ...) when none does; None when some do, or the sentence names nothing to test. A demo
    run on ad011ff accepted "It filters out lines containing the path `/index.html`" of a ``grep '/index.html'``
    that kept them."""
    lower = clause.lower()
    if m := _CLAIM.search(lower):
        op, number, digits = _CLAIM_OPS[m.group(1)], int(m.group(2)), len(m.group(2))
        known = {ln for text in inputs.values() for ln in normalized(text)}
        fields = None if all(ln in known for ln in lines) else {f for ln in known for f in ln.split()}
        rows = [ln.split() for ln in lines]
        width = min(len(r) for r in rows)  # a field counted from the start, or from the end (a path with a space)
        columns = [
            [op(int(r[j]), number) for r in rows]
            for j in [*range(width), *range(-width, 0)]
            if all(r[j].isdigit() and len(r[j]) == digits and (fields is None or r[j] in fields) for r in rows)
        ]
        claim = clause[m.start() : m.end()]
        if any(all(c) for c in columns):
            return True, claim
        return (False, claim) if columns and not any(any(c) for c in columns) else None
    if m := _VALUES.search(lower):
        values = re.findall(r"\d+", m.group(1))
        hits = sum(any(re.search(rf"(?<![\d.]){v}(?![\d.])", ln) for v in values) for ln in lines)
        return (True, m.group(0)) if hits == len(lines) else (False, m.group(0)) if hits == 0 else None
    held = [ln for text in inputs.values() for ln in normalized(text)]
    for q in _QUOTED.finditer(clause):
        text = next(g for g in q.groups() if g)
        if not text.strip() or (text.startswith("/") and not any(text in ln for ln in held)):
            continue  # a path no input line holds names a file, not lines
        hits = sum(text in ln for ln in lines)
        return (True, text) if hits == len(lines) else (False, text) if hits == 0 else None
    return None


def _named_lines(sentence: str, start: int, lines: list[str], inputs: dict[str, str]) -> tuple[bool, str] | None:
    """``_every_line_matches`` for the clause of ``sentence`` that starts at ``start`` (up to its next "and",
    "then", "but" or comma), read with its one negation ("lines that do not contain 'GET'": the answer flipped),
    and that clause; None for a sentence with a word of keeping or an alternative (but the "or" of a list of
    values, ``_VALUES``), or a clause with more than one negation."""
    if _KEEPS.search(_VALUES.sub(lambda v: v.group(0).replace(" or ", ", "), sentence.lower())):
        return None
    clause = _CLAUSE_END.split(sentence[start:])[0]
    negations = list(_NOT.finditer(clause.lower()))
    if len(negations) > 1:
        return None
    found = _every_line_matches(clause, lines, inputs)
    if found is None:
        return None
    return (found[0] != bool(negations)), " ".join(clause.split()).rstrip(".;!?")


def removal_violation(instruction: str, output: str, inputs: dict[str, str]) -> str | None:
    """Why the output keeps what the instruction says to remove, or None: a sentence that says to remove,
    exclude, drop, discard, delete or omit the lines it names (a comparison, or a quoted text), with no
    negation and no word of keeping in it, while every output line is such a line."""
    lines = normalized(output)
    if not lines:
        return None
    for sentence in _SENTENCE.split(instruction):
        lower = sentence.lower()
        verb = _REMOVE.search(lower)
        if verb is None:
            continue
        found = _named_lines(sentence, verb.end(), lines, inputs)
        if found is not None and found[0]:
            return (
                f'the instruction says to {verb.group(0)} "{found[1]}", but every output line is one of them '
                f"(`{lines[0]}`)"
            )
    return None


def with_direction(instruction: str, output: str, inputs: dict[str, str]) -> str:
    """``instruction`` with each "filter out" that the output settles made plain: "keep only" when every output
    line is one of the lines it names, "remove" when none is (small models write "filter out lines with status
    >= 400" for a ``grep`` that keeps them, and blind solvers read it both ways: yield series v16 #8). A
    sentence with a negation or a word of keeping, or whose lines the output does not settle, stays as it is."""
    lines = normalized(output)
    if not lines:
        return instruction
    parts = re.split(r"((?<=[.;!?])\s+|\n)", instruction)
    for i, sentence in enumerate(parts):
        m = _FILTER_OUT.search(sentence)
        if m is None:
            continue
        found = _named_lines(sentence, m.end(), lines, inputs)
        if found is None:
            continue
        f, ending = m.group(1), m.group(2) or ""
        if found[0]:
            word = {"": "eep only", "s": "eeps only", "ing": "eeping only"}[ending]
            first = "K" if f == "F" else "k"
        else:
            word = {"": "emove", "s": "emoves", "ing": "emoving"}[ending]
            first = "R" if f == "F" else "r"
        parts[i] = sentence[: m.start()] + first + word + sentence[m.end() :]
    return "".join(parts)
