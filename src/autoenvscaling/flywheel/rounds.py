"""The flywheel: rounds of solve -> digest -> propose -> validate -> dedup -> calibrate -> export -> train ->
evaluate -> metrics over one pool, resumable after a crash at any point.

Each stage reads the outputs of earlier stages from disk and writes its own ``output.json`` last (see
``layout``). ``run`` walks every round and stage in order: finished stages are read back, the first unfinished
one is (re)done, and so on; so ``resume`` is ``run`` on an existing run dir. The solver of round n+1 is the one
round n's train stage reported (the same model when the train stage is ``none``); when no proposer model is
configured, the solver's model proposes too, trained or not (co-evolution).
"""

from __future__ import annotations

import contextlib
import time
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import tomli_w
from pydantic import ValidationError

from autoenvscaling.errors import UserInputError
from autoenvscaling.execution.rundir import new_run_id, write_atomic
from autoenvscaling.flywheel import crash
from autoenvscaling.flywheel.backend import RunBackend
from autoenvscaling.flywheel.config import FlywheelConfig, apply_overrides, first_error
from autoenvscaling.flywheel.context import Events, NullEvents, RoundContext
from autoenvscaling.flywheel.domains import resolve_domain
from autoenvscaling.flywheel.layout import RunPaths, read_output, run_lock, write_output
from autoenvscaling.flywheel.metrics import MetricsOutput, RoundMetrics, compute_metrics
from autoenvscaling.flywheel.records import (
    CalibrateOutput,
    DedupOutput,
    DigestOutput,
    EvaluateOutput,
    ExportOutput,
    ProposeOutput,
    SolveOutput,
    StageOutput,
    TrainOutput,
    ValidateOutput,
)
from autoenvscaling.flywheel.stages_pool import run_calibrate, run_dedup
from autoenvscaling.flywheel.stages_propose import run_propose, run_validate
from autoenvscaling.flywheel.stages_solve import run_digest, run_evaluate, run_solve
from autoenvscaling.flywheel.stages_train import run_export, run_train
from autoenvscaling.llm.config import ModelConfig
from autoenvscaling.llm.factory import open_model
from autoenvscaling.pool import EnvStatus, Pool
from autoenvscaling.roles.tuning import resolve_mode, tune_roles
from autoenvscaling.sandbox.base import SandboxBackend

OutT = TypeVar("OutT", bound=StageOutput)


def summarize_stage(out: StageOutput) -> str:
    """One line for the progress display."""
    if isinstance(out, SolveOutput | EvaluateOutput):
        scored = sum(t.scored for t in out.tasks)
        return f"{sum(t.passes for t in out.tasks)}/{scored} attempts solved on {len(out.tasks)} tasks"
    if isinstance(out, ProposeOutput):
        return f"{sum(g.result.candidate_dir is not None for g in out.generations)}/{len(out.generations)} candidates"
    if isinstance(out, ValidateOutput):
        return f"{sum(r.is_valid for r in out.records)}/{len(out.records)} valid"
    if isinstance(out, DedupOutput):
        added, rejected = sum(a.valid_new for a in out.adds), sum(a.outcome == "rejected" for a in out.adds)
        kept = sum(a.outcome == "added" for a in out.adds) - added
        kept_note = f", {kept} invalid kept for dedup" if kept else ""
        return f"{added} added, {rejected} near-duplicates rejected{kept_note}"
    if isinstance(out, CalibrateOutput):
        return f"{sum(c.status == EnvStatus.LEARNABLE for c in out.calibrations)}/{len(out.calibrations)} learnable"
    if isinstance(out, ExportOutput):
        return f"{out.learnable} learnable envs, {out.sft_examples} SFT examples -> {out.export_dir}"
    if isinstance(out, TrainOutput):
        return out.error or (f"new solver {out.solver.name}" if out.solver else f"train: {out.kind}")
    if isinstance(out, DigestOutput):
        return f"{len(out.trials)} trials"
    if isinstance(out, MetricsOutput):
        m = out.metrics
        return (
            f"{m.valid}/{m.proposals} valid, {m.learnable} learnable, pool {m.pool_size} ({m.pool_learnable} learnable)"
        )
    return ""


class Flywheel:
    def __init__(
        self,
        paths: RunPaths,
        config: FlywheelConfig,
        *,
        backend: SandboxBackend | None = None,
        events: Events | None = None,
    ) -> None:
        self.paths = paths
        self.config = config
        self._inner_backend = backend
        self.events: Events = events or NullEvents()
        self.backend: RunBackend | None = None

    # -- creating and opening runs -----------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        config: FlywheelConfig,
        run_dir: Path | None = None,
        *,
        backend: SandboxBackend | None = None,
        events: Events | None = None,
    ) -> Flywheel:
        """A new run dir with the resolved config saved in it."""
        paths = RunPaths(run_dir or config.runs_root / new_run_id(config.name))
        if paths.config.exists():
            raise UserInputError(f"{paths.root} already holds a flywheel run: `autoenv flywheel resume {paths.root}`")
        paths.root.mkdir(parents=True, exist_ok=True)
        write_atomic(paths.config, tomli_w.dumps(config.to_toml_dict()))
        return cls(paths, config, backend=backend, events=events)

    @classmethod
    def open(
        cls,
        run_dir: Path,
        overrides: list[str] | None = None,
        *,
        backend: SandboxBackend | None = None,
        events: Events | None = None,
    ) -> Flywheel:
        """An existing run, with its saved config (``overrides``, e.g. ``rounds=5``, are saved into it)."""
        paths = RunPaths(run_dir)
        try:
            data = tomllib.loads(paths.config.read_text(encoding="utf-8"))
            if overrides:
                data = apply_overrides(data, overrides)
            config = FlywheelConfig.model_validate(data)
        except FileNotFoundError:
            raise UserInputError(f"{paths.root}: not a flywheel run dir (no config.resolved.toml)") from None
        except tomllib.TOMLDecodeError as e:
            raise UserInputError(f"{paths.config}: {e}") from None
        except ValidationError as e:
            raise UserInputError(f"{paths.config}: {first_error(e)}") from None
        if overrides:
            write_atomic(paths.config, tomli_w.dumps(config.to_toml_dict()))
        return cls(paths, config, backend=backend, events=events)

    # -- running -------------------------------------------------------------------------------------------

    def run(self) -> list[RoundMetrics]:
        from autoenvscaling.sandbox.registry import get_backend

        with run_lock(self.paths):
            self.backend = RunBackend(self._inner_backend or get_backend(self.config.backend), self.paths.run_id)
            self.backend.cleanup()  # containers a crashed process of this run left behind
            with Pool.open(self.config.pool or self.paths.default_pool, dedup=self.config.dedup) as pool:
                domains = {name: resolve_domain(name) for name in self.config.domains}
                solver = self.config.models.solver
                done: list[RoundMetrics] = []
                for n in range(1, self.config.rounds + 1):
                    if self._over_budget(done):
                        self.events.message(f"budget reached after round {n - 1}: no new round")
                        break
                    tuned_solver, tuned_proposer = self._models(solver)
                    metrics, solver = self._round(RoundContext(
                        n=n, paths=self.paths, config=self.config, backend=self.backend, pool=pool,
                        domains=domains, solver=tuned_solver, proposer=tuned_proposer, events=self.events,
                    ))  # fmt: skip
                    done.append(metrics)
                    self.write_metrics()
            crash.set_stage("")
            # Again at the end: a container whose creating process died during the run (a killed trainer child's
            # rollout, whose create the engine finished after the sweep above) belongs to nobody now.
            self.backend.cleanup()
        return done

    def _models(self, solver: ModelConfig) -> tuple[ModelConfig, ModelConfig]:
        """This round's solver and proposer, tuned by the roles' policy (one server when one model plays both)."""
        base = self.config.models.proposer or solver
        mode = resolve_mode(self.config.proposer_mode, base)
        c = self.config.concurrency
        proposer, tuned = tune_roles(
            base, mode, solver=solver, propose_concurrency=c.propose, solve_concurrency=c.solve
        )
        return tuned, proposer

    def _over_budget(self, done: list[RoundMetrics]) -> bool:
        b = self.config.budgets
        cost = sum(m.proposer_cost_usd + m.solver_cost_usd for m in done)
        tokens = sum(m.proposer_tokens + m.solver_tokens for m in done)
        return (b.max_cost_usd is not None and cost >= b.max_cost_usd) or (
            b.max_tokens is not None and tokens >= b.max_tokens
        )

    @contextlib.contextmanager
    def _models_held(self, ctx: RoundContext) -> Iterator[None]:
        """Keep the round's models open between stages (an embedded server loads its weights once a round)."""
        with contextlib.ExitStack() as stack:
            for cfg in {
                ctx.solver.model_dump_json(): ctx.solver,
                ctx.proposer.model_dump_json(): ctx.proposer,
            }.values():
                if cfg.provider in ("embedded", "hf"):  # hf: one copy of the trained weights per round
                    stack.enter_context(open_model(cfg))
            yield

    def _round(self, ctx: RoundContext) -> tuple[RoundMetrics, ModelConfig]:
        finished = read_output(ctx.stage_dir("metrics"), MetricsOutput)
        train_done = read_output(ctx.stage_dir("train"), TrainOutput)
        if finished is not None:
            self.events.stage_finished(ctx.n, "round", "done", skipped=True)
            return finished.metrics, (train_done.solver if train_done and train_done.solver else ctx.solver)
        with self._models_held(ctx):
            return self._stages(ctx)

    def _stages(self, ctx: RoundContext) -> tuple[RoundMetrics, ModelConfig]:
        st = self._stage
        solve = st(ctx, "solve", SolveOutput, lambda: run_solve(ctx))
        digest = st(ctx, "digest", DigestOutput, lambda: run_digest(ctx, solve))
        proposed = st(ctx, "propose", ProposeOutput, lambda: run_propose(ctx, digest))
        validated = st(ctx, "validate", ValidateOutput, lambda: run_validate(ctx, proposed))
        dedup = st(ctx, "dedup", DedupOutput, lambda: run_dedup(ctx, validated, digest))
        calibrate = st(ctx, "calibrate", CalibrateOutput, lambda: run_calibrate(ctx, dedup))
        export = st(ctx, "export", ExportOutput, lambda: run_export(ctx, solve, calibrate))
        train = st(ctx, "train", TrainOutput, lambda: run_train(ctx, export))
        if train.solver is not None:
            co_evolving = self.config.models.proposer is None
            ctx.solver = train.solver
            ctx.proposer = train.solver if co_evolving else ctx.proposer
        evaluate = st(ctx, "evaluate", EvaluateOutput, lambda: run_evaluate(ctx))

        def metrics() -> MetricsOutput:
            m = compute_metrics(
                ctx.n, solve, proposed, validated, dedup, calibrate, train, evaluate,
                pool_size=ctx.pool.count(), pool_learnable=ctx.pool.count(status=EnvStatus.LEARNABLE),
            )  # fmt: skip
            return MetricsOutput(round=ctx.n, stage="metrics", metrics=m)

        return st(ctx, "metrics", MetricsOutput, metrics).metrics, ctx.solver

    def _stage(self, ctx: RoundContext, name: str, model: type[OutT], fn: Callable[[], OutT]) -> OutT:
        stage_dir = ctx.stage_dir(name)
        crash.set_stage(f"r{ctx.n}.{name}")
        done = read_output(stage_dir, model)
        if done is not None:
            self.events.stage_finished(ctx.n, name, summarize_stage(done), skipped=True)
            return done
        crash.checkpoint("start")
        started = time.perf_counter()
        out = fn()
        out.wall_sec = time.perf_counter() - started
        write_output(stage_dir, out)
        crash.checkpoint("done")
        self.events.stage_finished(ctx.n, name, summarize_stage(out), skipped=False)
        return out

    # -- outputs -------------------------------------------------------------------------------------------

    def round_metrics(self) -> list[RoundMetrics]:
        found = [read_output(self.paths.stage_dir(n, "metrics"), MetricsOutput) for n in self.paths.rounds_present()]
        return [m.metrics for m in found if m is not None]

    def write_metrics(self) -> Path:
        """Rewrite ``metrics.jsonl`` from the rounds' outputs (a rewrite, so a resumed run never repeats a line)."""
        lines = "".join(m.model_dump_json() + "\n" for m in self.round_metrics())
        write_atomic(self.paths.metrics, lines)
        return self.paths.metrics
