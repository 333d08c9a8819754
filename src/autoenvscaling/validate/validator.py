"""Validate one task: lint, build, leakage, oracle x K in fresh containers, nop; then a verdict.

The rule probes (``probes.py``) need only the pristine sandbox of the leakage scan, so they start as soon as the
first oracle run scored 1 and run beside the other oracle runs and the nop run; their checks are kept only when
every other check passed, as if they had run last.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from pydantic import BaseModel, Field

from autoenvscaling.errors import UserInputError
from autoenvscaling.images.catalog import catalog_names
from autoenvscaling.sandbox.base import BuildError, ImageUnusableError, Sandbox, SandboxBackend, StorageLimitError
from autoenvscaling.tasks import Task, TaskFormatError, load_task
from autoenvscaling.tasks.config import NetworkMode
from autoenvscaling.tasks.lint import lint_task
from autoenvscaling.validate import report as R
from autoenvscaling.validate.leakage import ImageIndex, check_leakage, scan_image
from autoenvscaling.validate.model_probes import ModelProbes, adversarial_probe, judge_probe
from autoenvscaling.validate.probes import ProbeConfig, ProbeRun
from autoenvscaling.verify.environment import EnvironmentBuilder
from autoenvscaling.verify.errors import VerifierError
from autoenvscaling.verify.results import TrialResult, is_solved, utcnow
from autoenvscaling.verify.secrets import passed_env
from autoenvscaling.verify.trial import TrialOptions, TrialRunner
from autoenvscaling.verify.trial_agents import NopAgent, OracleAgent, TrialAgent

Status = Callable[[str], None]
_REWARD_EPS = 1e-9
_BLOCKING_RULES = frozenset(
    {
        "task-toml-invalid",
        "missing-instruction",
        "missing-dockerfile",
        "missing-test-script",
        "missing-solution",
    }
)


@dataclass(frozen=True)
class _ProbeOutcome:
    report: R.ProbeReport
    checks: list[R.CheckResult]
    wall_sec: float  # the probes' own time; it overlaps oracle trials 2..K and the nop run


class ValidationConfig(BaseModel):
    repeats: int = Field(default=3, ge=1, description="oracle runs in fresh containers; all must score 1")
    run_nop: bool = Field(default=True, description="run the do-nothing agent; it must score 0")
    check_leakage: bool = True
    pass_env: list[str] = Field(
        default_factory=list, description="host variables ${VAR} in a task's env tables may expand to (none by default)"
    )
    network: bool = Field(default=True, description="False: no phase of any trial gets a network (drafts)")
    probes: ProbeConfig = Field(
        default_factory=ProbeConfig,
        description="quality probes, kept when the other checks pass (off here; on for generated environments)",
    )
    remove_in_background: bool = Field(
        default=True, description="remove each trial's containers while the next trial runs (the run waits for them)"
    )

    def trial_options(self) -> TrialOptions:
        return TrialOptions(
            passed_env=passed_env(self.pass_env),
            network=None if self.network else False,
            remove_in_background=self.remove_in_background,
        )


def _verifier_check(result: TrialResult) -> str | None:
    """The check id of a verifier failure recorded on a trial (the task's fault), else None."""
    info = result.exception_info
    if info is None or result.verifier_result is not None:
        return None
    for cls in VerifierError.__subclasses__():
        if info.exception_type == cls.__name__:
            return cls.check_id
    return None


class TaskValidator:
    """Validates tasks with one backend/builder; safe to call from several threads."""

    def __init__(
        self,
        backend: SandboxBackend,
        builder: EnvironmentBuilder,
        config: ValidationConfig,
        trials_dir: Path,
        run_id: str | None = None,
        model_probes: ModelProbes | None = None,
    ) -> None:
        """``model_probes``: the judge and adversary that ``config.probes`` asks for (a ``UserInputError`` when
        it asks for one that is missing)."""
        self.model_probes = model_probes or ModelProbes()
        self.model_probes.require(config.probes)
        self.backend = backend
        self.builder = builder
        self.config = config
        self.trials_dir = trials_dir
        self.options = config.trial_options()
        self.runner = TrialRunner(backend, builder, run_id=run_id, options=self.options)

    def validate(self, task_dir: Path, status: Status = lambda _: None) -> R.ValidationReport:
        started = utcnow()
        t0 = time.perf_counter()
        rep = R.ValidationReport(task_name=task_dir.name, task_path=str(task_dir), verdict=R.Verdict.VALID)
        rep.started_at = started
        try:
            self._pipeline(task_dir, rep, status)
        except ImageUnusableError as e:  # the task's image, not our infrastructure
            rep.checks.append(R.CheckResult(id=R.IMAGE_UNUSABLE, passed=False, detail=str(e)[-2000:]))
        except StorageLimitError as e:  # the task filled its disk (in the leakage scan: the image itself did)
            rep.checks.append(R.CheckResult(id=R.STORAGE_LIMIT, passed=False, detail=str(e)[-2000:]))
        except UserInputError as e:  # unsupported or unreadable task: said clearly, as an error
            rep.verdict, rep.error = R.Verdict.ERROR, str(e)
        except Exception as e:  # infrastructure
            rep.verdict, rep.error = R.Verdict.ERROR, f"{type(e).__name__}: {e}"
        rep.timings["total"] = time.perf_counter() - t0
        rep.finished_at = utcnow()
        if rep.verdict != R.Verdict.ERROR:
            rep.verdict = self._verdict(rep)
        return rep

    @staticmethod
    def _verdict(rep: R.ValidationReport) -> R.Verdict:
        rep.failed_checks = sorted({c.id for c in rep.checks if not c.passed})
        if not rep.failed_checks:
            return R.Verdict.VALID
        if all(c in R.TIMEOUT_CHECKS for c in rep.failed_checks):
            return R.Verdict.TIMEOUT
        return R.Verdict.INVALID

    def _pipeline(self, task_dir: Path, rep: R.ValidationReport, status: Status) -> None:
        t = time.perf_counter()
        status("lint")
        findings = lint_task(task_dir, known_images=catalog_names())
        rep.lint = [R.LintSummary(rule=f.rule, severity=f.severity, message=f.message) for f in findings]
        rep.checks += [
            R.CheckResult(id=f"lint:{f.rule}", passed=False, detail=f.message)
            for f in findings
            if f.severity == "error"
        ]
        rep.timings["lint"] = time.perf_counter() - t
        if any(f.rule in _BLOCKING_RULES for f in findings):
            return  # nothing to build or run
        try:
            task = load_task(task_dir)
        except TaskFormatError:
            return  # lint already reported task-toml-invalid / missing files
        rep.task_name, rep.content_hash = task.name, task.content_hash()

        t = time.perf_counter()
        status("build")
        try:
            rep.image = self.builder.image_for(task)
        except BuildError as e:
            if (unreachable := unreachable_image(e)) is not None:
                rep.verdict, rep.error = R.Verdict.ERROR, unreachable
                return
            cid = R.BUILD_TIMEOUT if e.timed_out else R.BUILD
            rep.checks.append(R.CheckResult(id=cid, passed=False, detail=f"{e}\n{e.log_tail}"[-2000:]))
            return
        finally:
            rep.timings["build"] = time.perf_counter() - t

        self.runner.prewarm(task)  # oracle-1's sandbox starts while the leakage scan runs
        with contextlib.ExitStack() as stack:
            pristine: Sandbox | None = None  # the leakage scan's sandbox, kept untouched for the probes
            index: ImageIndex = {}
            if self.config.check_leakage:
                t = time.perf_counter()
                status("leakage")
                pristine = stack.enter_context(self._pristine(task, rep.image))
                index = scan_image(pristine)
                rep.checks += check_leakage(task, pristine, index)
                rep.timings["leakage"] = time.perf_counter() - t
            probing: list[Future[_ProbeOutcome]] = []

            def start_probes(first: TrialResult) -> None:
                """Once oracle 1 scored 1, the rule probes run in the pristine sandbox beside the other trials."""
                if not (self.config.probes.enabled and is_solved(first.reward) and all(c.passed for c in rep.checks)):
                    return
                limit = 2 * first.phase_seconds().get("agent_execution", 0.0) + 30  # a hanging solution ends
                assert rep.image is not None  # built above
                pool = stack.enter_context(ThreadPoolExecutor(1, thread_name_prefix="aes-probes"))
                probing.append(pool.submit(self._rule_probes, task, rep.image, pristine, index, limit))

            self._oracle_runs(task, rep, status, after_first=start_probes)
            if self.config.run_nop:
                t = time.perf_counter()
                status("nop")
                res = self._trial(task, NopAgent(), "nop", rep)
                reward = res.reward
                if reward is not None:
                    rep.checks.append(
                        R.CheckResult(id=R.NOP, passed=reward <= _REWARD_EPS, detail=f"reward {reward:g}")
                    )
                rep.timings["nop"] = time.perf_counter() - t
            if probing:
                status("probes")
                outcome = probing[0].result()
                if all(c.passed for c in rep.checks):  # as if run after the other checks: kept only then
                    rep.checks += outcome.checks
                    rep.probes = outcome.report
                    rep.timings["probes"] = outcome.wall_sec
        if self.config.probes.model_probes and all(c.passed for c in rep.checks):
            self._model_probes(task, rep, status)

    def _model_probes(self, task: Task, rep: R.ValidationReport, status: Status) -> None:
        """The judge and the adversarial solver (``model_probes.py``), after the rule probes."""
        cfg, probes = self.config.probes, self.model_probes
        report = rep.probes = rep.probes or R.ProbeReport()
        if task.config.is_multi_step:
            report.notes.append("multi-step task: no model probe")
            return
        if cfg.judge != "off" and probes.judge is not None:
            t = time.perf_counter()
            status("probes: judge")
            rep.checks += judge_probe(task, probes.judge, cfg.judge, report)
            report.timings["judge"] = round(time.perf_counter() - t, 3)
        if cfg.adversarial_attempts > 0 and probes.adversary is not None:
            t = time.perf_counter()
            status("probes: adversarial solver")

            def run_trial(agent: TrialAgent, label: str) -> tuple[TrialResult, Path]:
                trial_dir = self.trials_dir / f"{task.name}__{label}"
                res = self.runner.run(task, agent, trial_dir)
                rep.trials.append(_trial_summary(res, agent))
                return res, trial_dir

            rep.checks += adversarial_probe(task, probes.adversary, cfg.adversarial_attempts, run_trial, report)
            report.timings["adversarial"] = round(time.perf_counter() - t, 3)
        rep.timings["probes"] = rep.timings.get("probes", 0.0) + sum(
            report.timings.get(k, 0.0) for k in ("judge", "adversarial")
        )

    def _rule_probes(
        self, task: Task, image: str, pristine: Sandbox | None, index: ImageIndex, limit: float
    ) -> _ProbeOutcome:
        """The rule probes (``probes.py``) in the leakage scan's sandbox, or in one of their own without a scan."""
        t = time.perf_counter()
        with contextlib.ExitStack() as stack:
            if pristine is None:
                pristine = stack.enter_context(self._pristine(task, image))
                index = scan_image(pristine) if self.config.probes.answer_leak else {}
            probe = ProbeRun(task, pristine, self.config.probes, self.options.passed_env, index, limit)
            checks = probe.run()
        return _ProbeOutcome(report=probe.report, checks=checks, wall_sec=time.perf_counter() - t)

    @contextlib.contextmanager
    def _pristine(self, task: Task, image: str) -> Iterator[Sandbox]:
        """A started sandbox of the task's image (and its services), removed on exit.

        For the leakage scan alone it has the network the agent phase has: a service that installs what it runs
        when it starts (``uv run`` of a script with inline dependencies, as Harbor's MCP recipes do) becomes
        healthy there as it does in the trials, where without a network it never would and the whole validation
        was an error. The rule probes run in it too and want it without network, so with them on it has none."""
        agent_network = task.config.agent_network_mode != NetworkMode.NO_NETWORK
        network = agent_network and self.runner.options.network is not False and not self.config.probes.enabled
        spec = self.builder.spec_for(
            task, image, name_hint=f"{task.name}__leakage", run_id=self.runner.run_id, network=network
        )
        with self.backend.create(spec) as sandbox:
            sandbox.start()
            yield sandbox

    def _oracle_runs(
        self,
        task: Task,
        rep: R.ValidationReport,
        status: Status,
        after_first: Callable[[TrialResult], None] = lambda _: None,
    ) -> None:
        t = time.perf_counter()
        rewards: list[float] = []
        timed_out = False
        for i in range(1, self.config.repeats + 1):
            status(f"oracle {i}/{self.config.repeats}")
            last = i == self.config.repeats and not self.config.run_nop
            oracle = OracleAgent(self.options.passed_env)
            res = self._trial(task, oracle, f"oracle-{i}", rep, prewarm_next=not last)
            if res.exception_info and res.exception_info.exception_type == "AgentTimeoutError":
                timed_out = True
            if res.reward is not None:  # a run with no reward is already a failed check of its own
                rewards.append(res.reward)
            if i == 1:
                after_first(res)
        rep.timings["oracle"] = time.perf_counter() - t
        if not rewards and not timed_out:
            return
        passes = sum(is_solved(r) for r in rewards)
        detail = f"{passes}/{len(rewards)} runs scored 1 (rewards: {', '.join(f'{r:g}' for r in rewards)})"
        if timed_out:
            rep.checks.append(R.CheckResult(id=R.ORACLE_TIMEOUT, passed=False, detail=detail))
        elif passes == len(rewards):
            rep.checks.append(R.CheckResult(id=R.ORACLE, passed=True, detail=detail))
        elif passes == 0:
            rep.checks.append(R.CheckResult(id=R.ORACLE, passed=False, detail=detail))
        else:
            rep.checks.append(R.CheckResult(id=R.ORACLE_FLAKY, passed=False, detail=detail))

    def close(self) -> None:
        """Stop spares and wait for the trials' container removals; call once no more tasks will be validated."""
        self.runner.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _trial(
        self, task: Task, agent: TrialAgent, label: str, rep: R.ValidationReport, prewarm_next: bool = False
    ) -> TrialResult:
        res = self.runner.run(task, agent, self.trials_dir / f"{task.name}__{label}", prewarm_next=prewarm_next)
        err = res.exception_info
        if err is not None and err.exception_type == ImageUnusableError.__name__:
            raise ImageUnusableError(err.exception_message)
        rep.trials.append(_trial_summary(res, agent))
        check = R.STORAGE_LIMIT if err is not None and err.exception_type == StorageLimitError.__name__ else None
        check = check or _verifier_check(res)
        if check is not None:
            assert err is not None
            rep.checks.append(R.CheckResult(id=check, passed=False, detail=f"{label}: {err.exception_message}"))
        elif err is not None and res.verifier_result is None:
            # Not the task's fault as far as we can tell: the infrastructure failed.
            raise RuntimeError(f"{label} trial failed: {err.exception_type}: {err.exception_message}")
        return res


def _trial_summary(res: TrialResult, agent: TrialAgent) -> R.TrialSummary:
    err = res.exception_info
    return R.TrialSummary(
        trial_name=res.trial_name,
        agent=agent.info.name,
        reward=res.reward,
        rewards=res.rewards,
        error=f"{err.exception_type}: {err.exception_message}" if err else None,
        phases=res.phase_seconds(),
        commands=res.command_seconds,
    )


# A registry's API that did not answer: the engine's request for an image (``FROM``, ``COPY --from``) failed before
# any reply ("pull access denied" and "manifest unknown" are replies, and stay the task's `build` failure).
_REGISTRY_UNREACHABLE = re.compile(
    r'Get "https?://(?P<registry>[^/"]+)/v2/[^"]*": (?:dial tcp|proxyconnect|net/http|x509|tls|read tcp|EOF'
    r"|context deadline)"
)
_COPY_FROM_IMAGE = re.compile(r"invalid from flag value (\S+):")
_FROM_STEP = re.compile(r"^Step \d+/\d+ : FROM (?:--\S+ )*(\S+)", re.IGNORECASE | re.MULTILINE)


def unreachable_image(error: BuildError) -> str | None:
    """The error of a build that failed because an image could not be fetched from its registry (this machine
    cannot reach it), else None. Harbor fails such a trial as an environment error, never a score; here it is the
    verdict `error` with the image to alias, not `invalid` (the task is not at fault)."""
    text = f"{error}\n{error.log_tail}"
    found = _REGISTRY_UNREACHABLE.search(text)
    if found is None:
        return None
    copy_from = _COPY_FROM_IMAGE.search(text)
    steps = _FROM_STEP.findall(error.log_tail)
    image = copy_from.group(1) if copy_from else (steps[-1] if steps else None)
    alias = f"--image-alias {image}=<local image>" if image else "--image-alias IMAGE=<local image>"
    what = f"the image {image}" if image else "an image of the build"
    return (
        f"BuildError: {what} cannot be fetched here (registry {found.group('registry')} did not answer); "
        f"nothing is pulled for a task: build it locally and use {alias}"
    )
