"""What gives a task away in its instruction: the recorded output copied into it (and the cut that removes
copies a rule stands without), or a command of the solution."""

from __future__ import annotations

import re

from autoenvscaling.roles.proposer.staged.grading import normalized
from autoenvscaling.roles.proposer.staged.text import looks_like_prose


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
