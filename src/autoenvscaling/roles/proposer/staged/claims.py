"""Checks of an instruction against what the draft really is, beside the text rules of ``text.py``: a filter's
recorded output that breaks a comparison the instruction states (``status code less than 500``, and a recorded
line holds 500), and files the instruction names that the image does not hold."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from autoenvscaling.roles.proposer.staged.grading import normalized
from autoenvscaling.roles.proposer.staged.text import written_paths

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
    """Why the output of a filter contradicts a comparison the instruction states, or None.

    Only when every output line is a line of an input (a filter), for each plain claim (``status code less than
    500``: no negation and no "or" in its sentence) of a number with as many digits as the values of some whole
    number field of the output's lines: when no such field holds the claim on every line, the output contradicts
    it (yield series v13 #0: "status code less than 500", and the recorded lines held a 500). A claim that no
    field can be compared with (a count, a size) is not checked."""
    lines = [ln for ln in normalized(output) if ln]
    known = {ln for text in inputs.values() for ln in normalized(text)}
    if not lines or not all(ln in known for ln in lines):
        return None
    rows = [ln.split() for ln in lines]
    width = min(len(r) for r in rows)
    for sentence in re.split(r"[.;\n]", instruction):
        lower = sentence.lower()
        if _NOT_A_PLAIN_CLAIM.search(lower.replace("or equal to", "")):
            continue
        for m in _CLAIM.finditer(lower):
            op, number = _CLAIM_OPS[m.group(1)], int(m.group(2))
            fields = [j for j in range(width) if all(r[j].isdigit() and len(r[j]) == len(m.group(2)) for r in rows)]
            if fields and not any(all(op(int(r[j]), number) for r in rows) for j in fields):
                j = fields[-1]
                bad = next(" ".join(r) for r in rows if not op(int(r[j]), number))
                claim = sentence[m.start() : m.end()]
                return f'the instruction says "{claim}", but the output line `{bad}` does not hold it'
    return None


_NAMED_PATH = re.compile(r"(?<![\w./$-])(/(?:[\w.@+-]+/)*[\w.@+-]+)")


def phantom_paths(
    instruction: str, inputs: Iterable[str], output: str, solve_sh: str, dockerfile: str = ""
) -> list[str]:
    """The paths the instruction names under the top directory of an input or of the output (``/app``) that are
    no input, no output, no directory of either and nothing ``solve_sh`` writes: files the image does not hold
    (yield series v13 #9 named ``/app/data/access.log.gz`` beside the one real log, and every blind attempt spent
    its turns trying to decompress it). A path whose file name ``dockerfile`` mentions is left out: a RUN line
    may make it (``truncate -s 2M backup/db.dump``)."""
    known = {*inputs, output}
    dirs = {p[:i] for p in known for i in range(1, len(p)) if p[i] == "/"}
    roots = {p.split("/")[1] for p in known if p.count("/") >= 2}
    exists = known | dirs | written_paths(solve_sh)
    out: list[str] = []
    for m in _NAMED_PATH.finditer(instruction):
        path = m.group(1).rstrip("./")  # a full stop after it, a glob's `*` (`/app/logs/access.log.*`)
        made = re.search(rf"(?<![\w.-]){re.escape(path.rsplit('/', 1)[-1])}(?![\w-]|\.\w)", dockerfile) is not None
        if path.count("/") and path.split("/")[1] in roots and path not in exists | set(out) and not made:
            out.append(path)
    return out
