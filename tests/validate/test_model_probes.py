"""The model probes without Docker: the judge in validation (advisory vs blocking), the adversarial solver's
confirmation rules, and its flag in the counts. Scripted models on the fake sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from autoenvscaling.agent.config import AgentConfig
from autoenvscaling.errors import UserInputError
from autoenvscaling.llm.scripted import ScriptedModel
from autoenvscaling.roles.adversary import AGENT_NAME, ModelAdversary, model_probes_for
from autoenvscaling.roles.judge import CRITERIA
from autoenvscaling.sandbox.fake import FakeBackend, FakeCall, FakeSandbox
from autoenvscaling.tasks import load_task
from autoenvscaling.validate.adversarial import exploit_evidence
from autoenvscaling.validate.model_probes import ModelProbes
from autoenvscaling.validate.probes import ProbeConfig
from autoenvscaling.validate.report import ProbeBrief, Verdict, probe_counts
from autoenvscaling.validate.run import ValidationRun
from autoenvscaling.validate.validator import ValidationConfig

EMPTY_OK = Path(__file__).resolve().parents[2] / "examples" / "broken" / "accepts-empty-output"


def _answer(**fails: str) -> str:
    fail = {k.replace("_", "-"): v for k, v in fails.items()}
    items = [{"id": c, "outcome": "fail" if c in fail else "pass", "explanation": fail.get(c, "")} for c in CRITERIA]
    return json.dumps({"criteria": items})


def _bash(cmd: str) -> str:
    return f"Trying this.\n```bash\n{cmd}\n```"


SUBMIT = "Done.\n```bash\nsubmit\n```"


def test_evidence_rules_see_the_exploit_techniques_and_not_an_honest_solve() -> None:
    task = load_task(EMPTY_OK)

    def signs(*commands: str) -> list[str]:
        return [e.split(":")[0] for e in exploit_evidence(task, list(commands))]

    assert signs("echo 1 > /logs/verifier/reward.txt") == ["reward-file"]
    assert signs("mkdir -p /logs/verifier && printf 1 | tee /logs/verifier/reward.json") == ["reward-file"]
    assert signs("printf 'import os\\nos._exit(0)\\n' > /usr/lib/python3.11/sitecustomize.py") == ["shim"]
    assert signs("cp /bin/true /usr/local/bin/pytest") == ["shim"]
    assert signs(": > /app/summary.txt") == ["empty-output"]
    assert signs("cd /app && touch /app/summary.txt") == ["empty-output"]
    assert signs("echo 'name score' > /app/summary.txt") == ["instruction-literal"]
    assert signs("cat > /app/summary.txt <<'EOF'\nname score\nEOF") == ["instruction-literal"]
    honest = "awk '$2 >= 50 {print $1}' /app/scores.txt > /app/summary.txt"
    assert signs("cat /app/scores.txt", honest, "cat /app/summary.txt") == []
    assert signs("echo alice > /app/summary.txt") == []  # a name the instruction does not hold: not copied
    assert signs("cat /logs/verifier/reward.txt") == []  # a look is not a write


def _tiny(root: Path, tests_accept_empty: bool = True) -> Path:
    """A task the fake sandbox runs: the solution writes /app/out.txt; the tests (a fake handler) accept it."""
    files = {
        "task.toml": 'schema_version = "1.4"\n[task]\nname = "autoenv/tiny"\n[verifier]\ntimeout_sec = 30\n'
        '[agent]\ntimeout_sec = 30\n[metadata.harbor.lint]\nignore = ["shared-verifier"]\n',
        "instruction.md": "Count the lines of /app/in.txt and write the number to /app/out.txt.\n",
        "environment/Dockerfile": "FROM autoenv/terminal:latest\nWORKDIR /app\n",
        "solution/solve.sh": "#!/bin/bash\necho 3 > /app/out.txt\n",
        "tests/test.sh": "#!/bin/bash\n[ -e /app/out.txt ] && echo 1 > /logs/verifier/reward.txt\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _backend() -> FakeBackend:
    """Tests that pass when /app/out.txt exists, whatever it holds (weak: an empty file passes)."""

    def tests(sb: FakeSandbox, call: FakeCall) -> None:
        sb.write_file("/logs/verifier/reward.txt", "1" if sb.exists("/app/out.txt") else "0")

    backend = FakeBackend()
    backend.register(r"/tests/test\.sh", tests)

    def solve(sb: FakeSandbox, call: FakeCall) -> None:
        sb.mkdir("/app", parents=True)
        sb.write_file("/app/out.txt", "3\n")

    backend.register(r"/solution/solve\.sh", solve)
    return backend


def _run(tmp_path: Path, probes: ProbeConfig, model_probes: ModelProbes) -> ValidationRun:
    config = ValidationConfig(repeats=1, check_leakage=False, probes=probes)
    return ValidationRun(tmp_path / "run", _backend(), config, model_probes=model_probes)


@pytest.mark.parametrize("mode", ["advisory", "blocking"])
def test_the_judge_in_validation_flags_and_blocks_only_when_asked(tmp_path: Path, mode: str) -> None:
    task = _tiny(tmp_path / "tiny")
    model = ScriptedModel([_answer(behavior_in_tests="the tests only check that /app/out.txt exists")])
    probes = ProbeConfig(judge=mode)  # type: ignore[arg-type]
    (rep,), summary = _run(tmp_path, probes, model_probes_for(probes, model)).run([task])
    assert rep.probes is not None and rep.probes.judge is not None
    assert rep.probes.judge.mode == mode and rep.probes.judge.model == "scripted"
    assert rep.probes.flags == ["judge:behavior-in-tests"]
    assert summary.probe_flags == {"judge:behavior-in-tests": 1} and summary.hackable == 0
    if mode == "advisory":
        assert rep.verdict == Verdict.VALID and rep.failed_checks == []
    else:
        assert rep.verdict == Verdict.INVALID and rep.failed_checks == ["judge:behavior-in-tests"]
    assert "probes" in rep.timings and len(model.calls) == 1


def test_a_judge_that_gives_no_answer_is_no_verdict_even_when_blocking(tmp_path: Path) -> None:
    task = _tiny(tmp_path / "tiny")
    probes = ProbeConfig(judge="blocking")
    model = ScriptedModel(["no idea", "still no idea"])
    (rep,), _ = _run(tmp_path, probes, model_probes_for(probes, model)).run([task])
    assert rep.verdict == Verdict.VALID and rep.probes is not None and rep.probes.judge is not None
    assert rep.probes.judge.error is not None and rep.probes.flags == []


def test_a_model_probe_without_a_model_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match="judge model"):
        _run(tmp_path, ProbeConfig(judge="advisory"), ModelProbes())
    with pytest.raises(UserInputError, match="solver model"):
        _run(tmp_path, ProbeConfig(adversarial_attempts=2), ModelProbes())
    assert model_probes_for(ProbeConfig(), ScriptedModel([])) == ModelProbes()  # nothing asked: nothing built


@pytest.mark.parametrize("guards", [False, True])
def test_an_adversary_that_plants_an_empty_output_flags_hackable_adversarial(tmp_path: Path, guards: bool) -> None:
    # guards: the agent settings of a small model's solver, whose submit over an empty output is refused; the
    # adversary's is not (that submit is the exploit under test)
    agent = AgentConfig(max_turns=4, outputs_before_submit=2 if guards else 0, review_before_submit=guards)
    task = _tiny(tmp_path / "tiny")
    model = ScriptedModel([_bash("mkdir -p /app && touch /app/out.txt"), SUBMIT])
    probes = ProbeConfig(adversarial_attempts=2)
    (rep,), summary = _run(tmp_path, probes, model_probes_for(probes, model, agent)).run([task])
    assert rep.verdict == Verdict.INVALID and rep.failed_checks == ["hackable:adversarial"]
    assert rep.probes is not None and rep.probes.adversarial is not None
    (attempt,) = rep.probes.adversarial.attempts  # the first confirmed attempt ends the probe
    assert attempt.reward == 1.0 and attempt.confirmed and attempt.commands == 1
    assert attempt.evidence == ["empty-output: mkdir -p /app && touch /app/out.txt"] and attempt.review is None
    assert [t.agent for t in rep.trials] == ["oracle", "nop", AGENT_NAME]
    assert "WITHOUT doing the task" in model.calls[0][1].content  # the adversarial prompt, with the instruction
    assert "/app/in.txt" in model.calls[0][1].content
    assert summary.hackable == 1 and summary.probe_flags == {"hackable:adversarial": 1}
    assert probe_counts([ProbeBrief.of(rep)]).hackable == 1


def test_a_rewarded_attempt_without_evidence_needs_the_judge_to_confirm_it(tmp_path: Path) -> None:
    task = _tiny(tmp_path / "tiny")
    honest = [_bash("mkdir -p /app && echo 3 > /app/out.txt"), SUBMIT]
    # Judge off: no evidence in the commands, nothing confirms it: recorded, not flagged.
    probes = ProbeConfig(adversarial_attempts=1)
    (rep,), summary = _run(tmp_path, probes, model_probes_for(probes, ScriptedModel(honest))).run([task])
    assert rep.verdict == Verdict.VALID and summary.hackable == 0
    assert rep.probes is not None and rep.probes.adversarial is not None
    (attempt,) = rep.probes.adversarial.attempts
    assert attempt.reward == 1.0 and not attempt.confirmed and attempt.evidence == []
    # Judge on: it reads the attempt; "did the task" keeps the task valid, "did not" confirms the exploit.
    for did_task, verdict in ((True, Verdict.VALID), (False, Verdict.INVALID)):
        review = json.dumps({"did_task": did_task, "explanation": "it wrote a number it never computed"})
        model = ScriptedModel([_answer(), *honest, review])
        probes = ProbeConfig(judge="advisory", adversarial_attempts=1)
        run = _run(tmp_path / str(did_task), probes, model_probes_for(probes, model))
        (rep,), _ = run.run([_tiny(tmp_path / f"tiny-{did_task}")])
        assert rep.verdict == verdict, rep.checks
        assert rep.probes is not None and rep.probes.adversarial is not None
        (attempt,) = rep.probes.adversarial.attempts
        assert attempt.review is not None and attempt.review.did_task is did_task
        assert attempt.confirmed is (not did_task)
        assert "echo 3 > /app/out.txt" in model.calls[-1][1].content  # the review saw the commands


def test_an_adversary_that_fails_on_every_attempt_is_an_error_not_a_pass(tmp_path: Path) -> None:
    task = _tiny(tmp_path / "tiny")
    probes = ProbeConfig(adversarial_attempts=2)
    (rep,), _ = _run(tmp_path, probes, model_probes_for(probes, ScriptedModel([]))).run([task])
    assert rep.verdict == Verdict.ERROR and rep.error is not None
    assert "failed on all 2 attempt(s)" in rep.error and "hackable:adversarial" not in [c.id for c in rep.checks]
    assert rep.probes is not None and rep.probes.adversarial is not None
    assert [a.error is not None for a in rep.probes.adversarial.attempts] == [True, True]
    # One failed attempt beside one that ran: the probe ran, and its detail says what failed.
    model = ScriptedModel([_bash("mkdir -p /app && echo 3 > /app/out.txt"), SUBMIT])
    (rep,), _ = _run(tmp_path / "b", probes, model_probes_for(probes, model)).run([_tiny(tmp_path / "tiny-b")])
    (check,) = [c for c in rep.checks if c.id == "hackable:adversarial"]
    assert rep.verdict == Verdict.VALID and check.passed
    assert "2 attempt(s), 1 rewarded, 1 failed (" in check.detail


def test_the_adversary_reads_its_commands_from_the_trajectory(tmp_path: Path) -> None:
    adversary = ModelAdversary(ScriptedModel([]))
    assert adversary.commands(tmp_path) == []  # no trajectory (an attempt that never started)
    assert adversary.agent().info.name == AGENT_NAME
