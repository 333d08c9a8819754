"""Counts of a pool (``pool_status``, ``autoenv pool status``): statuses, domains and the quality probes."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from autoenvscaling.cli.app import app
from autoenvscaling.pool import EnvStatus, Pool
from autoenvscaling.pool.status import pool_status
from autoenvscaling.validate.report import ProbeReport, ValidationReport, Verdict
from pool_tasks import TOPICS, write_task


def _report(verdict: Verdict, flags: list[str] | None, score: float | None = None) -> ValidationReport:
    """flags None: validated without probes."""
    probes = None if flags is None else ProbeReport(flags=flags, mutation_score=score)
    failed = [] if flags is None else list(flags)
    return ValidationReport(task_name="t", task_path="t", verdict=verdict, failed_checks=failed, probes=probes)


def _pool(tmp_path: Path) -> Path:
    """csv: probed, clean, then learnable; nginx: probed, hackable by two shims; git: valid, not probed."""
    root = tmp_path / "pool"
    for topic in TOPICS:
        write_task(tmp_path / "tasks" / topic, topic)
    with Pool.open(root) as pool:
        ids = {topic: pool.add(tmp_path / "tasks" / topic, domain="data").id for topic in TOPICS}
        pool.record_validation(ids["csv"], _report(Verdict.VALID, [], 1.0))
        pool.set_status(ids["csv"], EnvStatus.LEARNABLE)
        shims = ["hackable:conftest", "hackable:sitecustomize"]
        pool.record_validation(ids["nginx"], _report(Verdict.INVALID, shims, 0.5))
        pool.record_validation(ids["git"], _report(Verdict.VALID, None))
    return root


def test_pool_status_counts_probes_over_all_and_accepted_entries(tmp_path: Path) -> None:
    with Pool.open(_pool(tmp_path)) as pool:
        st = pool_status(pool.list())
    assert (st.total, st.by_status) == (3, {"invalid": 1, "learnable": 1, "valid": 1})
    assert (st.probes.validated, st.probes.probed, st.probes.hackable) == (3, 2, 1)
    assert st.probes.hackable_share == 0.5
    assert st.probes.flags == {"hackable:conftest": 1, "hackable:sitecustomize": 1}
    assert st.probes.mutation_score_mean == 0.75
    assert (st.accepted, st.accepted_probes.probed, st.accepted_probes.hackable) == (2, 1, 0)
    assert st.accepted_probes.hackable_share == 0.0 and st.accepted_not_probed == 1


def test_nothing_probed_is_an_unknown_share_not_zero(tmp_path: Path) -> None:
    with Pool.open(tmp_path / "pool") as pool:
        st = pool_status(pool.list())
    assert st.total == 0 and st.probes.probed == 0 and st.probes.hackable_share is None
    assert json.loads(st.model_dump_json())["probes"]["hackable_share"] is None


def test_pool_status_command(tmp_path: Path) -> None:
    root = _pool(tmp_path)
    result = CliRunner().invoke(app, ["pool", "status", "--pool", str(root)])
    assert result.exit_code == 0, result.output
    assert "3 environment(s)" in result.output and "learnable" in result.output
    assert "hackable:conftest: 1" in result.output and "50.0%" in result.output
    assert "1 of 2 accepted environment(s) were not probed" in result.output
    assert "carries none" in " ".join(result.output.split())  # 0 hackable among the accepted is no measurement
    data = json.loads(CliRunner().invoke(app, ["pool", "status", "--pool", str(root), "--json"]).output)
    assert data["accepted_probes"] == {
        "validated": 2, "probed": 1, "hackable": 0, "flags": {}, "mutation_score_mean": 1.0, "hackable_share": 0.0,
    }  # fmt: skip
