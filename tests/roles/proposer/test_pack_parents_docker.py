"""The task dirs the terminal pack ships for episodes to start from (the worked example and its starters) are
valid environments in their own right: the oracle passes, doing nothing fails, and no quality probe flags them."""

from __future__ import annotations

from pathlib import Path

import pytest

from autoenvscaling.roles.proposer.domain import domain_context
from autoenvscaling.roles.proposer.staged.parents import pack_parents
from autoenvscaling.sandbox.docker import DockerBackend
from autoenvscaling.validate.probes import GENERATED_PROBES
from autoenvscaling.validate.run import ValidationRun
from autoenvscaling.validate.validator import ValidationConfig

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_the_pack_parents_are_valid_and_unflagged(tmp_path: Path) -> None:
    parents = pack_parents(domain_context("terminal"))
    assert len(parents) >= 4
    config = ValidationConfig(repeats=1, probes=GENERATED_PROBES)
    done, summary = ValidationRun(tmp_path / "run", DockerBackend(), config, concurrency=2).run(parents)
    assert summary.total == len(parents)
    for rep in done:
        name = Path(rep.task_path).name
        assert rep.error is None and rep.verdict.value == "valid", (name, rep.failed_checks, rep.checks)
        assert rep.probes is not None and not rep.probes.flags, (name, rep.probes.flags)
        assert rep.probes.mutation_score is None or rep.probes.mutation_score >= GENERATED_PROBES.mutation_threshold
