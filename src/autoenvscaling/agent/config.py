"""``AgentConfig``: the budgets and knobs of one terminal agent run (the loop is in ``loop``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class AgentConfig(BaseModel):
    """Knobs of one run. Budgets are checked before each model call; the first one spent ends the run."""

    model_config = ConfigDict(extra="forbid")

    action_format: str = Field(default="bash_block", description="tool_calls | bash_block | json | module:Class")
    max_turns: int = Field(default=30, ge=1, description="model calls, replies without a usable action included")
    max_tokens_total: int | None = Field(default=None, ge=1, description="prompt + completion tokens, all calls")
    max_wall_sec: float | None = Field(default=None, gt=0, description="wall-clock budget of the whole run")
    max_cost_usd: float | None = Field(default=None, gt=0, description="spend budget (provider-reported or priced)")
    command_timeout_sec: float = Field(default=60.0, gt=0, description="per command; a timeout kills the command")
    observation_head_chars: int = Field(default=4000, ge=0, description="output characters kept from the start")
    observation_tail_chars: int = Field(default=4000, ge=0, description="output characters kept from the end")
    min_commands_before_submit: int = Field(
        default=1, ge=0, description="a submit before this many commands ran is refused (small models submit at once)"
    )
    max_format_errors: int = Field(default=3, ge=1, description="consecutive unusable replies before giving up")
    review_before_submit: bool = Field(
        default=False,
        description="answer the first submit with a request to print and check the output first (small models "
        "submit work they never looked at); the second submit ends the run",
    )
    outputs_before_submit: int = Field(
        default=0,
        ge=0,
        le=5,
        description="refuse up to this many submits while a path the task names by absolute path, absent when the "
        "run started and one of the task's declared outputs (artifacts; without them, below an existing top-level "
        "directory), is still missing or empty (small models submit before writing the file the task asks for, or "
        "after writing it empty); each refusal names the paths; 0: off",
    )
    stop_after_block: bool = Field(
        default=False,
        description="bash_block format: generation stops at the first block's closing fence (a small model otherwise "
        "writes hundreds of tokens of plan and imagined output after it, the slow part of a turn on a CPU)",
    )
    preview_inputs: int = Field(
        default=0,
        ge=0,
        le=8,
        description="before the first call, show the first lines of up to this many existing files the task names "
        "by absolute path (small models guess an input's format instead of looking); 0: off",
    )
    max_repeats: int | None = Field(
        default=None,
        ge=0,
        description="replies in a row that repeat the command just run (and are refused) before the run ends with "
        "exit reason 'repeats'; a small model that loops rarely leaves the loop, and each refused reply is a full "
        "model call; None or 0: no limit",
    )
    repeat_temperature: float | None = Field(
        default=1.0,
        ge=0,
        description="a command identical to the previous one is not run again; the next reply is sampled at this "
        "temperature (None: the model's own), since small models loop on one reply",
    )
    flag_reruns: bool = Field(
        default=False,
        description="a command that ran before (not just now) and prints exactly what it printed then is answered "
        "with its output and a note that it told nothing new; the next reply is sampled at repeat_temperature and "
        "such reruns in a row count toward max_repeats (small models alternate between two commands, A-B-A-B, "
        "which the check on the previous command alone never sees)",
    )
    templates: dict[str, str] = Field(
        default_factory=dict, description="template overrides by file name, e.g. {'system.j2': '...'}"
    )
    agent_name: str = "autoenv-terminal"


def one_shot(config: AgentConfig) -> AgentConfig:
    """``config`` as a one-shot solver: one reply, one script that does the whole task, run once, then graded
    (the prompts ``oneshot_system.j2`` and ``oneshot_instance.j2``; the inputs' first lines shown). A small model
    writes a whole script from an instruction more reliably than it runs an agent loop: on the staged candidates
    of yield series v13-v15, the proposer's one-shot readers wrote the recorded output for 4, the 10-turn blind
    solver reproduced 2, both among those 4."""
    templates = {
        **config.templates,
        "system.j2": '{% include "oneshot_system.j2" %}',
        "instance.j2": '{% include "oneshot_instance.j2" %}',
    }
    return config.model_copy(
        update={
            "max_turns": 1,
            "templates": templates,
            "preview_inputs": max(config.preview_inputs, 3),
            "stop_after_block": True,
            "review_before_submit": False,
            "outputs_before_submit": 0,
            "min_commands_before_submit": 0,
            "agent_name": f"{config.agent_name}-oneshot",
        }
    )


def guarded_solver(max_turns: int) -> AgentConfig:
    """The solver settings a round uses by default: every guard for small models on (a capable model rarely
    trips them, and each costs a model call only when it fires)."""
    return AgentConfig(
        max_turns=max_turns,
        review_before_submit=True,
        outputs_before_submit=2,
        preview_inputs=3,
        stop_after_block=True,
        max_repeats=3,
        flag_reruns=True,
    )
