"""What every stage of a round gets: the run's config, paths, backend and pool, the models of this round, and
where to report progress."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from autoenvscaling.execution.executors import Executor, get_executor
from autoenvscaling.flywheel.backend import RunBackend
from autoenvscaling.flywheel.config import FlywheelConfig
from autoenvscaling.flywheel.layout import RunPaths
from autoenvscaling.llm.base import Model
from autoenvscaling.llm.config import ModelConfig
from autoenvscaling.llm.factory import open_model
from autoenvscaling.pool import Pool
from autoenvscaling.roles.proposer.domain import DomainContext
from autoenvscaling.roles.solver_factory import solver_agents
from autoenvscaling.verify.trial_agents import TrialAgent


class Events(Protocol):
    """Progress of a run, for a progress display. Every method may be called from worker threads."""

    def stage_started(self, round_: int, stage: str, total: int | None) -> None: ...

    def advance(self, round_: int, stage: str, note: str = "") -> None: ...

    def stage_finished(self, round_: int, stage: str, summary: str, *, skipped: bool) -> None: ...

    def message(self, text: str) -> None: ...


class NullEvents:
    def stage_started(self, round_: int, stage: str, total: int | None) -> None:
        return None

    def advance(self, round_: int, stage: str, note: str = "") -> None:
        return None

    def stage_finished(self, round_: int, stage: str, summary: str, *, skipped: bool) -> None:
        return None

    def message(self, text: str) -> None:
        return None


@dataclass
class RoundContext:
    n: int
    paths: RunPaths
    config: FlywheelConfig
    backend: RunBackend
    pool: Pool
    domains: dict[str, DomainContext]
    solver: ModelConfig  # this round's solver (a trained endpoint after a train stage)
    proposer: ModelConfig
    events: Events

    def stage_dir(self, stage: str) -> Path:
        return self.paths.stage_dir(self.n, stage)

    @contextmanager
    def solver_factory(self) -> Iterator[tuple[Callable[[], TrialAgent], str]]:
        """A fresh solver model for one stage (a scripted model restarts its script), and its name. On Ray the
        factory carries the model's config and each worker opens the model."""
        with solver_agents(self.solver, self.config.solver, remote=self.config.executor.kind != "local") as made:
            yield made

    @contextmanager
    def executor(self) -> Iterator[Executor | None]:
        """Where a stage's attempts run: None (the stage's own threads) or the configured remote executor."""
        if self.config.executor.kind == "local":
            yield None
            return
        executor = get_executor(self.config.executor)
        try:
            yield executor
        finally:
            executor.close()

    @contextmanager
    def proposer_model(self) -> Iterator[Model]:
        with open_model(self.proposer) as model:
            yield model
