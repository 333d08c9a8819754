"""A validation run over many tasks: run dir, concurrency, crash-safe results.jsonl, resume, summary.

Run dir layout::

    runs/<run-id>/
      config.resolved.toml
      results.jsonl        one ValidationReport per finished task (appended + fsynced as each finishes)
      summary.json         counts per verdict and failed check, phase totals
      trials/<task>__oracle-1/ ...   Harbor trial dirs (result.json, agent/, verifier/)

``resume`` skips tasks whose (path, content hash) already has a line in results.jsonl, discards a torn last
line, clears the unfinished tasks' trial dirs, and removes containers a crashed process left behind.
"""

from __future__ import annotations

import json
import shutil
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from autoenvscaling.sandbox.base import SandboxBackend
from autoenvscaling.tasks.model import task_content_hash
from autoenvscaling.validate.report import HACKABLE_PREFIX, ValidationReport, ValidationSummary
from autoenvscaling.validate.validator import TaskValidator, ValidationConfig
from autoenvscaling.verify.environment import EnvironmentBuilder
from autoenvscaling.verify.runlog import ResultsLog, write_resolved_config
from autoenvscaling.verify.trial import write_json_atomic

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
    ) -> None:
        self.run_dir = run_dir
        self.backend = backend
        self.config = config
        self.concurrency = max(1, concurrency)
        self.aliases = dict(aliases or {})
        self.builder = EnvironmentBuilder(backend, aliases=self.aliases, force_build=force_build)
        self.log = ResultsLog(run_dir / "results.jsonl", ValidationReport)
        self.trials_dir = run_dir / "trials"

    @property
    def run_id(self) -> str:
        return self.run_dir.name

    def _save_config(self, task_dirs: list[Path]) -> None:
        resolved = {
            "validation": self.config.model_dump(),
            "concurrency": self.concurrency,
            "backend": self.backend.name,
            "image_aliases": self.aliases,
            "tasks": [str(t) for t in task_dirs],
        }
        write_resolved_config(self.run_dir, resolved)

    def pending(self, task_dirs: list[Path], done: list[ValidationReport]) -> list[Path]:
        finished = {(r.task_path, r.content_hash) for r in done}
        finished_paths = {r.task_path for r in done if r.content_hash is None}
        todo = []
        for t in task_dirs:
            if str(t) in finished_paths or (str(t), task_content_hash(t)) in finished:
                continue
            todo.append(t)
        return todo

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
        done = self.log.load() if resume else []
        if not resume:
            self.log.reset()
        if resume:
            self.backend.cleanup(self.run_id)
        self._save_config(task_dirs)
        todo = self.pending(task_dirs, done)
        for t in todo:  # partial trial dirs of unfinished tasks are redone from scratch
            for d in self.trials_dir.glob(f"{t.name}__*"):
                shutil.rmtree(d, ignore_errors=True)
        validator = TaskValidator(self.backend, self.builder, self.config, self.trials_dir, run_id=self.run_id)
        started = time.perf_counter()
        reports = list(done)
        try:
            with ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="validate") as pool:
                futures = [pool.submit(validator.validate, t, _status_for(t.name, on_status)) for t in todo]
                for fut in as_completed(futures):
                    report = fut.result()
                    self.log.append(report)
                    reports.append(report)
                    on_done(report)
        finally:
            validator.close()
        order = {str(t): i for i, t in enumerate(task_dirs)}
        reports.sort(key=lambda r: order.get(r.task_path, len(order)))
        summary = summarize(self.run_dir, reports, time.perf_counter() - started)
        write_json_atomic(self.run_dir / "summary.json", json.dumps(summary.model_dump(), indent=2))
        return reports, summary
