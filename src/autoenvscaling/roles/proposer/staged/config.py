"""``StagedConfig``: the budgets of one staged episode (and of the one-shot recorded baseline)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from autoenvscaling.roles.proposer.staged.calls import StageSampling


class StagedConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    max_calls: int = Field(default=16, ge=1, description="model calls per episode")
    order: Literal["solution_first", "instruction_first"] = Field(
        default="solution_first",
        description="instruction_first: instruction, then a solution for it; solution_first: a script, then the "
        "instruction that describes what it wrote",
    )
    max_wall_sec: float | None = Field(default=1800.0, gt=0, description="the episode's wall clock")
    max_parent_solution_lines: int | None = Field(
        default=12,
        ge=1,
        description="mutate only parents whose solve.sh has at most this many command lines (None: any parent)",
    )
    idea_resamples: int = Field(
        default=2,
        ge=0,
        description="staged: an idea that asks what the parent's accepted children (or the run's earlier episodes) "
        "asked, or whose change only repeats an operator's description, is sampled again from the same prompt, at "
        "most this many times; the last answer stands",
    )
    solution_samples: int = Field(default=3, ge=1, description="solve.sh attempts (fresh samples and repairs)")
    max_repairs: int = Field(default=1, ge=0, description="fix_* decisions acted on")
    run_timeout_sec: float = Field(default=60.0, gt=0, description="one solve.sh run in the draft's image")
    data_lines: tuple[int, int] = Field(default=(4, 10), description="asked number of lines added to the input")
    format_hint: bool = Field(
        default=True,
        description="complete the instruction mechanically: what it left out of the solution's rule, the first "
        "line of each input read, one line of a 3+ line recorded output as a format example (the shape of a shorter "
        "one: `<number> <number>`)",
    )
    precision_repair: bool = Field(
        default=True,
        description="solution_first: rewrite the instruction once when it leaves out a path, word or threshold "
        "the solution uses",
    )
    self_check: int = Field(
        default=2,
        ge=0,
        description="staged: after recording, scripts are written from the final instruction alone (the proposer "
        "as a blind reader) and run, until one reproduces the recorded output, two agree on another, or this many "
        "ran cleanly (one more call when a reader's script fails); when two clean readers agree on another output, "
        "their script becomes the solution and is recorded again (0: off; 1: a check without repair; the one-shot "
        "baseline never does this)",
    )
    reread: bool = Field(
        default=True,
        description="staged: when no self-check reader made the recorded output and no two agreed on another, the "
        "instruction is rewritten once, shown what a reader made instead, and kept only if one more reader then "
        "makes the recorded output",
    )
    shell_fixes: bool = Field(
        default=True,
        description="staged: when a run of solve.sh fails on a known shell pitfall (grep's file-name prefixes, a "
        ".gz input read as text, a near-miss input path), the harness rewrites the script and keeps the rewrite "
        "when it passes every guard (no model call; the one-shot baseline never does this)",
    )
    oneshot_format: Literal["json", "sections"] = Field(
        default="json",
        description="the one-shot baseline's reply: one JSON object under a schema (constrained decoding), or header "
        "lines and fenced blocks (code needs no escaping: a small model's JSON string ends at the first quote it "
        "leaves unescaped)",
    )
    check: bool = Field(default=True, description="validate the finished draft (repeats=1) before submitting")
    cross_oracle: bool = Field(default=True, description="the parent's solution must fail the child's tests")
    sampling: StageSampling = Field(default_factory=StageSampling)
