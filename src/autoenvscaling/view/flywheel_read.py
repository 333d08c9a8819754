"""A flywheel run dir (``flywheel.layout``): the rounds and their stages, the per-round metrics, the charts.

A stage is done exactly when its ``output.json`` exists; a stage dir without it is in progress (or was cut by a
crash). ``metrics.jsonl`` holds one ``RoundMetrics`` per finished round. A round's training curve (the reward mean
the trainer logged per optimizer step) is in its finished train stage's ``output.json`` or, while it trains, in
``train/steps.jsonl`` (written a line per step), so the chart grows with the run.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ValidationError

from autoenvscaling.flywheel.layout import OUTPUT, STAGES
from autoenvscaling.flywheel.metrics import RoundMetrics
from autoenvscaling.flywheel.records import TrainOutput, ValidateOutput
from autoenvscaling.pool.schema import is_pool
from autoenvscaling.roles.proposer.records import ProposalRecord
from autoenvscaling.train.progress import STEPS, StepLog
from autoenvscaling.view import charts
from autoenvscaling.view.files import Root
from autoenvscaling.view.readers import read_model, read_records
from autoenvscaling.view.runs import flywheel_rounds, is_locked, read_toml


class StageLink(BaseModel):
    label: str
    rel: str
    page: str = "run"  # run | file


class StageView(BaseModel):
    name: str
    state: str  # done | running | pending
    wall_sec: float | None
    links: list[StageLink]


class RoundView(BaseModel):
    n: int
    stages: list[StageView]
    metrics: RoundMetrics | None


class FlywheelView(BaseModel):
    name: str
    rounds_planned: int
    status: str
    live: bool
    config: dict[str, object]
    rounds: list[RoundView]
    pool: str | None
    charts: list[str]


def _subdirs(d: Path) -> list[Path]:
    return sorted(p for p in d.iterdir() if p.is_dir()) if d.is_dir() else []


def _links(root: Root, stage: str, d: Path) -> list[StageLink]:
    out: list[StageLink] = []
    if stage in ("solve", "calibrate", "evaluate"):
        out = [StageLink(label=p.name, rel=root.rel(p)) for p in _subdirs(d / "tasks")]
    elif stage in ("propose", "validate"):
        out = [StageLink(label=p.name, rel=root.rel(p)) for p in _subdirs(d)]
    for name in ("digest.md", "train.log", "steps.jsonl", "manifest.json"):
        if (d / name).is_file():
            out.append(StageLink(label=name, rel=root.rel(d / name), page="file"))
    return out


def _stage(root: Root, d: Path, name: str) -> StageView:
    if not d.is_dir():
        return StageView(name=name, state="pending", wall_sec=None, links=[])
    out = read_model(d / OUTPUT, _Wall)
    return StageView(
        name=name,
        state="done" if out is not None else "running",
        wall_sec=out.wall_sec if out is not None else None,
        links=_links(root, name, d),
    )


class _Wall(BaseModel):
    wall_sec: float = 0.0


def proposals_of(run: Path, n: int, domain: str) -> list[ProposalRecord]:
    """The validated proposals of one domain of round ``n`` (the validate stage keeps them), else []."""
    out = read_model(run / "rounds" / str(n) / "validate" / OUTPUT, ValidateOutput)
    return [r for r in out.records if r.domain == domain] if out is not None else []


def _metrics(run: Path) -> dict[int, RoundMetrics]:
    records, _ = flywheel_rounds(run)
    out: dict[int, RoundMetrics] = {}
    for rec in records:
        try:
            m = RoundMetrics.model_validate(rec)
        except ValidationError:
            continue
        out[m.round] = m
    return out


def _partial_steps(path: Path) -> list[StepLog]:
    """The steps a running trainer logged so far (a line being written is skipped); the last line per step wins,
    as a resumed run logs its steps again."""
    return list({log.step: log for log in sorted(read_records(path, StepLog), key=lambda x: x.step)}.values())


def train_curves(run: Path) -> dict[int, list[StepLog]]:
    """Round -> the training steps it logged (finished or in progress); rounds without any are left out."""
    out: dict[int, list[StepLog]] = {}
    rounds = run / "rounds"
    for n in sorted(int(p.name) for p in _subdirs(rounds) if p.name.isdigit()):
        d = rounds / str(n) / "train"
        done = read_model(d / OUTPUT, TrainOutput)
        steps = done.steps if done is not None else _partial_steps(d / STEPS)
        if steps:
            out[n] = steps
    return out


def train_reward_chart(curves: dict[int, list[StepLog]]) -> str | None:
    """One line per round over the optimizer steps; None when no step logged a reward (SFT, no training)."""
    if not any(s.reward_mean is not None for steps in curves.values() for s in steps):
        return None
    xs = sorted({s.step for steps in curves.values() for s in steps})
    series: dict[str, list[float | None]] = {}
    for n, steps in sorted(curves.items()):
        by_step = {s.step: s.reward_mean for s in steps}
        series[f"round {n}"] = [by_step.get(x) for x in xs]
    return charts.line_chart("training reward (mean per optimizer step)", [f"step {x}" for x in xs], series)


def round_charts(metrics: list[RoundMetrics]) -> list[str]:
    xs = [f"round {m.round}" for m in metrics]
    hist: dict[str, list[float | None]] = {}
    bins = list(metrics[-1].difficulty_histogram) if metrics else []
    for m in metrics:
        hist[f"round {m.round}"] = [float(m.difficulty_histogram.get(b, 0)) for b in bins]
    return [
        charts.bar_chart(
            "environments per round",
            xs,
            {
                "proposals": [float(m.proposals) for m in metrics],
                "valid": [float(m.valid) for m in metrics],
                "learnable": [float(m.learnable) for m in metrics],
            },
        ),
        charts.bar_chart("solver pass rate on new environments (histogram)", bins, hist),
        charts.line_chart(
            "solver pass rate",
            xs,
            {
                "held-out": [m.pass_rate_heldout for m in metrics],
                "seed/solve": [m.pass_rate_seed for m in metrics],
                "new envs": [m.pass_rate_new for m in metrics],
            },
        ),
        charts.line_chart(
            "proposer tokens per valid environment", xs, {"tokens": [m.tokens_per_valid_env for m in metrics]}
        ),
        charts.line_chart("cost per valid environment ($)", xs, {"cost": [m.cost_per_valid_env for m in metrics]}),
        charts.line_chart(
            "proposer learnability reward (mean)", xs, {"reward": [m.mean_proposer_reward for m in metrics]}
        ),
    ]


def flywheel_view(root: Root, run: Path) -> FlywheelView:
    config = read_toml(run / "config.resolved.toml")
    metrics = _metrics(run)
    rounds_dir = run / "rounds"
    present = sorted(int(p.name) for p in _subdirs(rounds_dir) if p.name.isdigit())
    planned = config.get("rounds", 0)
    planned = planned if isinstance(planned, int) else 0
    rounds = [
        RoundView(n=n, stages=[_stage(root, rounds_dir / str(n) / s, s) for s in STAGES], metrics=metrics.get(n))
        for n in present
    ]
    running = is_locked(run / ".lock")
    finished = bool(planned) and len(metrics) >= planned
    pool_cfg = config.get("pool")
    pool = root.locate(str(pool_cfg), run) if isinstance(pool_cfg, str) else None
    if pool is None and is_pool(run / "pool"):
        pool = run / "pool"
    ordered = [metrics[n] for n in sorted(metrics)]
    reward = train_reward_chart(train_curves(run))
    return FlywheelView(
        name=str(config.get("name", run.name)),
        rounds_planned=planned,
        status="running" if running else "finished" if finished else "unfinished",
        live=running,
        config={k: v for k, v in config.items() if not isinstance(v, dict)},
        rounds=rounds,
        pool=root.rel(pool) if pool is not None else None,
        charts=round_charts(ordered) + ([reward] if reward is not None else []),
    )
