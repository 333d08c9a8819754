"""What gives a task away in its instruction: the recorded output copied into it (and the cut that removes
copies a rule stands without), a command of the solution, or the programs it runs named as what to use (and
the cut that removes the sentences that say how)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from autoenvscaling.roles.proposer.staged.grading import normalized
from autoenvscaling.roles.proposer.staged.text import looks_like_prose
from autoenvscaling.validate.exploits import instruction_answers


def quoted_output_lines(instruction: str, outputs: dict[str, str]) -> dict[str, list[str]]:
    """Per output file, its distinct lines (8+ characters) that appear in the instruction verbatim."""
    words = " ".join(instruction.split())
    quoted = {}
    for path, text in outputs.items():
        lines = [ln for ln in dict.fromkeys(normalized(text)) if len(ln) >= 8 and ln in words]
        if lines:
            quoted[path] = lines
    return quoted


def answer_in_instruction(instruction: str, outputs: dict[str, str]) -> str | None:
    """Why the instruction gives the recorded answer away, or None: the whole output (8+ characters), or two
    or more of its distinct lines (8+ characters each), appear in it verbatim. One line quoted however often the
    output repeats it is not a leak: a filter's pattern quoted in the instruction can be the whole of each line
    (``grep -o``), and the answer is still how many there are."""
    words = " ".join(instruction.split())
    quoted = quoted_output_lines(instruction, outputs)
    for path, text in outputs.items():
        whole = " ".join(" ".join(normalized(text)).split())
        if len(whole) >= 8 and whole in words:
            return f"the instruction contains the whole expected content of {path}"
        if len(quoted.get(path, [])) >= 2:
            return f"the instruction quotes lines of the expected {path}"
    return None


_TOKEN = re.compile(r"[^\s`'\"(),;\[\]{}<>]+")


def restated_field(instruction: str, inputs: dict[str, str]) -> str | None:
    """Why the instruction restates an input line by line, or None: one field's values over every line of an
    input (3 to 64 lines, 2+ distinct values; a CSV's header row may be left out) appear in that order among the
    instruction's words. Such an instruction carries the input, so a filter's or count's answer is worked out
    from it alone (a flywheel round on e5c6de5 accepted "The first line of the input file contains a status code
    (200). The second line contains a status code (404). ...", and the tests wanted the codes above 400)."""
    words = [w.rstrip(".:!?") for w in _TOKEN.findall(instruction)]
    for path, text in inputs.items():
        lines = [ln for ln in text.splitlines() if ln.strip()]
        if not 3 <= len(lines) <= 64:
            continue
        csv = all("," in ln for ln in lines)
        rows = [[f.strip() for f in ln.split(",")] if csv else ln.split() for ln in lines]
        for k in range(min(len(row) for row in rows)):
            column = [row[k] for row in rows]
            for values in (column, column[1:]) if csv else (column,):  # a CSV's header row may go unsaid
                if len(values) >= 3 and len(set(values)) >= 2 and _in_order(values, words):
                    shown = ", ".join(values[:5]) + (", ..." if len(values) > 5 else "")
                    return f"the instruction restates field {k + 1} of each line of {path} ({shown})"
    return None


def _in_order(values: list[str], words: list[str]) -> bool:
    """Whether ``values`` appear in order (not necessarily next to each other) among ``words``."""
    rest = iter(words)
    return all(any(w == v for w in rest) for v in values)


def gives_answer(instruction: str, outputs: dict[str, str]) -> bool:
    """Whether a string of ``instruction`` (a code span, quoted string, line, ...) holds a whole output: what the
    probes' ``hackable:instruction-answer`` writes and runs the tests on."""
    return any(instruction_answers(instruction, text) for text in outputs.values())


def with_hints(
    instruction: str, hints: Sequence[tuple[str, Callable[[str], str]]], outputs: dict[str, str]
) -> tuple[str, list[str]]:
    """``instruction`` with each named hint applied in turn, except one after which a string of the instruction
    holds a whole output that none did before; returns the text and the names of the hints left out."""
    text, left_out = instruction, []
    for name, hint in hints:
        hinted = hint(text)
        if gives_answer(hinted, outputs) and not gives_answer(text, outputs):
            left_out.append(name)
            continue
        text = hinted
    return text, left_out


_EXAMPLE = re.compile(r"^\W*(?:for\s+)?(?:an?\s+)?(?:examples?|e\.g\.)\W*(?:\w+\W*)?$", re.IGNORECASE)


def without_quoted_output(instruction: str, outputs: dict[str, str]) -> str | None:
    """The instruction without the lines that copy output lines (and the example block they stand in, from its
    ``Example`` heading on, and a tail that is no prose), when what is left is still prose and gives nothing
    away; else None. A small model describing a script often ends with an example of the output it saw (a
    recorded demo run: an ``**Example**`` block under a rule that was right); the rule stands without it."""
    quoted = [ln for lines in quoted_output_lines(instruction, outputs).values() for ln in lines]
    if not quoted:
        return None
    rows = instruction.splitlines()
    drop = [i for i, row in enumerate(rows) if any(q in " ".join(row.split()) for q in quoted)]
    if not drop:
        return None  # the copies run across line breaks: nothing to cut line by line
    start = next((i for i in range(drop[0] - 1, -1, -1) if _EXAMPLE.match(rows[i].strip())), drop[0])
    tail = rows[drop[-1] + 1 :]
    end = drop[-1] if looks_like_prose("\n".join(tail)) else len(rows)  # a cut-off fragment goes with the example
    kept = [row for i, row in enumerate(rows) if not (start <= i <= end or i in drop)]
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(kept)).strip()
    if not looks_like_prose(text) or answer_in_instruction(text, outputs) or quoted_output_lines(text, outputs):
        return None
    return text


_REDIRECT_TAIL = re.compile(r"\s*(?:>>?|\|\s*tee(?:\s+-a)?)\s*\S+\s*$")


_META = re.compile(r"\bsolve\.sh\b|\bthe two tasks\b|\bboth tasks\b|\bparent task\b", re.IGNORECASE)


def solution_in_instruction(instruction: str, solve_sh: str) -> str | None:
    """Why the instruction gives the solution away, or None: a command of ``solve_sh`` (a line, or one stage of
    a pipeline, 20+ characters, its output redirect dropped) appears in it verbatim; or it speaks of the workshop
    (``solve.sh``, "the two tasks" a combine started from), which a solver never sees (yield series v13-v15: 4
    of 20 recorded instructions named ``solve.sh``, and blind solvers ran ``./solve.sh``)."""
    if meta := _META.search(instruction):
        return f"the instruction speaks of `{meta.group(0)}`, which a solver never sees"
    words = " ".join(instruction.split())
    for line in solve_sh.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", "set ", "export ")):
            continue
        command = " ".join(_REDIRECT_TAIL.sub("", line).split())
        for piece in [command, *(" ".join(p.split()) for p in command.split("|"))]:
            if len(piece) >= 20 and " " in piece and piece in words:
                return f"the instruction contains the solution's command `{piece[:80]}`"
        for m in _PROGRAM.finditer(line):  # an awk/sed/jq program: code, not a description of the rule
            program = " ".join(m.group(1).split())
            if len(program) >= 8 and _CODE_CHARS.search(program) and program in words:
                return f"the instruction contains the solution's program `{program[:80]}`"
    return None


_PROGRAM = re.compile(r"'([^']+)'")
_CODE_CHARS = re.compile(r"[$\\{}\[\]|;]|\bprint\b")


# Programs whose names are no English words: named anywhere, they say how the output is made.
_TOOLS = frozenset({"grep", "egrep", "fgrep", "zgrep", "awk", "gawk", "sed", "uniq", "zcat", "gunzip", "jq", "xargs"})
# Programs whose names are also words ("sort the lines", "the head of the file"): only as code or as a command.
_WORD_TOOLS = frozenset({"sort", "head", "tail", "cut", "join", "paste", "comm", "find", "tee", "cat", "tr", "wc"})
_COMMAND_START = re.compile(r"(?:^|\||;|&&|\$\(|\(|\bthen\b|\bdo\b|\belse\b)\s*(?:sudo\s+)?([A-Za-z][\w.+-]*)")
_OPTION = re.compile(r"`(--?[A-Za-z][\w-]*)`")
# How-to words that name no program: a redirect, a text editor, steps to follow (v20 A1 #6 and #7: "follow these
# steps: 1. Open the file `/app/data/access.log` in a text editor.", and the blind solver ran `nano`), "this
# script" or "this command" that the solver never sees (v20 A1 #19, a recorded `make demo` run of b546ada).
_HOW = re.compile(
    r"\bredirect(?:s|ed|ing)?\b|\bpipe (?:it|them|the output)\b|\btext editor\b|\bfollow(?:ing)? (?:these|the) steps\b"
    r"|\bstep[- ]by[- ]step\b|\bthe command (?:should|will|would) look\b|\bnavigate to\b|\bopen the file\b"
    r"|\bthis (?:script|command)\b",
    re.IGNORECASE,
)


def _programs(solve_sh: str) -> set[str]:
    """The programs ``solve_sh`` runs: the first word of each command of each line."""
    found: set[str] = set()
    for line in solve_sh.splitlines():
        line = line.split(" #")[0].strip()
        if line and not line.startswith("#"):
            found.update(m.group(1) for m in _COMMAND_START.finditer(_PROGRAM.sub("''", line)))
    return found


def commands_named(instruction: str, solve_sh: str) -> list[str]:
    """The programs of ``solve_sh`` (and their options) that ``instruction`` names: how to make the output, where
    an instruction says what the output holds. ``grep`` or ``awk`` anywhere, ``sort`` as code (`` `sort -n` ``) or
    as "the sort command"; a quoted option the script passes (`` `-h` ``); "redirect the output" (yield series v13
    #12, v16 #18, v19 #1: three of the eight instructions that were recorded and reproduced named the script's
    ``grep`` or ``awk``, "Use the `grep` command to search for lines containing the string "500"", and the blind
    solver followed the recipe)."""
    named = []
    for program in sorted(_programs(solve_sh)):
        word = re.escape(program)
        if program in _TOOLS:
            pattern = rf"(?<![\w/.$-]){word}(?![\w-])"
        elif program in _WORD_TOOLS:
            pattern = (
                rf"`{word}(?:\s[^`]*)?`|\b{word}\s+(?:command|utility|tool|program)\b"
                rf"|\b(?:use|using|with|run|call)\s+(?:the\s+)?{word}\b"
            )
        else:
            continue
        if re.search(pattern, instruction):
            named.append(program)
    words = set(solve_sh.split())
    named += [m.group(1) for m in _OPTION.finditer(instruction) if m.group(1) in words and m.group(1) not in named]
    if how := _HOW.search(instruction):
        named.append(how.group(0).lower())
    return named


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")
_MARKER = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_HEADING = re.compile(r"^\s*(?:#+\s.*|\*\*[^*]+\*\*:?|[A-Z][\w ]{0,40}:)\s*$")


def without_commands(instruction: str, solve_sh: str) -> str | None:
    """The instruction without its sentences that name the solution's programs (``commands_named``), and without
    the headings whose rows were all cut or that head nothing, when what is left is prose that names none; else
    None."""
    if not commands_named(instruction, solve_sh):
        return None
    rows: list[str | None] = []  # None: a row cut whole
    for row in instruction.splitlines():
        if not commands_named(row, solve_sh):
            rows.append(row)
            continue
        marker = _MARKER.match(row)
        lead = marker.group(0) if marker else ""
        kept = [s for s in _SENTENCE_END.split(row[len(lead) :]) if not commands_named(s, solve_sh)]
        rows.append(lead + " ".join(kept) if kept else None)
    left = [row for i, row in enumerate(rows) if row is not None and not _heads_nothing(row, rows[i + 1 :])]
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(left)).strip()
    if not looks_like_prose(text) or commands_named(text, solve_sh):
        return None
    return text


def _heads_nothing(row: str, below: list[str | None]) -> bool:
    """Whether ``row`` is a heading whose section (up to a blank row after its text, or the next heading) was cut
    whole, or that the next heading or the end follows."""
    if not _HEADING.match(row):
        return False
    section: list[str | None] = []
    for item in below:
        if item is not None and (_HEADING.match(item) or (not item.strip() and section)):
            break
        if item is None or item.strip():
            section.append(item)
    return all(item is None for item in section)


def without_cut_tail(text: str) -> str:
    """A reply cut at its token cap, without the unfinished end: an unclosed code fence from its start, the last
    line's words after its last full sentence (the whole line when it has none), and the headings and lead-ins
    ("... as follows:") the cut left with nothing under them (yield series v13 #12 ended on a list item "4",
    v16 #18 on "The `($4 >=")."""
    if text.count("```") % 2:
        text = text[: text.rindex("```")]
    rows = text.rstrip().splitlines()
    if rows and not rows[-1].rstrip().endswith((".", "!", "?", "`", '"', ")")):
        last = rows.pop()
        ends = [m.end() for m in re.finditer(r"[.!?](?=\s|$)", last)]
        if ends and not _MARKER.fullmatch(last[: ends[-1]]):
            rows.append(last[: ends[-1]])
    while rows and (not rows[-1].strip() or _HEADING.match(rows[-1]) or rows[-1].rstrip().endswith(":")):
        rows.pop()
    return "\n".join(rows).strip()
