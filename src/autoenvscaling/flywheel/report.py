"""``report.html`` of a flywheel run: a static page that opens from disk (relative links, PNG plots).

It shows the per-round metrics, the plots, every environment of the pool with its status and calibration,
every proposal with its verdict and reward, and every solver attempt, each linked to its files.
"""

from __future__ import annotations

import html
import os
import tomllib
from pathlib import Path

from autoenvscaling.execution.rundir import write_atomic
from autoenvscaling.flywheel.layout import RunPaths, read_output
from autoenvscaling.flywheel.metrics import MetricsOutput, RoundMetrics
from autoenvscaling.flywheel.records import (
    CalibrateOutput,
    DedupOutput,
    EvaluateOutput,
    SolveOutput,
    TaskAttempts,
    TrainOutput,
)
from autoenvscaling.pool import Pool, PoolEntry
from autoenvscaling.pool.schema import is_pool
from autoenvscaling.pool.status import PoolStatus, pool_status
from autoenvscaling.train.progress import StepLog
from autoenvscaling.validate.report import ProbeCounts

_CSS = """body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px;color:#222}
table{border-collapse:collapse;margin:1em 0;font-size:13px}td,th{border:1px solid #ccc;padding:3px 7px;text-align:left}
th{background:#f3f3f3}img{margin:4px;border:1px solid #ddd}.learnable{color:#070;font-weight:bold}
.invalid,.duplicate,.error{color:#a00}.muted{color:#888}code{font-size:12px}"""


def _e(x: object) -> str:
    return html.escape("" if x is None else str(x))


def _fmt(x: float | None, spec: str = ".2f") -> str:
    return "-" if x is None else format(x, spec)


class _Links:
    def __init__(self, root: Path) -> None:
        self.root = root

    def __call__(self, target: str | Path | None, text: str) -> str:
        if not target:
            return _e(text)
        p = Path(target)
        if not p.exists():
            return f'<span class="muted">{_e(text)}</span>'
        return f'<a href="{_e(os.path.relpath(p, self.root))}">{_e(text)}</a>'


def _gist(text: str, limit: int = 90) -> str:
    """The instruction's gist: its words run together, cut at ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _table(headers: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><tr>{head}</tr>{body}</table>"


def _metrics_table(metrics: list[RoundMetrics]) -> str:
    rows = [[str(m.round), _e(m.solver), str(m.proposals), f"{m.valid} ({_fmt(m.valid_rate)})",
             f"{m.learnable} ({_fmt(m.learnable_yield)})", f"{m.too_easy} / {m.too_hard}", str(m.near_duplicates),
             _fmt(m.pass_rate_seed), _fmt(m.pass_rate_new), _fmt(m.pass_rate_heldout), _fmt(m.mean_proposer_reward),
             _fmt(m.tokens_per_valid_env, ".0f"), _fmt(m.cost_per_valid_env, ".4f"),
             _e(", ".join(f"{k}: {v}" for k, v in m.errors.items()) or "-"), str(m.pool_size),
             _hackable(m.probes), _hackable(m.probes_accepted), _flags(m.probes)]
            for m in metrics]  # fmt: skip
    return _table(
        ["round", "solver", "proposals", "valid (rate)", "learnable (yield)", "too easy / hard", "near-dups",
         "pass seed", "pass new", "pass held-out", "mean reward", "tokens / valid", "$ / valid", "errors",
         "pool size", "hackable / probed", "accepted: hackable / probed", "probe flags"], rows)  # fmt: skip


def _hackable(c: ProbeCounts) -> str:
    """``hackable/probed (share)``; "-" when nothing was probed."""
    return f"{c.hackable}/{c.probed} ({_fmt(c.hackable_share)})" if c.probed else "-"


def _flags(c: ProbeCounts) -> str:
    return _e(", ".join(f"{k}: {v}" for k, v in c.flags.items()) or "-")


def _pool_summary(status: PoolStatus) -> str:
    """The pool in numbers: entries per status, and the quality probes over all entries and the accepted ones."""
    by_status = ", ".join(f"{k} {v}" for k, v in status.by_status.items()) or "empty"
    rows = [
        [_e(what), str(c.validated), str(c.probed), _hackable(c), _flags(c), _fmt(c.mutation_score_mean)]
        for what, c in (("all entries", status.probes), ("accepted", status.accepted_probes))
    ]
    note = (
        "<p class='muted'>A probe flag fails validation, so an environment accepted with the probes on carries "
        "none: what they miss takes a check that did not gate it (docs/quality-probes.md).</p>"
        if status.accepted_probes.probed
        else ""
    )
    note += (
        f"<p class='muted'>{status.accepted_not_probed} accepted environment(s) were not probed "
        "(probes off, a multi-step task, or no stored validation): their hackability is unknown.</p>"
        if status.accepted_not_probed
        else ""
    )
    return (
        f"<p>{status.total} environment(s): {_e(by_status)}; accepted (valid, learnable, too easy or too hard): "
        f"{status.accepted}</p>"
        + _table(["quality probes", "validated", "probed", "hackable / probed", "probe flags", "mutation score"], rows)
        + note
    )


def _env_rows(entries: list[PoolEntry], link: _Links) -> list[list[str]]:
    rows = []
    for e in entries:
        cal = e.calibration
        trials = " ".join(link(Path(t) / "agent" / "trajectory.json", f"#{i + 1}")
                          for i, t in enumerate(cal.trial_dirs)) if cal else ""  # fmt: skip
        verdict = e.validation.verdict.value if e.validation else "-"
        failed = ", ".join(e.validation.failed_checks) if e.validation else ""
        episode = e.lineage.proposer_episode
        rows.append([
            link(e.path / "instruction.md", e.id), _e(_gist(e.instruction)), _e(e.domain), str(e.round),
            f'<span class="{_e(e.status.value)}">{_e(e.status.value)}</span>',
            _e(verdict) + (f" <code>{_e(failed)}</code>" if failed else ""),
            f"{cal.passes}/{cal.attempts}" if cal else "-", _fmt(cal.learnability if cal else None),
            link(Path(episode) / "trajectory.json", "episode") if episode else "-",
            trials or "-", _e(e.duplicate_of or ""),
        ])  # fmt: skip
    return rows


def _attempt_rows(stage: str, tasks: list[TaskAttempts], link: _Links) -> list[list[str]]:
    rows = []
    for t in tasks:
        for a in t.attempts:
            reward = "error" if a.reward is None else f"{a.reward:g}"
            rows.append([_e(stage), _e(a.task_name or t.key), str(a.attempt), _e(reward), _e(a.exit_reason or ""),
                         str(a.turns), link(Path(a.trial_dir) / "agent" / "trajectory.json", "trajectory"),
                         link(Path(a.trial_dir) / "result.json", "result"), _e(a.error or "")])  # fmt: skip
        if t.error:
            rows.append([_e(stage), _e(t.key), "-", "error", "", "", "", "", _e(t.error)])
    return rows


def _round_section(paths: RunPaths, n: int, link: _Links) -> str:
    parts = [f"<h3>Round {n}</h3>"]
    dedup = read_output(paths.stage_dir(n, "dedup"), DedupOutput)
    cal = read_output(paths.stage_dir(n, "calibrate"), CalibrateOutput)
    rewards = {r.key: r for r in cal.rewards} if cal else {}
    if dedup is not None:
        rows = []
        for a in dedup.adds:
            r = rewards.get(a.key)
            rows.append([_e(a.key), _e(a.verdict), _e(a.outcome or "-"), _e(a.env_id or ""), _e(a.duplicate_of or ""),
                         _fmt(r.pass_rate if r else None), _fmt(r.reward if r else None),
                         link(Path(a.episode_dir) / "trajectory.json", "trajectory"),
                         link(a.candidate_dir, "task dir"), _e(a.error or "")])  # fmt: skip
        parts += ["<h4>Proposals</h4>", _table(["proposal", "verdict", "pool", "env", "duplicate of", "pass rate",
                                               "reward", "episode", "candidate", "error"], rows)]  # fmt: skip
    attempts: list[list[str]] = []
    for stage, model in (("solve", SolveOutput), ("calibrate", CalibrateOutput), ("evaluate", EvaluateOutput)):
        out = read_output(paths.stage_dir(n, stage), model)
        if isinstance(out, SolveOutput | CalibrateOutput | EvaluateOutput):
            attempts += _attempt_rows(stage, out.tasks, link)
    if attempts:
        parts += ["<h4>Solver attempts</h4>", _table(["stage", "task", "#", "reward", "exit", "turns", "trajectory",
                                                      "result", "error"], attempts)]  # fmt: skip
    export, digest = paths.stage_dir(n, "export"), paths.stage_dir(n, "digest") / "digest.md"
    parts.append(f"<p>{link(export, 'export dir')} · {link(digest, 'solver digest')}</p>")
    return "\n".join(parts)


def _plots(metrics: list[RoundMetrics], paths: RunPaths) -> str:
    try:
        from autoenvscaling.flywheel.report_plots import write_plots

        images = write_plots(metrics, paths.report_assets)
    except ImportError:
        return "<p class='muted'>Plots need matplotlib: pip install 'autoenvscaling[report]'.</p>"
    return "".join(f'<img src="{_e(os.path.relpath(p, paths.root))}" alt="{_e(k)}">' for k, p in images.items())


def _training(paths: RunPaths, link: _Links) -> str:
    """The training curve of every round that trained (``trl-grpo`` or ``sft``): a plot and one row per step."""
    curves: dict[int, list[StepLog]] = {}
    notes: list[str] = []
    for n in paths.rounds_present():
        out = read_output(paths.stage_dir(n, "train"), TrainOutput)
        if out is None or out.kind in ("none", "command"):
            continue
        if out.steps:
            curves[n] = out.steps
        elif out.error:
            notes.append(f"round {n}: {_e(out.error)}")
    if not curves and not notes:
        return ""
    rows = [[str(n), str(s.step), _fmt(s.loss, ".4g"), _fmt(s.reward_mean), _fmt(s.reward_std),
             _fmt(s.values.get("tools/call_frequency")), _fmt(s.values.get("step_time"), ".0f"),
             link(paths.stage_dir(n, "train") / "steps.jsonl", "steps.jsonl")]
            for n, steps in sorted(curves.items()) for s in steps]  # fmt: skip
    parts = ["<h2>Training</h2>"]
    if curves:
        try:
            from autoenvscaling.flywheel.report_plots import write_training_plot

            png = write_training_plot(curves, paths.report_assets)
            parts.append(f'<img src="{_e(os.path.relpath(png, paths.root))}" alt="training">')
        except ImportError:
            parts.append("<p class='muted'>Plots need matplotlib: pip install 'autoenvscaling[report]'.</p>")
        parts.append(_table(["round", "step", "loss", "reward mean", "reward std", "tool calls / rollout",
                             "step s", "log"], rows))  # fmt: skip
    parts += [f"<p class='muted'>{note}</p>" for note in notes]
    return "\n".join(parts)


def write_report(paths: RunPaths) -> Path:
    """Build ``report.html`` (and ``report/*.png``) from what the run dir holds now."""
    link = _Links(paths.root)
    config = tomllib.loads(paths.config.read_text(encoding="utf-8")) if paths.config.is_file() else {}
    found = [read_output(paths.stage_dir(n, "metrics"), MetricsOutput) for n in paths.rounds_present()]
    metrics = [m.metrics for m in found if m is not None]
    pool_root = Path(config["pool"]) if config.get("pool") else paths.default_pool
    entries: list[PoolEntry] = []
    if is_pool(pool_root):
        with Pool.open(pool_root) as pool:
            entries = pool.list()
    models = config.get("models", {})
    solver = models.get("solver", {})
    body = [
        f"<h1>Flywheel {_e(paths.run_id)}</h1>",
        f"<p>solver: <code>{_e(solver.get('name') or solver.get('provider'))}</code> · proposer: "
        f"<code>{_e((models.get('proposer') or {}).get('name') or 'same model (co-evolution)')}</code> · "
        f"rounds: {len(metrics)}/{_e(config.get('rounds'))} · domains: {_e(config.get('domains'))} · "
        f"{link(paths.config, 'config')} · {link(paths.metrics, 'metrics.jsonl')}</p>",
        "<h2>Rounds</h2>", _metrics_table(metrics) if metrics else "<p>No round finished yet.</p>",
        _plots(metrics, paths) if metrics else "",
        _training(paths, link),
        f"<h2>Environments ({len(entries)})</h2>",
        _pool_summary(pool_status(entries)),
        _table(["id", "instruction", "domain", "round", "status", "validation", "passes", "learnability", "proposer",
                "calibration trajectories", "duplicate of"], _env_rows(entries, link)),
        "<h2>Per round</h2>", *(_round_section(paths, n, link) for n in paths.rounds_present()),
    ]  # fmt: skip
    page = f"<!doctype html><html><head><meta charset='utf-8'><title>{_e(paths.run_id)}</title>" \
           f"<style>{_CSS}</style></head><body>{''.join(body)}</body></html>\n"  # fmt: skip
    write_atomic(paths.report, page)
    return paths.report
