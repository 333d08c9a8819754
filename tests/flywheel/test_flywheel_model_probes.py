"""The model probes in the flywheel (issue 12): ``[probes]`` and ``models.probes`` in the config, the validate
stage rejecting a candidate a blocking judge fails (on the round's solver by default, on ``models.probes`` when
set), and the model that travels to Ray workers. Scripted models on the scored fake backend: no Docker."""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from types import SimpleNamespace

import pytest

from autoenvscaling.errors import UserInputError
from autoenvscaling.flywheel.backend import RunBackend
from autoenvscaling.flywheel.config import FlywheelConfig, ProbesConfig, load_config
from autoenvscaling.flywheel.context import NullEvents, RoundContext
from autoenvscaling.flywheel.domains import resolve_domain
from autoenvscaling.flywheel.layout import RunPaths
from autoenvscaling.flywheel.records import Generation, ProposeOutput, ValidateOutput
from autoenvscaling.flywheel.stages_propose import _probe_model, run_validate
from autoenvscaling.llm.config import parse_model_arg
from autoenvscaling.pool import Pool
from autoenvscaling.roles.adversary import model_probes_for
from autoenvscaling.roles.judge import CRITERIA
from autoenvscaling.roles.proposer.records import GenerationResult
from autoenvscaling.roles.remote_solver import RemoteModel
from autoenvscaling.sandbox.fake_scored import ScoredFakeBackend, write_scored_task
from autoenvscaling.validate.probes import ProbeConfig
from autoenvscaling.validate.report import ValidationReport

WHY = "the tests only check a marker file"


def _judge_script(path: Path, **fails: str) -> Path:
    fail = {k.replace("_", "-"): v for k, v in fails.items()}
    items = [{"id": c, "outcome": "fail" if c in fail else "pass", "explanation": fail.get(c, "")} for c in CRITERIA]
    path.write_text(json.dumps([json.dumps({"criteria": items})]))
    return path


def test_the_probes_table_and_their_model_in_the_config(tmp_path: Path) -> None:
    default = FlywheelConfig()
    assert default.probes == ProbesConfig() and default.probes.enabled and not default.probes.model_probes
    assert default.models.probes is None
    cfg = load_config(None, ['probes.judge="blocking"', "probes.adversarial_attempts=2", 'models.probes="solver"'])
    assert (cfg.probes.judge, cfg.probes.adversarial_attempts, cfg.models.probes) == ("blocking", 2, None)
    (tmp_path / "c.toml").write_text('[models]\nprobes = "scripted:judge.json"\n[probes]\njudge = "advisory"\n')
    cfg = load_config(tmp_path / "c.toml", ["models.probes.temperature=0.0"])
    assert cfg.models.probes is not None and cfg.models.probes.scripted_path == tmp_path / "judge.json"
    assert cfg.models.probes.temperature == 0.0 and cfg.probes.judge == "advisory"
    with pytest.raises(UserInputError, match=r"probes\.judge_mode: Extra inputs"):
        load_config(None, ['probes.judge_mode="blocking"'])


def test_model_probes_on_ray_open_their_model_on_the_workers(tmp_path: Path) -> None:
    cfg = load_config(None, ['probes.judge="advisory"', 'executor.kind="ray"'])  # no longer refused
    assert cfg.probes.judge == "advisory" and cfg.executor.kind == "ray"
    ctx = SimpleNamespace(config=cfg, solver=parse_model_arg(f"scripted:{tmp_path / 'j.json'}"))
    with _probe_model(ctx, remote=True) as model:  # type: ignore[arg-type]
        assert isinstance(model, RemoteModel) and pickle.loads(pickle.dumps(model)) == model
        both = model_probes_for(ProbeConfig(judge="advisory", adversarial_attempts=1), model)
        shipped = pickle.loads(pickle.dumps(both))  # what a Ray task carries: the judge and the adversary
        assert shipped.adversary is not None and shipped.adversary.agent().model == model
    embedded = SimpleNamespace(config=cfg, solver=parse_model_arg("embedded"))
    refused = pytest.raises(UserInputError, match="cannot run the embedded model on the workers")
    with refused, _probe_model(embedded, remote=True):  # type: ignore[arg-type]
        pass


def _run_validate(tmp_path: Path, cfg: FlywheelConfig, proposed: ProposeOutput) -> tuple[ValidateOutput, RoundContext]:
    """Round 1's validate stage on the scored fake backend."""
    with Pool.open(tmp_path / "pool") as pool:
        ctx = RoundContext(
            n=1, paths=RunPaths(tmp_path / "run"), config=cfg, backend=RunBackend(ScoredFakeBackend(), "r"),
            pool=pool, domains={"terminal": resolve_domain("terminal")}, solver=cfg.models.solver,
            proposer=cfg.models.solver, events=NullEvents(),
        )  # fmt: skip
        return run_validate(ctx, proposed), ctx


def _validate(tmp_path: Path, overrides: list[str]) -> tuple[list[str], str, ValidationReport]:
    """The validate stage of round 1 on one candidate (a scored fake task its oracle passes)."""
    cfg = load_config(None, ["probes.enabled=false", 'probes.judge="blocking"', *overrides])  # rules need a shell
    candidate = write_scored_task(tmp_path / "propose" / "candidates" / "prompt-000")
    (candidate / "instruction.md").write_text("Reverse every line of /app/words.txt into /app/out.txt.\n")
    gen = GenerationResult(id="prompt-000", mode="prompt", episode_dir=str(tmp_path), candidate_dir=str(candidate))
    proposed = ProposeOutput(round=1, stage="propose", generations=[Generation(domain="terminal", result=gen)])
    out, ctx = _run_validate(tmp_path, cfg, proposed)
    (record,) = out.records
    assert out.probes["terminal/prompt-000"].flags == (["judge:behavior-in-tests"] if record.failed_checks else [])
    log = ctx.stage_dir("validate") / "terminal" / "validation" / "results.jsonl"
    (report,) = [ValidationReport.model_validate_json(line) for line in log.read_text().splitlines()]
    assert report.probes is not None and report.probes.judge is not None
    return record.failed_checks, record.verdict, report


def test_a_blocking_judge_on_the_rounds_solver_rejects_the_candidate(tmp_path: Path) -> None:
    solver = _judge_script(tmp_path / "solver.json", behavior_in_tests=WHY)
    failed, verdict, report = _validate(tmp_path, [f'models.solver="scripted:{solver}"'])
    assert (verdict, failed) == ("invalid", ["judge:behavior-in-tests"])
    assert report.probes is not None and report.probes.judge is not None
    assert report.probes.judge.model == "scripted:solver.json" and report.probes.judge.mode == "blocking"
    (criterion,) = [c for c in report.probes.judge.criteria if c.outcome == "fail"]
    assert criterion.explanation == WHY


def test_models_probes_replaces_the_solver_as_the_judge(tmp_path: Path) -> None:
    solver = _judge_script(tmp_path / "solver.json", behavior_in_tests=WHY)
    judge = _judge_script(tmp_path / "judge.json")  # passes every criterion
    failed, verdict, report = _validate(
        tmp_path, [f'models.solver="scripted:{solver}"', f'models.probes="scripted:{judge}"']
    )
    assert (verdict, failed) == ("valid", [])
    assert report.probes is not None and report.probes.judge is not None
    assert report.probes.judge.model == "scripted:judge.json"


def test_a_proposal_the_proposers_check_failed_on_a_probe_counts_in_the_rounds_probes(tmp_path: Path) -> None:
    """The gate's catches before the validate stage (the staged proposer's check runs the probes too) are in the
    round's probe counts, not only in its rejection reasons."""
    caught = GenerationResult(id="staged-000", mode="staged", episode_dir=str(tmp_path), candidate_dir=None,
                              failed_checks=["hackable:instruction-answer"])  # fmt: skip
    other = GenerationResult(id="staged-001", mode="staged", episode_dir=str(tmp_path), candidate_dir=None,
                             failed_checks=["instruction-contradicts-output"])  # fmt: skip
    proposed = ProposeOutput(round=1, stage="propose", generations=[
        Generation(domain="terminal", result=caught), Generation(domain="terminal", result=other)])  # fmt: skip
    cfg = load_config(None, [])
    out, _ = _run_validate(tmp_path, cfg, proposed)
    assert [(r.id, r.verdict) for r in out.records] == [("staged-000", "no-candidate"), ("staged-001", "no-candidate")]
    assert set(out.probes) == {"terminal/staged-000"}
    brief = out.probes["terminal/staged-000"]
    assert brief.probed and brief.flags == ["hackable:instruction-answer"] and brief.mutation_score is None
