"""A validation run over many tasks on the execution layer's item runner: run dir, results.jsonl, resume, summary.

Run dir layout::

    runs/<run-id>/
      config.resolved.toml
      results.jsonl        one ValidationReport per finished task (appended + fsynced as each finishes)
      summary.json         counts per verdict and failed check, phase totals
      trials/<task>__oracle-1/ ...   Harbor trial dirs (result.json, agent/, verifier/)

``resume`` skips tasks whose (path, content hash) already has a line in results.jsonl, discards a torn last
line, clears the unfinished tasks' trial dirs, and removes containers a crashed process left behind. On a remote
executor (Ray) each task travels to a worker as an archive and its trial dirs come back to this process.
"""

from __future__ import annotations

import json
import shutil
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from autoenvscaling.execution.executors import Executor
from autoenvscaling.execution.portable import Delivery, PortableWork, ship
from autoenvscaling.execution.rundir import ResultsLog, write_atomic, write_resolved_config
from autoenvscaling.execution.runner import ItemRunner
from autoenvscaling.sandbox.base import SandboxBackend
from autoenvscaling.sandbox.registry import shared_backend
from autoenvscaling.tasks.model import task_content_hash
from autoenvscaling.validate.model_probes import ModelProbes
from autoenvscaling.validate.report import HACKABLE_PREFIX, ValidationReport, ValidationSummary, Verdict
from autoenvscaling.validate.validator import TaskValidator, ValidationConfig
from autoenvscaling.verify.environment import EnvironmentBuilder

OnStatus = Callable[[str, str], None]  # (task name, phase)
OnDone = Callable[[ValidationReport], None]


def summarize(run_dir: Path, reports: list[ValidationReport], wall_sec: float) -> ValidationSummary:
    phases: dict[str, float] = {}
    for r in reports:
        for trial in r.trials:
            for k, v in trial.phases.items():
                phases[k] = phases.get(k, 0.0) + v
        for k in ("build", "leakage", "lint", "probes"):
            phases[k] = phases.get(k, 0.0) + r.timings.get(k, 0.0)
    probed = [r.probes for r in reports if r.probes is not None]
    scores = [p.mutation_score for p in probed if p.mutation_score is not None]
    return ValidationSummary(
        probed=len(probed),
        hackable=sum(any(f.startswith(HACKABLE_PREFIX) for f in p.flags) for p in probed),
        probe_flags=dict(Counter(f for p in probed for f in p.flags)),
        mutation_score_mean=round(sum(scores) / len(scores), 3) if scores else None,
        run_dir=str(run_dir),
        total=len(reports),
        by_verdict=dict(Counter(r.verdict.value for r in reports)),
        failed_checks=dict(Counter(c for r in reports for c in r.failed_checks)),
        wall_sec=wall_sec,
        phase_sec={k: round(v, 3) for k, v in sorted(phases.items())},
        tasks={r.task_path: r.verdict.value for r in reports},
    )


def _status_for(name: str, on_status: OnStatus) -> Callable[[str], None]:
    return lambda phase: on_status(name, phase)


def _report_key(r: ValidationReport) -> str:
    return f"{r.task_path}@{r.content_hash}"


def _validate(validator: TaskValidator, task_dir: Path, status: Callable[[str], None]) -> ValidationReport:
    report = validator.validate(task_dir, status)
    if report.content_hash is None:  # a task that did not load: its files' hash is still its resume key
        report.content_hash = task_content_hash(task_dir)
    return report


@dataclass(frozen=True)
class RemoteValidation:
    """The validation of one task on a worker (a Ray task): the backend is made there, by name."""

    backend: str
    config: ValidationConfig
    run_id: str
    aliases: dict[str, str] = field(default_factory=dict)
    force_build: bool = False
    model_probes: ModelProbes | None = None  # travels pickled: a model client that does not pickle fails here

    def __call__(self, task_dir: Path, trials_dir: Path, _extra: str) -> ValidationReport:
        backend = shared_backend(self.backend)
        builder = EnvironmentBuilder(backend, aliases=self.aliases, force_build=self.force_build)
        with TaskValidator(
            backend, builder, self.config, trials_dir, run_id=self.run_id, model_probes=self.model_probes
        ) as validator:
            return _validate(validator, task_dir, lambda _phase: None)


class ValidationRun:
    def __init__(
        self,
        run_dir: Path,
        backend: SandboxBackend,
        config: ValidationConfig,
        *,
        aliases: dict[str, str] | None = None,
        concurrency: int = 1,
        force_build: bool = False,
        executor: Executor | None = None,
        backend_name: str | None = None,
        model_probes: ModelProbes | None = None,
    ) -> None:
        """``backend_name`` (default ``backend.name``) is how a remote executor's workers make their backend;
        ``model_probes`` the judge and adversary ``config.probes`` asks for (``validate/model_probes.py``)."""
        self.model_probes = model_probes or ModelProbes()
        self.model_probes.require(config.probes)
        self.run_dir = run_dir
        self.backend = backend
        self.config = config
        self.concurrency = max(1, concurrency)
        self.aliases = dict(aliases or {})
        self.force_build = force_build
        self.builder = EnvironmentBuilder(backend, aliases=self.aliases, force_build=force_build)
        self.log = ResultsLog(run_dir / "results.jsonl", ValidationReport)
        self.trials_dir = run_dir / "trials"
        self.executor = executor
        self.backend_name = backend_name or backend.name

    @property
    def run_id(self) -> str:
        return self.run_dir.name

    def _save_config(self, task_dirs: list[Path]) -> None:
        resolved = {
            "validation": self.config.model_dump(),
            "concurrency": self.concurrency,
            "backend": self.backend_name,
            "executor": self.executor.name if self.executor else "local",
            "image_aliases": self.aliases,
            "tasks": [str(t) for t in task_dirs],
        }
        write_resolved_config(self.run_dir, resolved)

    def _runner(self) -> ItemRunner[tuple[Path, str], ValidationReport]:
        def item_key(item: tuple[Path, str]) -> str:
            return f"{item[0]}@{item[1]}"

        return ItemRunner(
            self.log, item_key=item_key, result_key=_report_key, executor=self.executor, concurrency=self.concurrency
        )

    def run(
        self,
        task_dirs: list[Path],
        *,
        resume: bool = False,
        on_status: OnStatus = lambda _t, _p: None,
        on_done: OnDone = lambda _r: None,
    ) -> tuple[list[ValidationReport], ValidationSummary]:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.trials_dir.mkdir(exist_ok=True)
        runner = self._runner()
        runner.resume(resume)
        if resume:
            self.backend.cleanup(self.run_id)
        self._save_config(task_dirs)
        items = [(t, task_content_hash(t)) for t in task_dirs]
        for t, _ in runner.pending(items):  # partial trial dirs of unfinished tasks are redone from scratch
            for d in self.trials_dir.glob(f"{t.name}__*"):
                shutil.rmtree(d, ignore_errors=True)
        started = time.perf_counter()
        if runner.executor.remote:
            remote = PortableWork(
                RemoteValidation(
                    self.backend_name, self.config, self.run_id, self.aliases, self.force_build, self.model_probes
                )
            )
            trials = self.trials_dir
            reports = runner.run(
                items,
                remote,
                send=lambda item: ship(f"{item[0]}", item[0], trials),
                land=_land,
                lost=_lost,
                on_done=on_done,
            )
        else:
            with TaskValidator(
                self.backend,
                self.builder,
                self.config,
                self.trials_dir,
                run_id=self.run_id,
                model_probes=self.model_probes,
            ) as validator:
                reports = runner.run(
                    items,
                    lambda item: _validate(validator, item[0], _status_for(item[0].name, on_status)),
                    on_done=on_done,
                )
        summary = summarize(self.run_dir, reports, time.perf_counter() - started)
        write_atomic(self.run_dir / "summary.json", json.dumps(summary.model_dump(), indent=2))
        return reports, summary


def _land(delivery: Delivery[ValidationReport]) -> ValidationReport:
    return delivery.land(ValidationReport)


def _lost(item: tuple[Path, str], why: str) -> ValidationReport:
    """A task whose validation the executor lost for good: an infrastructure error, like one the validator meets."""
    task_dir, content_hash = item
    return ValidationReport(
        task_name=task_dir.name,
        task_path=str(task_dir),
        content_hash=content_hash,
        verdict=Verdict.ERROR,
        error=f"ExecutorError: {why}",
    )
