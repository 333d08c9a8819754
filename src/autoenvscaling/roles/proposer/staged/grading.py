"""Compares each output with the output the reference solution produced when the environment was made.

Written by autoenvscaling's staged proposer as ``tests/test_outputs.py`` (this very file, verbatim), next to
``tests/expectations.json`` (which output is compared how) and ``tests/expected/`` (the recorded outputs).
The harness imports the same ``matches`` to compare outputs itself, so both sides grade alike.
Standard library only: it runs inside the task's image.
"""

import json
import math
import re
from pathlib import Path

NUMBER = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


def normalized(text: str) -> list[str]:
    """The lines that are not empty, with runs of spaces and tabs as one space and no leading or trailing blanks.
    An empty line counts nowhere: a blank line of an input that a script passed through is no part of the answer
    (the format hint counts the other lines, and "the key of every setting, one per line" asks for none)."""
    lines = (" ".join(line.split()) for line in text.replace("\r\n", "\n").split("\n"))
    return [line for line in lines if line]


def same_words(got: list[str], want: list[str]) -> bool:
    if len(got) != len(want):
        return False
    for a, b in zip(got, want, strict=True):
        if NUMBER.match(a) and NUMBER.match(b):
            if not math.isclose(float(a), float(b), rel_tol=1e-6, abs_tol=1e-9):
                return False
        elif a != b:
            return False
    return True


def matches(got: str, want: str, compare: str) -> bool:
    g, w = normalized(got), normalized(want)
    if compare == "sorted_lines":
        return sorted(g) == sorted(w)
    if compare == "numeric":
        return len(g) == len(w) and all(same_words(a.split(), b.split()) for a, b in zip(g, w, strict=True))
    return g == w


def test_outputs() -> None:
    here = Path(__file__).parent
    for exp in json.loads((here / "expectations.json").read_text()):
        path = Path(exp["path"])
        assert path.is_file(), f"{path} does not exist"
        want = (here / "expected" / exp["expected"]).read_text()
        got = path.read_text(errors="replace")
        assert matches(got, want, exp["compare"]), f"{path} does not hold the expected result"
