"""Claims about the input lines an output line comes from, and the part of them it is. A key extraction prints a
field of the lines it keeps, so "keep only the lines that do not contain 'debug'" is said of the conf's lines, not
of the keys: the key ``log_level`` of ``log_level = debug`` breaks it, though the word ``debug`` is nowhere in the
output. And an instruction that says it extracts a field is broken by an output of whole lines."""

from __future__ import annotations

import re

from autoenvscaling.roles.proposer.staged.grading import normalized
from autoenvscaling.roles.proposer.staged.references import ABS_PATH

# "lines that do not contain the word 'debug'": the lines a sentence keeps, named by a text they lack.
_LACKING = re.compile(
    r"\b(?:lines?|rows?|entries)\s+(?:that|which|where)?\s*(?:(?:do|does)\s+not|don't|doesn't)\s+"
    r"(?:contain|include|hold|have)\s+(?:the\s+)?(?:(?:word|string|substring|text|value)\s+)?"
    r"(?:'([^'\n]{2,})'|\"([^\"\n]{2,})\"|`([^`\n]{2,})`)",
    re.IGNORECASE,
)
# A sentence with one of these may say what to drop ("remove the lines that do not contain 'GET'" keeps them),
# or an alternative: nothing is read from it.
_TURNS = re.compile(
    r"\b(?:remov\w*|exclud\w*|drop\w*|discard\w*|delet\w*|omit\w*|filter\w*|skip\w*|ignor\w*|except|unless|or|nor"
    r"|never|without)\b",
    re.IGNORECASE,
)
# "extracts the first column", "print the 2nd field": the output is one field of each line it keeps.
_ONE_FIELD = re.compile(
    r"\b(?:extract|print|output|list|write|return|show)(?:s|ed|ing)?\s+(?:only\s+)?the\s+"
    r"(?:first|second|third|fourth|fifth|sixth|seventh|last|\d+(?:st|nd|rd|th))\s+(?:column|field)\b",
    re.IGNORECASE,
)
# "select the keys of all settings", "the sorted list of usernames is written": the output is the field a plural
# names. Only the starters' field names that name no line ("settings", "users" and "requests" name lines), and
# not one of several ("the keys and values" are whole lines).
_FIELDS = r"(?:keys|values|user\s?names|names|ip\s+addresses|status\s+codes|methods|shells|uids)"
_LISTED = r"(?:(?:sorted|unique|distinct|filtered)\s+)?(?:list\s+of\s+)?"
_NAMED_FIELD = re.compile(
    r"(?:\b(?:select|extract|print|list|output|write|return|show|keep|contain|include)(?:s|ed|ing)?\s+"
    rf"(?:only\s+)?(?:all\s+)?(?:of\s+)?the\s+{_LISTED}{_FIELDS}"
    rf"|\bthe\s+{_LISTED}{_FIELDS}\s+(?:is|are)\s+(?:then\s+)?(?:written|saved|stored|printed|listed|output))\b"
    r"(?!\s*(?:,|and\b|&|with\b|together\b))",
    re.IGNORECASE,
)
_LINE_WORD = re.compile(r"\b(?:lines?|rows?|entr(?:y|ies)|records?)\b", re.IGNORECASE)
_NOT = re.compile(r"\b(?:not|no|never)\b|n't\b", re.IGNORECASE)
# The lines ``text.py`` adds to an instruction mechanically (the input, order and format hints): no rule in them.
HINT_LINE = re.compile(r"^(?:A line of \S+|The lines of \S+ keep|/\S+ holds) ")
# "Keep only lines where ...", "write these lines", "the selected lines": a sentence that says the output is lines.
_SAYS_LINES = re.compile(
    r"\b(?:keep|select|extract|print|write|output|return|save|cop(?:y|ie))\w*\s+(?:only\s+)?(?:all\s+)?"
    r"(?:(?:the|those|these|its|their)\s+)?(?:(?:matching|selected|filtered|remaining|kept)\s+)?lines\b"
    r"|\b(?:the\s+)?(?:matching|selected|filtered|remaining|kept)\s+lines\s+(?:\w+\s+){0,2}?"
    r"(?:written|saved|stored|printed|output)\b",
    re.IGNORECASE,
)
# "print the status code", "save the usernames", "write their IP addresses": a sentence that says what part of a
# line the output holds (up to two words between the article and the part, none of them "line").
_PART = (
    r"(?:codes?|(?:user)?names?|keys?|values?|ips?|address(?:es)?|fields?|columns?|methods?|paths?|shells?|uids?"
    r"|ids?|numbers?|words?|status(?:es)?|dates?|regions?|products?|units|counts?|totals?|sums?|hosts?|ports?"
    r"|settings?|entr(?:y|ies)|parts?|items?)\b"
)
_SAYS_PART = re.compile(
    r"\b(?:print|write|save|output|list|extract|return|show|keep|select|contain|hold|includ|giv|report|record)\w*"
    rf"\s+(?:only\s+)?(?:(?:the|their|its|each|every|all|just|one)\s+){{0,3}}(?:(?!lines?\b)[\w-]+\s+){{0,2}}?{_PART}"
    rf"|\b(?:each|every|one)\s+(?:(?!lines?\b)[\w-]+\s+){{0,2}}?{_PART}",
    re.IGNORECASE,
)
# The sentences of an instruction (claims.py splits them alike).
SENTENCE = re.compile(r"(?<=[.;!?])\s+|\n")
_FIELD_SEP = re.compile(r"\s*[=,:;|]\s*|\s+")


def source_lines(line: str, inputs: dict[str, str]) -> list[str]:
    """The input lines ``line`` comes from: those equal to it (a filter's), else those that hold it as a whole
    field (a key extraction's: ``log_level`` of ``log_level = debug``, the fields split at blanks and at
    ``= , : ; |``); none for a line made of something else (a count, a sum)."""
    held = [ln for text in inputs.values() for ln in normalized(text)]
    if line in held:
        return [line]
    return [ln for ln in held if line in _FIELD_SEP.split(ln)]


def lacking_violation(instruction: str, output: str, inputs: dict[str, str]) -> str | None:
    """Why the output comes from a line that holds the text the instruction says its lines lack, or None: a
    sentence with no removal, "filter", exception or alternative in it says "lines that do not contain 'X'",
    and an output line comes only from input lines that hold X (``source_lines``). Two accepted environments of
    the hackable-share runs were such, both key extractions of the same conf: "Keep only the lines that do not
    contain the word 'debug'" where the tests want ``log_level``, the key of ``log_level = debug`` (91f0ca8, the
    script's ``grep -v debug`` ran on the keys), and "To keep only all lines that do not contain the word 'debug'"
    of an awk that printed that key alone."""
    lines = normalized(output)
    for sentence in SENTENCE.split(instruction):
        m = _LACKING.search(sentence)
        if m is None or _TURNS.search(sentence):
            continue
        text = next(g for g in m.groups() if g)
        for line in lines:
            sources = source_lines(line, inputs)
            if sources and all(text in src for src in sources):
                said = " ".join(m.group(0).split())
                where = "holds it" if sources == [line] else f"comes from the input line `{sources[0]}`, which holds it"
                return f'the instruction keeps the "{said}", but the output line `{line}` {where}'
    return None


# "lines containing 'debug' and 'log_file'": the lines a sentence keeps, named by two texts each of them holds.
_BOTH = re.compile(
    r"\b(?:lines?|rows?|entries|settings)\s+(?:that\s+|which\s+|where\s+)?(?:contain|include|hold|have|with)\w*\s+"
    r"(?:both\s+)?(?:the\s+)?(?:(?:words|strings|texts|values)\s+)?"
    r"(?:'([^'\n]{2,})'|\"([^\"\n]{2,})\"|`([^`\n]{2,})`)\s+and\s+(?:the\s+)?(?:(?:word|string|text|value)\s+)?"
    r"(?:'([^'\n]{2,})'|\"([^\"\n]{2,})\"|`([^`\n]{2,})`)",
    re.IGNORECASE,
)


def both_violation(instruction: str, output: str, inputs: dict[str, str]) -> str | None:
    """Why an output line comes from input lines that lack one of two texts the instruction says its lines hold,
    or None: a sentence with no negation, removal, "filter", exception or alternative in it says "lines containing
    'X' and 'Y'", and an output line comes only from input lines (``source_lines``) without X or without Y. Read
    as both texts in each line; a small model writes it of an alternation: "select lines containing 'debug' and
    'log_file'" of a ``grep -E 'debug|log_file'`` that kept either (demo series on 6f2b879, learnable), and
    "Select lines containing 'user' and 'shell' from /app/data/passwd and save the result to
    /app/filtered_users.txt" of a ``grep -E 'user|shell'`` (6e046e6, too hard)."""
    lines = normalized(output)
    for sentence in SENTENCE.split(instruction):
        words = ABS_PATH.sub(" ", sentence)  # a path's words turn nothing: `/app/filtered_users.txt`
        if _NOT.search(words) or _TURNS.search(words):
            continue
        for m in _BOTH.finditer(sentence):
            first, second = next(g for g in m.groups()[:3] if g), next(g for g in m.groups()[3:] if g)
            for line in lines:
                sources = source_lines(line, inputs)
                if sources and not any(first in src and second in src for src in sources):
                    said = " ".join(m.group(0).split())
                    return f'the instruction keeps the "{said}", but the output line `{line}` lacks one of them'
    return None


def lines_violation(instruction: str, output: str, inputs: dict[str, str]) -> str | None:
    """Why the output is one field of the input lines where the instruction says it is the lines, or None: every
    output line is one word that is a whole field of an input line of more than one field and no whole input
    line; a sentence of the instruction (its mechanical hints left out) says the output is lines ("Keep only
    lines where ...", "write these lines", "the selected lines ... written"), with no negation before that; and
    no sentence says which part of a line it holds ("print the status code", "save the usernames", "each status
    code on a separate line"). The other
    side of ``field_violation``. A hackable-share round on 96bef81 accepted "Keep only lines where the status
    code is not less than 400" of an ``awk '$4 >= 400 {print $4}'`` (too hard; only the format hint's `404`
    showed what the tests want), and 4ea5ba7 proposed "select only the lines where the status code is greater than
    399" of the matching lines' addresses (rejected only after its blind reproductions failed)."""
    lines = normalized(output)
    if not lines or any(len(ln.split()) != 1 for ln in lines):
        return None
    for line in lines:
        sources = source_lines(line, inputs)
        if not sources or sources == [line] or all(len(_FIELD_SEP.split(src)) < 2 for src in sources):
            return None
    prose = [s for ln in instruction.splitlines() if not HINT_LINE.match(ln) for s in SENTENCE.split(ln)]
    if any(_SAYS_PART.search(sentence) for sentence in prose):
        return None
    for sentence in prose:
        m = _SAYS_LINES.search(sentence)
        if m is not None and not _NOT.search(sentence, 0, m.start()):
            said = " ".join(m.group(0).split())
            return f'the instruction says "{said}", but the output holds one field of them (`{lines[0]}`)'
    return None


def _whole_lines(output: str, inputs: dict[str, str]) -> list[str]:
    """The output's lines when every one is a whole input line of more than one field, else none."""
    lines = normalized(output)
    known = {ln for text in inputs.values() for ln in normalized(text)}
    return lines if all(ln in known and len(_FIELD_SEP.split(ln)) > 1 for ln in lines) else []


def field_violation(instruction: str, output: str, inputs: dict[str, str]) -> str | None:
    """Why the output is whole lines where the instruction says it is one field of them, or None: every output
    line is a whole input line of more than one field, and a sentence with no negation says it extracts (prints,
    lists, ...) the first (second, ..., last, 3rd) column or field, or a sentence that says nothing of lines
    (rows, entries, records) and has no negation before it names the field it selects (extracts, lists, ...) by
    a plural ("the keys", "the usernames", "the IP addresses"; not one of several). Hackable-share rounds
    accepted three such, two too hard and one learnable: "The script extracts the first column of the input file
    (username) where the seventh column (shell) is `/bin/bash`" of an awk that printed the whole /bin/bash lines
    (91f0ca8), "The sorted list of usernames is written" of those lines sorted and "select the keys of all
    settings that start with 'service'" of the whole `service = ...` lines (87e9130)."""
    lines = _whole_lines(output, inputs)
    if not lines:
        return None
    for sentence in SENTENCE.split(instruction):
        if (m := _field_claim(sentence)) is not None:
            said = " ".join(m.group(0).split())
            return f'the instruction says it "{said}", but the output holds whole input lines (`{lines[0]}`)'
    return None


def _field_claim(sentence: str) -> re.Match[str] | None:
    """Where a sentence says the output is one field: a numbered column or field in a sentence with no negation,
    or a field named by a plural in a sentence that says nothing of lines, with no negation before it."""
    if (m := _ONE_FIELD.search(sentence)) is not None and not _NOT.search(sentence):
        return m
    if _LINE_WORD.search(sentence) or (m := _NAMED_FIELD.search(sentence)) is None:
        return None
    return None if _NOT.search(sentence, 0, m.start()) else m
