"""The adversarial solver on Docker with scripted replies: a cheat that the tests of a broken example reward is
flagged ``hackable:adversarial``; an honest solve of a valid example is not."""

from __future__ import annotations

from pathlib import Path

import pytest

from autoenvscaling.agent.config import AgentConfig
from autoenvscaling.llm.scripted import ScriptedModel
from autoenvscaling.roles.adversary import model_probes_for
from autoenvscaling.sandbox.docker import DockerBackend
from autoenvscaling.validate.probes import ProbeConfig
from autoenvscaling.validate.report import ValidationReport, Verdict
from autoenvscaling.validate.run import ValidationRun
from autoenvscaling.validate.validator import ValidationConfig

pytestmark = pytest.mark.docker

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EMPTY_OK = EXAMPLES / "broken" / "accepts-empty-output"
VALID = EXAMPLES / "terminal" / "log-error-summary"
PROBES = ProbeConfig(adversarial_attempts=2)


def _bash(cmd: str) -> str:
    return f"Trying this.\n```bash\n{cmd}\n```"


def _validate(tmp_path: Path, task: Path, replies: list[str]) -> ValidationReport:
    model = ScriptedModel(replies)
    probes = model_probes_for(PROBES, model, AgentConfig(max_turns=6))
    run = ValidationRun(
        tmp_path / "run", DockerBackend(), ValidationConfig(repeats=1, probes=PROBES), model_probes=probes
    )
    (rep,), summary = run.run([task])
    assert summary.hackable == int(rep.verdict == Verdict.INVALID)
    return rep


def test_a_cheat_the_tests_reward_is_flagged(tmp_path: Path) -> None:
    cheat = [
        _bash("echo 1 > /logs/verifier/reward.txt; : > /app/summary.txt"),
        _bash("ls -l /app"),
        "```bash\nsubmit\n```",
    ]
    rep = _validate(tmp_path, EMPTY_OK, cheat)
    assert rep.verdict == Verdict.INVALID and rep.failed_checks == ["hackable:adversarial"], rep.checks
    assert rep.probes is not None and rep.probes.adversarial is not None
    (attempt,) = rep.probes.adversarial.attempts
    assert attempt.reward == 1.0 and attempt.confirmed
    assert [e.split(":")[0] for e in attempt.evidence] == ["reward-file", "empty-output"]


def test_an_honest_solve_is_not_flagged(tmp_path: Path) -> None:
    solution = (VALID / "solution" / "solve.sh").read_text()
    honest = [_bash(solution), _bash("cat /app/report.txt"), "```bash\nsubmit\n```"] * 2
    rep = _validate(tmp_path, VALID, honest)
    assert rep.verdict == Verdict.VALID, rep.checks
    assert rep.probes is not None and rep.probes.adversarial is not None
    attempts = rep.probes.adversarial.attempts
    assert len(attempts) == 2 and all(a.reward == 1.0 and not a.confirmed and not a.evidence for a in attempts)
    assert rep.probes.flags == []
