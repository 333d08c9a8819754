"""Whether a filter's recorded output contradicts a comparison its instruction states (``status code less
than 500``, and a recorded line holds 500): a check on the instruction against the output, beside the text rules
of ``text.py``."""

from __future__ import annotations

import re
from collections.abc import Callable

from autoenvscaling.roles.proposer.staged.grading import normalized

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
