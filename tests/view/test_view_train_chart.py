"""The flywheel page's training reward chart: a finished round's curve from its train stage's output, a training
round's from the steps it logged so far (a half-written line skipped), none for a run that logged no reward."""

from __future__ import annotations

from pathlib import Path

from autoenvscaling.flywheel.records import TrainOutput
from autoenvscaling.train.progress import STEPS, StepLog
from autoenvscaling.view.files import Root
from autoenvscaling.view.flywheel_read import flywheel_view, train_curves, train_reward_chart


def _run(tmp_path: Path) -> Path:
    run = tmp_path / "flywheel-x"
    done = run / "rounds" / "1" / "train"
    done.mkdir(parents=True)
    steps = [StepLog(step=1, loss=0.5, reward_mean=0.25), StepLog(step=2, loss=0.4, reward_mean=0.5)]
    out = TrainOutput(round=1, stage="train", kind="trl-grpo", steps=steps)
    (done / "output.json").write_text(out.model_dump_json())
    training = run / "rounds" / "2" / "train"
    training.mkdir(parents=True)
    lines = [StepLog(step=1, reward_mean=0.5), StepLog(step=1, reward_mean=0.75), StepLog(step=2, reward_mean=1.0)]
    text = "".join(s.model_dump_json() + "\n" for s in lines) + '{"step": 3, "rew'  # the trainer is writing step 3
    (training / STEPS).write_text(text)
    (run / "rounds" / "3" / "solve").mkdir(parents=True)  # a round that has not trained yet
    return run


def test_curves_come_from_finished_and_running_train_stages(tmp_path: Path) -> None:
    curves = train_curves(_run(tmp_path))
    assert sorted(curves) == [1, 2]
    assert [(s.step, s.reward_mean) for s in curves[1]] == [(1, 0.25), (2, 0.5)]
    assert [(s.step, s.reward_mean) for s in curves[2]] == [(1, 0.75), (2, 1.0)]  # the last line per step wins


def test_the_chart_draws_one_line_per_round_and_only_with_a_reward(tmp_path: Path) -> None:
    run = _run(tmp_path)
    svg = train_reward_chart(train_curves(run))
    assert svg is not None and 'data-kind="line"' in svg and "training reward" in svg
    assert svg.count('class="line"') == 2 and "round 1: 0.25" in svg and "round 2: 1" in svg
    view = flywheel_view(Root(tmp_path), run)
    assert sum("training reward" in c for c in view.charts) == 1
    train = next(st for r in view.rounds if r.n == 2 for st in r.stages if st.name == "train")
    assert train.state == "running" and [ln.label for ln in train.links] == ["steps.jsonl"]
    assert train_reward_chart({1: [StepLog(step=1, loss=0.3)]}) is None  # SFT logs a loss, no reward
    assert train_reward_chart({}) is None
