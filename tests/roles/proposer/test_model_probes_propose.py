"""The model probes in the proposer's ``check`` and in ``autoenv propose`` (issue 12): the feedback names the probe
that failed, a blocking judge rejects the candidate with its check id, and a probe asked for without a model is
refused up front. Scripted models on the scored fake backend: no Docker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from proposer_scripts import prompt_reply
from typer.testing import CliRunner

from autoenvscaling.cli import propose_cmd
from autoenvscaling.cli.app import app
from autoenvscaling.cli.common import probe_config
from autoenvscaling.errors import UserInputError
from autoenvscaling.llm.scripted import ScriptedModel
from autoenvscaling.roles.adversary import model_probes_for
from autoenvscaling.roles.judge import CRITERIA
from autoenvscaling.roles.proposer.domain import DomainContext
from autoenvscaling.roles.proposer.feedback import render_feedback
from autoenvscaling.roles.proposer.records import ProposalRecord
from autoenvscaling.roles.proposer.run import ProposeConfig, ProposeRun
from autoenvscaling.roles.proposer.tools import DraftTools, ToolsConfig
from autoenvscaling.roles.proposer.workshop import TEMPLATE_DIR, Workshop, stage_workshop
from autoenvscaling.sandbox import registry
from autoenvscaling.sandbox.fake import FakeBackend, FakeCall, FakeSandbox
from autoenvscaling.sandbox.fake_scored import ScoredFakeBackend, _empty_scan, write_scored_task
from autoenvscaling.validate import report as R
from autoenvscaling.validate.probes import ProbeConfig
from autoenvscaling.validate.validator import ValidationConfig

WHY = "the tests never check the sum's value"


def judge_answer(**fails: str) -> str:
    fail = {k.replace("_", "-"): v for k, v in fails.items()}
    items = [{"id": c, "outcome": "fail" if c in fail else "pass", "explanation": fail.get(c, "")} for c in CRITERIA]
    return json.dumps({"criteria": items})


def _report(*checks: R.CheckResult, judge: R.JudgeSummary | None = None) -> R.ValidationReport:
    failed = [c for c in checks if not c.passed]
    return R.ValidationReport(
        task_name="draft",
        task_path="draft",
        verdict=R.Verdict.INVALID if failed else R.Verdict.VALID,
        checks=list(checks),
        failed_checks=[c.id for c in failed],
        probes=R.ProbeReport(judge=judge),
    )


def test_the_feedback_names_the_failed_model_probe_and_its_fix(tmp_path: Path) -> None:
    draft = write_scored_task(tmp_path / "draft")
    judged = _report(R.CheckResult(id="judge:behavior-in-tests", passed=False, detail=WHY))
    fb = render_feedback(judged, draft, tmp_path / "trials", images=[])
    assert fb.problem.startswith("probe judge:behavior-in-tests: the alignment judge failed your draft")
    assert WHY in fb.problem and "check everything the instruction asks for" in fb.problem
    assert fb.files == ["tests/test.sh"]
    described = _report(R.CheckResult(id="judge:file-references", passed=False, detail=""))
    assert render_feedback(described, draft, tmp_path, images=[]).files == ["instruction.md"]
    evidence = "t__adversarial-1: reward 1; empty-output: touch /app/out.txt"
    cheated = _report(R.CheckResult(id=R.ADVERSARIAL, passed=False, detail=evidence))
    fb = render_feedback(cheated, draft, tmp_path / "trials", images=[])
    assert fb.problem.startswith("probe hackable:adversarial: a solver told to pass your tests WITHOUT doing")
    assert evidence in fb.problem and "sitecustomize" not in fb.problem  # not the shim's fix
    # A rule probe comes before the judge: the cheapest, most specific problem first.
    both = _report(cheated.checks[0], judged.checks[0])
    assert render_feedback(both, draft, tmp_path, images=[]).problem.startswith("probe hackable:adversarial")


def test_an_advisory_judge_leaves_notes_on_a_passed_check(tmp_path: Path) -> None:
    criterion = R.CriterionResult(id="anti-cheating", outcome="fail", explanation="a marker file is trusted")
    judge = R.JudgeSummary(model="m", mode="advisory", criteria=[criterion], flags=["judge:anti-cheating"])
    fb = render_feedback(_report(judge=judge), write_scored_task(tmp_path / "d"), tmp_path, images=[])
    assert fb.passed
    assert fb.notes == ["the alignment judge (advisory) flagged judge:anti-cheating: a marker file is trusted"]


def _workshop_tools(tmp_path: Path, domain: DomainContext, probes: ProbeConfig, model: ScriptedModel) -> DraftTools:
    """A workshop whose draft is a small scored task (new: no copy of a reference), checked on the scored fake."""
    backend = ScoredFakeBackend()
    staging = tmp_path / "stage"
    stage_workshop(staging, domain=domain, readme="r", digest_md="d", trial_dirs=[], start_dir=TEMPLATE_DIR)
    workshop = Workshop(backend, "autoenv/terminal:latest")
    workshop.start(staging)
    made = write_scored_task(tmp_path / "made")
    (made / "instruction.md").write_text("Reverse every line of /app/words.txt and write them to /app/out.txt.\n")
    sandbox = workshop.sandbox
    assert sandbox is not None
    sandbox.exec("rm -rf /workshop/task/tests /workshop/task/solution /workshop/task/environment")
    for f in sorted(p for p in made.rglob("*") if p.is_file()):
        sandbox.upload_text(f.read_bytes(), f"/workshop/task/{f.relative_to(made)}")
    validation = ValidationConfig(check_leakage=False, probes=probes)
    return DraftTools(
        workshop, backend, tmp_path / "ep", "t", config=ToolsConfig(max_checks=2), validation=validation,
        references=[TEMPLATE_DIR], model_probes=model_probes_for(probes, model),
    )  # fmt: skip


def test_the_workshop_check_runs_a_blocking_judge_and_names_it(tmp_path: Path, terminal_domain: DomainContext) -> None:
    model = ScriptedModel([judge_answer(behavior_in_tests=WHY)])
    tools = _workshop_tools(tmp_path, terminal_domain, ProbeConfig(judge="blocking"), model)
    out = tools.check()
    assert not out.ok and tools.checks[0].failed_checks == ["judge:behavior-in-tests"], out.text
    assert "Problem: probe judge:behavior-in-tests: the alignment judge failed your draft" in out.text
    assert WHY in out.text and len(model.calls) == 1


def test_a_model_probe_without_a_model_is_refused_before_any_work(
    tmp_path: Path, terminal_domain: DomainContext
) -> None:
    probes = ProbeConfig(enabled=True, judge="blocking")
    config = ProposeConfig(mode="prompt", validation=ValidationConfig(probes=probes))
    with pytest.raises(UserInputError, match="judge model"):
        ProposeRun(tmp_path / "out", ScoredFakeBackend(), ScriptedModel([]), terminal_domain, config)
    assert not (tmp_path / "out").exists()
    backend = ScoredFakeBackend()
    validation = ValidationConfig(probes=ProbeConfig(adversarial_attempts=1))
    with pytest.raises(UserInputError, match="solver model"):
        DraftTools(Workshop(backend, "autoenv/terminal:latest"), backend, tmp_path / "e", "t", validation=validation)


class SumBackend(FakeBackend):
    """The prompt reply's sum task on the fake: its solution writes 26 to /app/sum.txt, its tests want exactly 26
    (so the rule probes find nothing and the model probes run)."""

    def __init__(self) -> None:
        super().__init__()
        self.register(r"^(?!chmod).*/solution/solve\.sh", self._solve)
        self.register(r"^(?!chmod).*/tests/test\.sh", self._test)
        self.register(r"^find / -xdev .*; echo (\S+?)\$\{PIPESTATUS\[0\]\}", _empty_scan)

    @staticmethod
    def _solve(sb: FakeSandbox, _call: FakeCall) -> None:
        sb.mkdir("/app", parents=True)
        sb.write_file("/app/sum.txt", "26\n")

    @staticmethod
    def _test(sb: FakeSandbox, _call: FakeCall) -> None:
        ok = sb.is_file("/app/sum.txt") and sb.read_file("/app/sum.txt").decode().strip() == "26"
        sb.write_file("/logs/verifier/reward.txt", "1" if ok else "0")


@pytest.mark.parametrize("judge", ["blocking", "advisory"])
def test_autoenv_propose_with_a_blocking_judge_rejects_with_its_check_id(
    tmp_path: Path, judge: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(registry, "get_backend", lambda _name: SumBackend())
    # The rule probes need a real shell (they run on Docker); the model probes as the options ask.
    monkeypatch.setattr(propose_cmd, "probe_config", lambda _rules, j, k: probe_config(False, j, k))
    # The proposer's model writes the task (one prompt-only call), then judges it: the judge's model defaults to it.
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([prompt_reply(), judge_answer(behavior_in_tests=WHY)]))
    out = tmp_path / "out"
    args = ["propose", "--mode", "prompt", "--model", f"scripted:{script}", "--backend", "fake",
            "--out", str(out), "--judge", judge]  # fmt: skip
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    (record,) = [ProposalRecord.model_validate_json(ln) for ln in (out / "results.jsonl").read_text().splitlines()]
    lines = (out / "validation" / "results.jsonl").read_text().splitlines()
    (report,) = [R.ValidationReport.model_validate_json(ln) for ln in lines]
    assert report.probes is not None and report.probes.judge is not None
    assert report.probes.judge.model == "scripted:replies.json" and report.probes.flags == ["judge:behavior-in-tests"]
    if judge == "blocking":
        assert record.verdict == "invalid" and record.failed_checks == ["judge:behavior-in-tests"]
    else:
        assert record.verdict == "valid" and record.failed_checks == []


def test_autoenv_propose_refuses_an_unknown_judge_mode(tmp_path: Path) -> None:
    res = CliRunner().invoke(app, ["propose", "--model", "scripted:x.json", "--judge", "sometimes"])
    assert res.exit_code == 2 and "expected off, advisory or blocking" in res.output
