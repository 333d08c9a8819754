"""One pool environment for its page: its files, validation, calibration attempts, lineage and history.

History comes from the flywheel run the pool belongs to (``<run>/pool``): each round's dedup records (added,
or a later proposal rejected as its duplicate) and calibrations of this environment.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel

from autoenvscaling.flywheel.records import CalibrateOutput, DedupOutput
from autoenvscaling.pool.models import PoolEntry
from autoenvscaling.verify.results import TrialResult
from autoenvscaling.view.files import PREVIEW_BYTES, Root, read_text
from autoenvscaling.view.pool_read import all_entries, flags_of, generation_label, get_entry
from autoenvscaling.view.readers import CheckRow, read_model
from autoenvscaling.view.runs import detect_kind

_SECTIONS = ("instruction.md", "task.toml", "environment/", "tests/", "solution/")
MAX_FILES = 200  # an environment page shows at most this many files (the rest are in its dir listing)


class EnvFile(BaseModel):
    name: str
    rel: str
    size: int
    text: str | None


class AttemptLink(BaseModel):
    name: str
    trial: str | None
    trajectory: str | None
    reward: float | None


class Ref(BaseModel):
    label: str
    url: str | None  # None: recorded, but not under the served root


class HistoryRow(BaseModel):
    round: int
    stage: str
    what: str


class Namesake(BaseModel):
    id: str
    label: str


class EnvView(BaseModel):
    entry: PoolEntry
    generation: str  # which generation wrote it (names are not unique across runs and rounds)
    same_name: list[Namesake]  # other entries of the pool with the same name
    flags: list[str]
    files: list[EnvFile]
    checks: list[CheckRow]
    attempts: list[AttemptLink]
    lineage: list[Ref]
    history: list[HistoryRow]
    children: list[PoolEntry]


def _order(name: str) -> tuple[int, str]:
    return next((i for i, s in enumerate(_SECTIONS) if name == s or name.startswith(s)), len(_SECTIONS)), name


def env_files(root: Root, env_dir: Path) -> list[EnvFile]:
    if not root.inside(env_dir) or not env_dir.is_dir():
        return []
    files = sorted(p for p in env_dir.rglob("*") if p.is_file() and root.inside(p))[:MAX_FILES]
    out = [
        EnvFile(
            name=f.relative_to(env_dir).as_posix(),
            rel=root.rel(f),
            size=f.stat().st_size,
            text=read_text(f, PREVIEW_BYTES),
        )
        for f in files
    ]
    return sorted(out, key=lambda e: _order(e.name))


def _attempt(root: Root, recorded: str, anchor: Path | None) -> AttemptLink:
    trial = root.locate(recorded, anchor)
    result = read_model(trial / "result.json", TrialResult) if trial is not None else None
    traj = trial / "agent" / "trajectory.json" if trial is not None else None
    return AttemptLink(
        name=Path(recorded).name,
        trial=root.rel(trial) if trial is not None else None,
        trajectory=root.rel(traj) if traj is not None and traj.is_file() else None,
        reward=result.reward if result else None,
    )


def _trajectory_ref(root: Root, recorded: str, anchor: Path | None, label: str) -> Ref:
    found = root.locate(recorded, anchor)
    if found is not None and found.is_dir():
        for inner in ("trajectory.json", "agent/trajectory.json"):
            if (found / inner).is_file():
                return Ref(label=label, url=f"/trajectory/{root.rel(found / inner)}")
        return Ref(label=label, url=f"/file/{root.rel(found)}")
    if found is not None:
        return Ref(label=label, url=f"/trajectory/{root.rel(found)}")
    return Ref(label=f"{label} (not under the served root: {recorded})", url=None)


def _lineage(root: Root, pool_dir: Path, e: PoolEntry, anchor: Path | None) -> list[Ref]:
    lin = e.lineage
    refs = []
    for parent in lin.parent_envs:
        refs.append(Ref(label=f"parent environment {parent}", url=f"/env?pool={root.rel(pool_dir)}&id={parent}"))
    if e.duplicate_of:
        url = f"/env?pool={root.rel(pool_dir)}&id={e.duplicate_of}"
        refs.append(Ref(label=f"near-duplicate of {e.duplicate_of} (similarity {e.similarity or 0:.2f})", url=url))
    if lin.proposer_episode:
        refs.append(_trajectory_ref(root, lin.proposer_episode, anchor, "proposer episode"))
    for t in lin.solver_trajectories:
        refs.append(_trajectory_ref(root, t, anchor, f"solver trajectory the proposer read: {Path(t).name}"))
    if lin.origin_path:
        found = root.locate(lin.origin_path, anchor)
        label = f"added from {Path(lin.origin_path).name}"
        refs.append(Ref(label=label, url=f"/file/{root.rel(found)}" if found else None))
    if lin.parent_run:
        refs.append(Ref(label=f"written by run {lin.parent_run}", url=_run_url(root, anchor)))
    return refs


def _run_url(root: Root, run: Path | None) -> str | None:
    return f"/run/{root.rel(run)}" if run is not None else None


def _history(run: Path, env_id: str) -> list[HistoryRow]:
    rows: list[HistoryRow] = []
    rounds = run / "rounds"
    numbers = sorted(int(p.name) for p in rounds.iterdir() if p.name.isdigit()) if rounds.is_dir() else []
    for n in numbers:
        dedup = read_model(rounds / str(n) / "dedup" / "output.json", DedupOutput)
        for a in dedup.adds if dedup else []:
            if a.env_id == env_id:
                rows.append(HistoryRow(round=n, stage="dedup", what=f"{a.key}: {a.verdict}, {a.outcome or '-'}"))
            elif a.duplicate_of == env_id:
                sim = f" (similarity {a.similarity:.2f})" if a.similarity is not None else ""
                rows.append(HistoryRow(round=n, stage="dedup", what=f"{a.key} rejected as its duplicate{sim}"))
        cal = read_model(rounds / str(n) / "calibrate" / "output.json", CalibrateOutput)
        for c in cal.calibrations if cal else []:
            if c.env_id == env_id:
                rate = "-" if c.pass_rate is None else f"{c.pass_rate:.2f}"
                what = f"{c.attempts} attempts, {c.errors} errors, pass rate {rate} -> {c.status or 'error'}"
                rows.append(HistoryRow(round=n, stage="calibrate", what=what + (f" ({c.error})" if c.error else "")))
    return rows


def env_view(root: Root, pool_dir: Path, env_id: str) -> EnvView | None:
    entry = get_entry(pool_dir, env_id) if env_id else None
    if entry is None:
        return None
    run = pool_dir.parent if detect_kind(pool_dir.parent) == "flywheel" and root.inside(pool_dir.parent) else None
    report = entry.validation
    from autoenvscaling.validate.report import describe_check

    checks = [CheckRow(**c.model_dump(), description=describe_check(c.id)) for c in report.checks] if report else []
    cal = entry.calibration
    others = [e for e in all_entries(pool_dir) if e.id != entry.id]
    return EnvView(
        entry=entry,
        generation=generation_label(entry),
        same_name=[Namesake(id=e.id, label=generation_label(e)) for e in others if e.name == entry.name],
        flags=sorted(flags_of(entry)),
        files=env_files(root, entry.path),
        checks=checks,
        attempts=[_attempt(root, t, run) for t in cal.trial_dirs] if cal else [],
        lineage=_lineage(root, pool_dir, entry, run),
        history=_history(run, entry.id) if run is not None else [],
        children=[e for e in others if entry.id in e.lineage.parent_envs or e.duplicate_of == entry.id],
    )
