"""report.html shows the training curve of the rounds that trained: a plot and one row per optimizer step, and
why a round trained nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from autoenvscaling.flywheel.layout import RunPaths, write_output
from autoenvscaling.flywheel.records import TrainOutput
from autoenvscaling.flywheel.report import write_report
from autoenvscaling.train.progress import StepLog


def _train(paths: RunPaths, n: int, **kw: object) -> None:
    (paths.stage_dir(n, "train")).mkdir(parents=True, exist_ok=True)
    write_output(paths.stage_dir(n, "train"), TrainOutput(round=n, stage="train", kind="trl-grpo", **kw))  # type: ignore[arg-type]


def test_the_training_curve_is_plotted_and_tabled(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    paths = RunPaths(tmp_path / "run")
    steps = [StepLog(step=1, loss=0.25, reward_mean=0.0, reward_std=0.0, values={"tools/call_frequency": 1.5}),
             StepLog(step=2, loss=0.125, reward_mean=0.5, reward_std=0.5, values={"step_time": 42.0})]  # fmt: skip
    _train(paths, 1, steps=steps)
    _train(paths, 2, error="no learnable environment to train on; the solver stays as it was")
    page = write_report(paths).read_text()
    assert "<h2>Training</h2>" in page and 'alt="training"' in page
    assert (paths.report_assets / "training.png").stat().st_size > 0
    assert "<td>0.25</td><td>0.00</td><td>0.00</td><td>1.50</td>" in page  # step 1: loss, reward, std, tool calls
    assert "<td>0.125</td><td>0.50</td><td>0.50</td><td>-</td><td>42</td>" in page
    assert "round 2: no learnable environment to train on" in page


def test_no_training_no_section(tmp_path: Path) -> None:
    paths = RunPaths(tmp_path / "run")
    (paths.stage_dir(1, "train")).mkdir(parents=True)
    write_output(paths.stage_dir(1, "train"), TrainOutput(round=1, stage="train"))
    assert "Training" not in write_report(paths).read_text()
