"""The report's plots, as PNG files (matplotlib from the ``report`` extra, imported only here)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from autoenvscaling.flywheel.metrics import RoundMetrics
from autoenvscaling.pool.calibration import HISTOGRAM_BINS
from autoenvscaling.train.progress import StepLog


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    return plt


def _lines(plt: Any, path: Path, title: str, rounds: list[int], series: dict[str, list[float | None]]) -> Path:
    fig, ax = plt.subplots(figsize=(5.5, 3.2), dpi=100)
    for label, values in series.items():
        xs = [r for r, v in zip(rounds, values, strict=True) if v is not None]
        ys = [v for v in values if v is not None]
        if xs:
            ax.plot(xs, ys, marker="o", label=label)
    ax.set_title(title)
    ax.set_xlabel("round")
    ax.set_xticks(rounds)
    ax.set_ylim(-0.05, 1.05)
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:  # a figure without any value yet has nothing to label
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def _stacked(plt: Any, path: Path, title: str, rounds: list[int], stacks: dict[str, list[float]]) -> Path:
    fig, ax = plt.subplots(figsize=(5.5, 3.2), dpi=100)
    bottom = [0.0] * len(rounds)
    for label, values in stacks.items():
        ax.bar(rounds, values, bottom=bottom, label=label)
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    ax.set_title(title)
    ax.set_xlabel("round")
    ax.set_xticks(rounds)
    ax.grid(alpha=0.3, axis="y")
    if stacks:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def write_plots(metrics: list[RoundMetrics], out_dir: Path) -> dict[str, Path]:
    """One PNG per figure under ``out_dir``; raises ImportError without matplotlib."""
    plt = _pyplot()
    out_dir.mkdir(parents=True, exist_ok=True)
    rounds = [m.round for m in metrics]
    domains = sorted({d for m in metrics for d in m.domain_mix})
    return {
        "yield": _lines(plt, out_dir / "yield.png", "valid rate, learnable yield, hackable share", rounds, {
            "valid / proposals": [m.valid_rate for m in metrics],
            "learnable / proposals": [m.learnable_yield for m in metrics],
            "hackable / probed": [m.probes.hackable_share for m in metrics],
        }),
        "pass_rates": _lines(plt, out_dir / "pass_rates.png", "solver pass rate", rounds, {
            "seed tasks (solve stage)": [m.pass_rate_seed for m in metrics],
            "new environments": [m.pass_rate_new for m in metrics],
            "held-out set": [m.pass_rate_heldout for m in metrics],
        }),
        "difficulty": _stacked(plt, out_dir / "difficulty.png", "difficulty (pass rate) of new environments",
                               rounds, {f"p {name}": [float(m.difficulty_histogram.get(name, 0)) for m in metrics]
                                        for name, _, _ in HISTOGRAM_BINS}),
        "domains": _stacked(plt, out_dir / "domains.png", "proposals per domain", rounds,
                            {d: [float(m.domain_mix[d].proposals if d in m.domain_mix else 0) for m in metrics]
                             for d in domains}),
        "cost": _stacked(plt, out_dir / "cost.png", "proposer tokens per valid environment", rounds,
                         {"tokens": [m.tokens_per_valid_env or 0.0 for m in metrics]}),
    }  # fmt: skip


def write_training_plot(curves: dict[int, list[StepLog]], out_dir: Path) -> Path:
    """Reward mean and loss per optimizer step, one line per round that trained; raises ImportError without
    matplotlib."""
    plt = _pyplot()
    out_dir.mkdir(parents=True, exist_ok=True)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(5.5, 4.6), dpi=100, sharex=True)
    for n, steps in sorted(curves.items()):
        for ax, values in ((top, [s.reward_mean for s in steps]), (bottom, [s.loss for s in steps])):
            points = [(s.step, v) for s, v in zip(steps, values, strict=True) if v is not None]
            if points:
                ax.plot([x for x, _ in points], [y for _, y in points], marker="o", label=f"round {n}")
    top.set_title("training: reward mean and loss per step")
    top.set_ylabel("reward mean")
    bottom.set_ylabel("loss")
    bottom.set_xlabel("optimizer step")
    for ax in (top, bottom):
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=8)
    fig.tight_layout()
    path = out_dir / "training.png"
    fig.savefig(path)
    plt.close(fig)
    return path
