"""What a training run reports: one ``StepLog`` per optimizer step (written as it happens) and a ``TrainResult``."""

from __future__ import annotations

import math
import resource
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

RESULT = "result.json"
STEPS = "steps.jsonl"
ADAPTER = "adapter"
CHECKPOINTS = "checkpoints"
ROLLOUTS = "rollouts"


class StepLog(BaseModel):
    step: int
    loss: float | None = None
    reward_mean: float | None = None
    reward_std: float | None = None
    values: dict[str, float] = Field(default_factory=dict, description="everything the trainer logged at this step")


class TrainResult(BaseModel):
    kind: str
    base_model: str
    adapter_dir: str
    init_adapter: str | None = None
    steps: int = 0
    examples: int = 0  # environments (GRPO) or chat examples (SFT) trained on
    log: list[StepLog] = Field(default_factory=list)
    wall_sec: float = 0.0
    peak_rss_mb: float = 0.0
    gpu_peak_mb: float | None = None  # torch's peak allocation on the GPU, when one was used
    resumed_from: str | None = None
    notes: list[str] = Field(default_factory=list)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def gpu_peak_mb() -> float | None:
    import torch

    return torch.cuda.max_memory_allocated() / 2**20 if torch.cuda.is_available() else None


def _finite(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and math.isfinite(value) else None


def step_log(entry: dict[str, Any]) -> StepLog | None:
    """A trainer log entry as a ``StepLog``; None for entries that are not a training step's (the final summary)."""
    if "train_runtime" in entry or "step" not in entry:
        return None
    values = {k: float(v) for k, v in entry.items() if isinstance(v, int | float) and k != "step"}
    return StepLog(step=int(entry["step"]), loss=_finite(entry.get("loss")), reward_mean=_finite(entry.get("reward")),
                   reward_std=_finite(entry.get("reward_std")), values=values)  # fmt: skip


def read_steps(path: Path) -> list[StepLog]:
    """The steps logged so far, the last line per step winning (a resumed run logs its steps again)."""
    if not path.is_file():
        return []
    found: dict[int, StepLog] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            log = StepLog.model_validate_json(line)
            found[log.step] = log
    return [found[k] for k in sorted(found)]


def step_callback(path: Path) -> Any:
    """A ``TrainerCallback`` appending each step's log to ``path`` as it happens (so a killed run keeps its curve)."""
    from transformers import TrainerCallback

    class _Steps(TrainerCallback):  # type: ignore[misc]
        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kw: Any) -> None:
            log = step_log({**(logs or {}), "step": state.global_step})
            if log is not None and state.is_world_process_zero:
                with path.open("a", encoding="utf-8") as f:
                    f.write(log.model_dump_json() + "\n")

    return _Steps()
