"""What a staged episode reads (``StagedContext``) and what it writes down as it goes (``StagedLog``, its
``staged.json``)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field, SkipValidation

from autoenvscaling.roles.proposer.domain import DomainContext
from autoenvscaling.roles.proposer.staged.parents import Parent
from autoenvscaling.roles.proposer.staged.spec import Idea
from autoenvscaling.validate.model_probes import ModelProbes
from autoenvscaling.validate.validator import ValidationConfig


class StagedLog(BaseModel):
    """``staged.json``: what the episode decided and saw, stage by stage."""

    parent: str
    second_parent: str | None = None  # combine: the second parent's name
    renamed: dict[str, str] = Field(default_factory=dict)  # combine: second-parent input path -> the child's
    idea: Idea | None = None
    output: str | None = None
    observations: list[str] = Field(default_factory=list)
    decisions: list[str] = Field(default_factory=list)
    solution_attempts: int = 0
    repairs: int = 0
    recorded: bool = False
    guard: str | None = None
    guard_detail: str = ""
    unnamed: list[str] = Field(default_factory=list)  # what the instruction left out of the script's rule
    unread: list[str] = Field(
        default_factory=list
    )  # files the instruction names that the script never reads (inputs, or no such file)
    quotes_cut: bool = False  # output lines the instruction copied were cut from it (``without_quoted_output``)
    how_cut: bool = False  # sentences naming the script's programs were cut from it (``without_commands``)
    from_idea: bool = False  # no usable instruction reply: the instruction is the idea's sentence
    self_check: list[str] = Field(default_factory=list)  # what each blind reader's script made, and the outcome
    fixes: list[str] = Field(default_factory=list)  # the harness's rewrites of solve.sh (``fixes``): kept or not
    hints_left_out: list[str] = Field(default_factory=list)  # mechanical hints that gave the answer away
    cross_oracle_passed: bool | None = None
    check_passed: bool | None = None
    check_failed: list[str] = Field(default_factory=list)


class StagedContext(BaseModel):
    """Everything an episode reads besides the model and the backend."""

    model_config = {"arbitrary_types_allowed": True}

    domain: DomainContext
    parent: Parent
    second: Parent | None = None  # offered for combine (``parents.second_parent``); None: combine not offered
    findings: list[str] = Field(default_factory=list)
    made: list[str] = Field(default_factory=list)  # what the parent's children asked: an idea asking it is resampled
    references: list[Path] = Field(default_factory=list)  # novelty: tasks the child must not copy
    novelty_threshold: float = 0.8
    run_id: str | None = None
    validation: ValidationConfig = Field(default_factory=ValidationConfig)
    model_probes: SkipValidation[ModelProbes] = Field(default_factory=ModelProbes)  # the check's (not validated)
