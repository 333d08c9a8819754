"""``ProposerConfig``: the budgets and knobs of one proposer episode (workshop; staged under ``staged``)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from autoenvscaling.agent.config import AgentConfig
from autoenvscaling.roles.proposer.actions import FORMAT_PATHS
from autoenvscaling.roles.proposer.staged.config import StagedConfig
from autoenvscaling.roles.proposer.tools import ToolsConfig
from autoenvscaling.roles.proposer.workshop import WorkshopConfig

AGENT_NAME = "autoenv-proposer"


class ProposerConfig(BaseModel):
    """Budgets are checked before each model call (turns, tokens, cost, wall) or each check (checks)."""

    model_config = ConfigDict(extra="forbid")

    action_format: str = Field(default="bash_block", description="bash_block | tool_calls | json")
    max_turns: int = Field(default=30, ge=1, description="model calls")
    max_checks: int = Field(default=6, ge=0, description="`check` calls; one more ends the episode")
    max_tokens_total: int | None = Field(default=None, ge=1, description="prompt + completion tokens")
    max_cost_usd: float | None = Field(default=None, gt=0)
    max_wall_sec: float | None = Field(default=3600.0, gt=0, description="the episode's wall clock, checks included")
    require_check: bool = Field(default=True, description="refuse a submit before the first `check`")
    check_repeats: int = Field(default=1, ge=1, description="reference-solution runs per check")
    command_timeout_sec: float = Field(default=60.0, gt=0, description="per workshop command")
    try_timeout_sec: float = Field(default=30.0, gt=0, description="per `try` command")
    observation_head_chars: int = Field(default=1500, ge=0, description="output kept from the start")
    observation_tail_chars: int = Field(default=1500, ge=0, description="output kept from the end")
    start_from: Literal["template", "example"] = Field(
        default="template", description="the first draft: a minimal valid template, or a copy of an example"
    )
    novelty_threshold: float = Field(default=0.8, gt=0, le=1, description="instruction similarity that is a copy")
    workshop: WorkshopConfig = Field(default_factory=WorkshopConfig)
    staged: StagedConfig = Field(default_factory=StagedConfig, description="the staged proposer's budgets")

    def agent_config(self) -> AgentConfig:
        fmt = FORMAT_PATHS.get(self.action_format, self.action_format)
        return AgentConfig(
            action_format=fmt,
            max_turns=self.max_turns,
            max_tokens_total=self.max_tokens_total,
            max_wall_sec=self.max_wall_sec,
            max_cost_usd=self.max_cost_usd,
            command_timeout_sec=self.command_timeout_sec,
            observation_head_chars=self.observation_head_chars,
            observation_tail_chars=self.observation_tail_chars,
            agent_name=AGENT_NAME,
        )

    def tools_config(self) -> ToolsConfig:
        return ToolsConfig(
            max_checks=self.max_checks,
            check_repeats=self.check_repeats,
            try_timeout_sec=self.try_timeout_sec,
            novelty_threshold=self.novelty_threshold,
        )
