"""Shared by the flywheel tests: running the CLI as a process, containers of a run, and a normalized snapshot of
a run dir (what must be equal between an uninterrupted run and a crashed-and-resumed one)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from autoenvscaling.flywheel.crash import ENV as CRASH_ENV
from autoenvscaling.pool import Pool

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "flywheel"
SCRIPTED = EXAMPLES / "scripted.toml"


def autoenv(*args: str, crash_at: str | None = None, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != CRASH_ENV}
    if crash_at:
        env[CRASH_ENV] = crash_at
    return subprocess.run(
        [sys.executable, "-m", "autoenvscaling.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _norm(value: Any, root: str) -> Any:
    if isinstance(value, str):  # the run dir's path, and its name (the run id)
        return value.replace(root, "<run>").replace(Path(root).name, "<run-id>")
    if isinstance(value, list):
        return [_norm(v, root) for v in value]
    if isinstance(value, dict):
        return {k: _norm(v, root) for k, v in value.items() if not k.endswith("_sec") and k != "timestamp"}
    return value


def _trajectory(path: Path, root: str) -> Any:
    data = json.loads(path.read_text())
    steps = [
        [s["source"], s.get("message"), s.get("tool_calls"), (s.get("observation") or {}).get("results")]
        for s in data["steps"]
    ]
    return _norm({"steps": steps, "extra": data.get("extra")}, root)


def _jsonl(path: Path, root: str) -> list[Any]:
    return [_norm(json.loads(line), root) for line in path.read_text().splitlines()] if path.is_file() else []


def snapshot(run: Path) -> dict[str, Any]:
    """Everything a run produced that must not depend on how often it was interrupted (timings left out)."""
    run = run.resolve()
    root = str(run)
    with Pool.open(run / "pool") as pool:
        entries = [
            _norm(e.model_dump(mode="json", exclude={"created_at", "updated_at", "validation"}), root)
            | {"verdict": e.validation.verdict.value if e.validation else None}
            for e in pool.list()
        ]
    entries.sort(key=lambda e: e["id"])
    trajectories = {str(p.relative_to(run)): _trajectory(p, root) for p in sorted(run.rglob("trajectory.json"))}
    exports = {str(p.relative_to(run)): _jsonl(p, root) for p in sorted(run.glob("rounds/*/export/*.jsonl"))}
    outputs = {
        str(p.relative_to(run)): _norm(json.loads(p.read_text()), root)
        for p in sorted(run.glob("rounds/*/*/output.json"))
    }
    for out in outputs.values():
        out.pop("finished_at", None)
    return {
        "pool": entries,
        "envs": sorted(p.name for p in (run / "pool" / "envs").iterdir()),
        "metrics": _jsonl(run / "metrics.jsonl", root),
        "trajectories": trajectories,
        "exports": exports,
        "outputs": outputs,
    }
