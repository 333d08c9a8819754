"""The flywheel's train stage with ``kind = "trl-grpo"`` on the tiny model: a child process trains on the round's
export, the adapter becomes the solver as ``hf:<adapter>`` and answers; a second run of the stage does not retrain."""

from __future__ import annotations

import math
import uuid
from pathlib import Path

import pytest

from autoenvscaling.flywheel.backend import RunBackend
from autoenvscaling.flywheel.config import load_config
from autoenvscaling.flywheel.context import NullEvents, RoundContext
from autoenvscaling.flywheel.layout import RunPaths
from autoenvscaling.flywheel.records import ExportOutput, TrainOutput
from autoenvscaling.flywheel.stages_train import run_train
from autoenvscaling.llm.base import Message, ToolSpec
from autoenvscaling.llm.factory import open_model
from autoenvscaling.pool import Pool
from autoenvscaling.sandbox.docker import DockerBackend

pytest.importorskip("trl")
pytestmark = [
    pytest.mark.docker,
    pytest.mark.filterwarnings("ignore::FutureWarning:(transformers|peft|trl)"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning:(transformers|peft|trl|torch)"),
]

TINY_GRPO = ["train.kind=trl-grpo", "train.base_model=tiny", "train.steps=1", "train.prompts_per_step=1",
             "train.max_completion_length=16", "train.lora_r=4", 'models.solver="embedded:0.5b"']  # fmt: skip


RUN_ID = f"train-test-{uuid.uuid4().hex[:8]}"


def _train(tmp_path: Path, export_dir: Path, overrides: list[str]) -> TrainOutput:
    cfg = load_config(None, overrides)
    with Pool.open(tmp_path / "pool-ctx") as pool:
        ctx = RoundContext(
            n=1, paths=RunPaths(tmp_path / "run"), config=cfg, pool=pool, domains={},
            backend=RunBackend(DockerBackend(), RUN_ID),
            solver=cfg.models.solver, proposer=cfg.models.solver, events=NullEvents(),
        )  # fmt: skip
        export = ExportOutput(round=1, stage="export", export_dir=str(export_dir), learnable=1)
        return run_train(ctx, export)


def test_grpo_stage_trains_serves_and_does_not_retrain(tmp_path: Path, export_dir: Path) -> None:
    out = _train(tmp_path, export_dir, TINY_GRPO)
    assert out.error is None, Path(str(out.log_path)).read_text()[-2000:]
    assert out.solver is not None and out.solver.provider == "hf" and out.adapter_dir
    assert len(out.steps) == 1 and out.steps[0].loss is not None and math.isfinite(out.steps[0].loss)
    with open_model(out.solver) as model:
        bash = ToolSpec(name="bash", description="run", parameters={"type": "object", "properties": {}})
        reply = model.complete([Message(role="user", content="Count the words.")], tools=[bash])
    assert reply.usage.completion_tokens > 0
    result = Path(out.adapter_dir).parent / "result.json"
    stamp = result.stat().st_mtime_ns
    again = _train(tmp_path, export_dir, TINY_GRPO)  # the finished job is read back, not run again
    assert again.solver == out.solver and again.steps == out.steps and result.stat().st_mtime_ns == stamp


def test_nothing_to_train_leaves_the_solver(tmp_path: Path) -> None:
    cfg = load_config(None, ["train.kind=sft", "train.base_model=tiny"])
    with Pool.open(tmp_path / "pool") as pool:
        ctx = RoundContext(
            n=1, paths=RunPaths(tmp_path / "run"), config=cfg, pool=pool, domains={},
            backend=RunBackend(DockerBackend(), "r"), solver=cfg.models.solver, proposer=cfg.models.solver,
            events=NullEvents(),
        )  # fmt: skip
        out = run_train(ctx, ExportOutput(round=1, stage="export", export_dir=str(tmp_path), sft_examples=0))
    assert out.solver is None and "no successful solver trajectory" in str(out.error)
