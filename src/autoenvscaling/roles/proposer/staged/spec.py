"""What a staged draft is made of, as data: the idea, the files the model writes, and the recorded outputs.

A staged environment has a fixed shape the harness can run and grade without the model's help::

    environment/                  the parent's build context (Dockerfile and the input files it COPYs), kept;
                                  an input file the model extended is written over its parent copy; a
                                  ``combine`` child adds the second parent's input files under a fresh
                                  directory and COPY lines for them at the end of the Dockerfile
    instruction.md                written by the model
    solution/solve.sh             written by the model; run by the harness to record the expected outputs
    tests/test.sh                 the harness's
    tests/expected/<n>            the recorded outputs
    tests/expectations.json       which output is compared how (``Expectation``)
    tests/test_outputs.py         the harness's comparison code

``task.toml`` declares the outputs as Harbor ``artifacts``.
"""

from __future__ import annotations

import re
from typing import Any, Literal, get_args

from pydantic import BaseModel, Field, field_validator

Compare = Literal["exact", "sorted_lines", "numeric"]
COMPARE_HELP: dict[str, str] = {
    "exact": "the same lines in the same order (runs of spaces and tabs count as one space)",
    "sorted_lines": "the same lines in any order",
    "numeric": "the same lines of the same words, numbers equal within 1e-6 relative",
}
Operator = Literal["filter", "aggregation", "output_format", "edge_case", "new_question", "combine"]
OPERATOR_HELP: dict[str, str] = {
    "filter": "select different lines or records than the parent does",
    "aggregation": "compute a different summary (count, sum, max, average, distinct values...)",
    "output_format": "present the result in a different layout (columns, separators, order, header)",
    "edge_case": "add tricky input lines (blank lines, mixed case, duplicates) the new task must handle",
    "new_question": "ask a different question about the same kind of data",
    "combine": "combine this task with the second one: use both tasks' input files, or chain one task's step "
    "into the other's",
}
COMBINE = "combine"  # offered only when the episode has a second parent (``StagedContext.second``)
DecisionKind = Literal["ok", "fix_solution", "fix_data", "fix_instruction"]
OUTPUT_DIR = "/app"
DATA_DIR = "/app/data"
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def safe_output_path(path: str) -> str | None:
    """``/app/<name>`` with a plain file name (the last part of ``path``), or None: outputs live directly in
    the work dir, whatever directory the model named."""
    name = path.strip().strip("`'\"").split("/")[-1]
    if not _SAFE_NAME.match(name) or name == "data":
        return None
    return f"{OUTPUT_DIR}/{name}"


class Idea(BaseModel):
    """The first decision of an episode: how the child differs from its parent, and where its result goes."""

    operator: Operator
    change: str = Field(description="one sentence: what the new task asks for")
    output_file: str = Field(description="absolute path of the one output file, under /app")
    compare: Compare = "exact"
    new_data: bool = False
    finding: int = -1  # the digest finding targeted (-1: none)

    @field_validator("change")
    @classmethod
    def _one_line(cls, v: str) -> str:
        return " ".join(v.split())[:300]


def offered_operators(combine: bool) -> dict[str, str]:
    """The operators a prompt offers (name -> help): ``combine`` only when there is a second parent."""
    return {k: v for k, v in OPERATOR_HELP.items() if combine or k != COMBINE}


def idea_schema(n_findings: int, operators: list[str] | None = None) -> dict[str, Any]:
    """JSON schema of ``Idea`` for constrained decoding: every choice is an enum (``operators``: the offered
    ones, by default all but ``combine``)."""
    props: dict[str, Any] = {
        "operator": {"type": "string", "enum": list(operators or offered_operators(False))},
        "change": {"type": "string"},
        "output_file": {"type": "string"},
        "compare": {"type": "string", "enum": list(COMPARE_HELP)},
        "new_data": {"type": "boolean"},
    }
    if n_findings > 0:
        props["finding"] = {"type": "integer", "enum": list(range(-1, n_findings))}
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


class Decision(BaseModel):
    """The decide stage's reply: whether the observed output is right, and what to fix if not."""

    decision: DecisionKind
    reason: str = ""


DECISION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "decision": {"type": "string", "enum": list(get_args(DecisionKind))},
        "reason": {"type": "string"},
    },
    "required": ["decision", "reason"],
    "additionalProperties": False,
}


def json_format(name: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": name, "strict": True, "schema": schema}}


class DraftFiles(BaseModel):
    """The parts of a staged draft the model writes (changed input files keyed by their path under environment/),
    and the files the harness adds to the parent's environment/ (a ``combine`` child's second-parent inputs
    and its Dockerfile with their COPY lines; a changed input in ``data`` is written over them)."""

    data: dict[str, str] = Field(default_factory=dict)
    added: dict[str, str] = Field(default_factory=dict)
    instruction: str = ""
    solve_sh: str = ""


class Expectation(BaseModel):
    """One recorded output: where the solution wrote it, which expected file holds it, how it is compared."""

    path: str
    expected: str  # file name under tests/expected/
    compare: Compare = "exact"
    sha256: str = ""


class Recording(BaseModel):
    """The result of recording expectations: the outputs, or the guard that refused them."""

    ok: bool
    check: str | None = None  # the guard's check id when not ok
    detail: str = ""
    outputs: dict[str, str] = Field(default_factory=dict)  # path -> content (text)
