"""Records of a propose run: what generating one candidate cost, and what the validator then said of it."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from autoenvscaling.llm.base import Usage
from autoenvscaling.verify.results import is_solved

Mode = Literal["staged", "agentic", "prompt", "prompt-recorded"]
MODES: tuple[Mode, ...] = ("staged", "agentic", "prompt", "prompt-recorded")
NOT_REPRODUCED = "not-reproduced"  # recorded expectations no blind solver attempt reproduced
NO_CANDIDATE = "no-candidate"  # verdict of a generation that produced nothing to validate


class GenerationResult(BaseModel):
    """One agentic episode or one prompt-only call."""

    id: str
    mode: Mode
    episode_dir: str
    candidate_dir: str | None = None  # None: nothing to validate (see failed_checks / error)
    exit_reason: str = ""
    turns: int = 0
    checks_used: int = 0
    tries_used: int = 0
    last_check_passed: bool | None = None
    chosen_draft: Literal["current", "best", "none"] = "none"
    usage: Usage = Field(default_factory=Usage)
    wall_sec: float = 0.0
    error: str | None = None
    failed_checks: list[str] = Field(default_factory=list)  # why there is no candidate, e.g. proposal-unparseable
    parent: str | None = None  # staged arms: the parent task the episode was given (parents.parent_schedule)


class GenerationStats(BaseModel):
    turns: int = 0
    checks_used: int = 0
    tries_used: int = 0
    exit_reason: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float = 0.0
    wall_sec: float = 0.0
    error: str | None = None

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class ValidationStats(BaseModel):
    """The pipeline's own validation of the candidate, and for recorded expectations the blind reproduction."""

    verdict: str | None = None
    failed_checks: list[str] = Field(default_factory=list)
    wall_sec: float = 0.0
    error: str | None = None
    recorded: bool = False  # the tests compare with outputs the reference solution recorded
    reproduce_oneshots: list[float | None] = Field(default_factory=list)  # the one-shot blind attempts, in order
    reproduce_rewards: list[float | None] = Field(default_factory=list)  # the blind agent loop's attempts, in order
    reproduce_tokens: int = 0
    reproduce_wall_sec: float = 0.0

    @property
    def reproduced(self) -> bool:
        return any(is_solved(r) for r in [*self.reproduce_oneshots, *self.reproduce_rewards])


class ProposalRecord(BaseModel):
    """One line of a propose run's results.jsonl."""

    id: str
    mode: Mode
    domain: str
    episode_dir: str
    candidate_dir: str | None
    verdict: str  # valid | invalid | error | timeout | no-candidate
    failed_checks: list[str] = Field(default_factory=list)
    generation: GenerationStats
    validation: ValidationStats
    parent: str | None = None  # staged arms: the parent task the episode was given (parents.parent_schedule)

    @property
    def is_valid(self) -> bool:
        return self.verdict == "valid"
