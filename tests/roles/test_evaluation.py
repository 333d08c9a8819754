"""`autoenv eval`: the statistics, the dataset reading, the command on the scripted model and the fake sandbox
(resume included), the flywheel's held-out stage on the same scoring, and one run on Docker."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from autoenvscaling.cli.app import app
from autoenvscaling.errors import UserInputError
from autoenvscaling.flywheel.backend import RunBackend
from autoenvscaling.flywheel.config import load_config
from autoenvscaling.flywheel.context import NullEvents, RoundContext
from autoenvscaling.flywheel.layout import RunPaths
from autoenvscaling.flywheel.metrics import _heldout_rate
from autoenvscaling.flywheel.stages_solve import run_evaluate
from autoenvscaling.pool import Pool
from autoenvscaling.roles.evaluation import (
    EvalReport,
    bootstrap_interval,
    default_ks,
    eval_report,
    wilson_interval,
)
from autoenvscaling.roles.solve_run import AttemptRecord
from autoenvscaling.sandbox.fake_scored import NAME as SCORED_FAKE
from autoenvscaling.sandbox.fake_scored import ScoredFakeBackend, write_scored_task
from autoenvscaling.tasks.dataset import dataset_task_dirs
from autoenvscaling.tasks.errors import TaskFormatError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SOLVE = "```bash\nbash /solution/solve.sh\n```"
IDLE = "```bash\ntrue\n```"
SUBMIT = "```bash\nsubmit\n```"


def _rec(task: str, attempt: int, reward: float | None) -> AttemptRecord:
    return AttemptRecord(task_name=task, task_path=f"/d/{task}", attempt=attempt, trial_dir="t", reward=reward,
                         error=None if reward is not None else "SandboxError: gone")  # fmt: skip


def test_wilson_interval_known_values() -> None:
    i = wilson_interval(3, 6, 1.959964)
    assert i is not None and (round(i.low, 3), round(i.high, 3)) == (0.188, 0.812)
    zero = wilson_interval(0, 10, 1.959964)
    assert zero is not None and zero.low == 0.0 and round(zero.high, 3) == 0.278
    assert wilson_interval(0, 0, 1.96) is None


def test_bootstrap_interval_is_reproducible_and_bounded() -> None:
    values = [0.0, 1.0] * 20
    a = bootstrap_interval(values, 0.95, 1000)
    assert a == bootstrap_interval(values, 0.95, 1000)  # a fixed seed
    assert a is not None and 0.25 < a.low < 0.5 < a.high < 0.75
    same = bootstrap_interval([1.0, 1.0, 1.0], 0.95, 500)
    assert same is not None and (same.low, same.high) == (1.0, 1.0)
    assert bootstrap_interval([], 0.95, 100) is None


def test_report_scores_per_task_and_leaves_errors_out() -> None:
    records = [_rec("a", 1, 1.0), _rec("a", 2, 0.0), _rec("a", 3, 1.0), _rec("a", 4, None)]
    records += [_rec("b", i, 0.0) for i in range(1, 5)] + [_rec("c", i, None) for i in range(1, 5)]
    records += [_rec("gone", 1, 1.0)]  # a task no longer in the dataset
    order = [("/d/a", "a"), ("/d/b", "b"), ("/d/c", "c")]
    report = eval_report(records, order, [1, 4, 3], attempts_per_task=4)
    a, b, c = report.tasks
    assert (a.attempts, a.errors, a.solved) == (4, 1, 2) and a.pass_at == pytest.approx(
        {"1": 2 / 3, "3": 1.0, "4": None}
    )
    assert b.pass_at == {"1": 0.0, "3": 0.0, "4": 0.0} and c.pass_at["1"] is None
    p1, p3, p4 = report.pass_at
    assert (p1.k, p1.tasks, p3.k, p4.k, p4.tasks) == (1, 2, 3, 4, 1)
    assert p1.value == pytest.approx(1 / 3) and p3.value == pytest.approx(0.5) and p4.value == 0.0
    assert p1.wilson is not None and p3.wilson is None  # Wilson over 2 of 7 scored attempts
    expected = wilson_interval(2, 7, 1.959964)
    assert expected is not None and (p1.wilson.low, p1.wilson.high) == pytest.approx((expected.low, expected.high))
    assert (report.attempts, report.errors, report.solved) == (12, 5, 2)
    assert report.notes == ["c: no scored attempt (errors only)"]
    assert default_ks(1) == [1] and default_ks(5) == [1, 2, 4, 5] and default_ks(8) == [1, 2, 4, 8]


def _dataset(root: Path) -> Path:
    for name, words in (("easy", "Easy task"), ("hard", "Hard task")):
        write_scored_task(root / name)
        (root / name / "instruction.md").write_text(f"{words}: mark it solved.\n")
    return root


def _rules(tmp_path: Path) -> Path:
    """Easy: solved on attempts 1 and 3, not on 2 (round robin); hard: never solved."""
    path = tmp_path / "replies.json"
    rules = [{"match": "Easy task", "variants": [[SOLVE, SUBMIT], [IDLE, SUBMIT]]},
             {"match": "Hard task", "replies": [IDLE, SUBMIT]}]  # fmt: skip
    path.write_text(json.dumps({"rules": rules}))
    return path


def _eval(*args: str) -> tuple[int, str]:
    res = CliRunner().invoke(app, ["eval", *args, "--backend", SCORED_FAKE])
    return res.exit_code, res.output


def test_eval_on_the_fake_sandbox_with_a_scripted_model_and_resume(tmp_path: Path) -> None:
    ds, run_dir = _dataset(tmp_path / "ds"), tmp_path / "run"
    model = f"scripted:{_rules(tmp_path)}"
    code, out = _eval(
        str(ds), "--model", model, "-k", "3", "--run-dir", str(run_dir), "--json", str(tmp_path / "r.json")
    )
    assert code == 0, out
    report = EvalReport.model_validate_json((run_dir / "eval.json").read_text())
    assert report == EvalReport.model_validate_json((tmp_path / "r.json").read_text())
    easy, hard = report.tasks
    assert (easy.task_name, easy.solved) == ("easy", 2) and easy.pass_at == pytest.approx(
        {"1": 2 / 3, "2": 1.0, "3": 1.0}
    )
    assert (hard.solved, hard.pass_at) == (0, {"1": 0.0, "2": 0.0, "3": 0.0})
    assert [p.value for p in report.pass_at] == pytest.approx([1 / 3, 0.5, 0.5])
    assert "pass@1" in out and "33.3" in out and "Wilson" in out  # the table on the terminal
    # Resume: one attempt's line lost (a crash), the run goes on from the log and redoes only that attempt.
    log = run_dir / "results.jsonl"
    lines = log.read_text().splitlines()
    log.write_text("\n".join(lines[:-1]) + "\n")
    code, out = _eval(str(ds), "--model", model, "-k", "3", "--run-dir", str(run_dir), "--resume")
    assert code == 0, out
    assert len(log.read_text().splitlines()) == 6 and out.count(" #") == 1
    again = EvalReport.model_validate_json((run_dir / "eval.json").read_text())
    assert [p.value for p in again.pass_at] == [p.value for p in report.pass_at]


def test_dataset_toml_picks_and_orders_tasks_and_bad_dirs_are_one_line_errors(tmp_path: Path) -> None:
    ds = _dataset(tmp_path / "ds")
    write_scored_task(ds / "extra")
    assert [p.name for p in dataset_task_dirs(ds)] == ["easy", "extra", "hard"]
    digest = "sha256:" + "0" * 64
    (ds / "dataset.toml").write_text(
        f'[dataset]\nname = "me/set"\n\n[[tasks]]\nname = "me/hard"\ndigest = "{digest}"\n\n'
        f'[[tasks]]\nname = "me/easy"\ndigest = "{digest}"\n'
    )
    assert [p.name for p in dataset_task_dirs(ds)] == ["hard", "easy"]
    (ds / "dataset.toml").write_text(f'[dataset]\nname = "me/set"\n[[tasks]]\nname = "me/gone"\ndigest = "{digest}"\n')
    with pytest.raises(TaskFormatError, match="task me/gone is not in"):
        dataset_task_dirs(ds)
    (ds / "dataset.toml").write_text('[dataset]\nname = "no-org"\n')
    with pytest.raises(TaskFormatError, match=r"dataset.toml: dataset.name: .*org/name"):
        dataset_task_dirs(ds)
    (tmp_path / "empty").mkdir()
    (tmp_path / "file").write_text("x")
    for bad, why in (("missing", "no such directory"), ("file", "not a directory"), ("empty", "no task dirs here")):
        res = subprocess.run([sys.executable, "-m", "autoenvscaling.cli", "eval", str(tmp_path / bad), "--agent", "nop",
                              "--backend", SCORED_FAKE], capture_output=True, text=True, check=False)  # fmt: skip
        assert res.returncode == 2 and why in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.stderr
    res = CliRunner().invoke(app, ["eval", str(ds / "easy"), "--agent", "nop", "--pass-at", "2"])
    assert isinstance(res.exception, UserInputError) and "needs at least 2 attempts" in str(res.exception)


def test_a_task_that_cannot_be_read_fails_the_eval_before_any_run_dir(tmp_path: Path) -> None:
    ds = _dataset(tmp_path / "ds")
    toml = ds / "hard" / "task.toml"
    toml.write_text(toml.read_text() + "\n[agent]\ntimeout_sec = nan\n")
    res = subprocess.run([sys.executable, "-m", "autoenvscaling.cli", "eval", str(ds), "--agent", "nop", "--backend",
                          SCORED_FAKE, "--runs-root", str(tmp_path / "runs")], capture_output=True, text=True,
                         check=False)  # fmt: skip
    assert res.returncode == 2 and "agent.timeout_sec" in res.stderr, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and not (tmp_path / "runs").exists()


def test_flywheel_held_out_stage_scores_as_autoenv_eval(tmp_path: Path) -> None:
    ds = _dataset(tmp_path / "ds")
    overrides = [f"eval.tasks=[{json.dumps(str(ds))}]", "eval.attempts=3", "solver.review_before_submit=false"]
    cfg = load_config(None, [*overrides, f'models.solver="scripted:{_rules(tmp_path)}"'])
    with Pool.open(tmp_path / "pool") as pool:
        ctx = RoundContext(
            n=1, paths=RunPaths(tmp_path / "run"), config=cfg, backend=RunBackend(ScoredFakeBackend(), "r"),
            pool=pool, domains={}, solver=cfg.models.solver, proposer=cfg.models.solver, events=NullEvents(),
        )  # fmt: skip
        out = run_evaluate(ctx)
    assert out.report is not None
    assert [(t.task_name, t.solved) for t in out.report.tasks] == [("easy", 2), ("hard", 0)]
    assert [p.value for p in out.report.pass_at] == pytest.approx([1 / 3, 0.5, 0.5])
    saved = EvalReport.model_validate_json((ctx.stage_dir("evaluate") / "eval.json").read_text())
    assert saved == out.report and _heldout_rate(out) == pytest.approx(1 / 3)


@pytest.mark.docker
def test_eval_on_docker_with_an_example_task(tmp_path: Path) -> None:
    task = EXAMPLES / "terminal" / "log-error-summary"
    res = CliRunner().invoke(app, ["eval", str(task), "--agent", "oracle", "--run-dir", str(tmp_path / "run")])
    assert res.exit_code == 0, res.output
    report = EvalReport.model_validate_json((tmp_path / "run" / "eval.json").read_text())
    assert [t.task_name for t in report.tasks] == ["log-error-summary"]
    assert report.pass_at[0].value == 1.0 and report.errors == 0
