"""Run dirs for the viewer's tests, written by our own code on the fake sandbox (``view_sandbox``): a validate,
a solve and an agentic propose run through the CLI, and the scripted two-round flywheel (with its pool)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from typer.testing import CliRunner
from view_sandbox import ScriptedTasksBackend

from autoenvscaling.cli.app import app
from autoenvscaling.flywheel.config import load_config
from autoenvscaling.flywheel.rounds import Flywheel
from autoenvscaling.view.server import bind, url_of

if TYPE_CHECKING:
    from playwright.sync_api import Page

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
SCRIPTED = EXAMPLES / "flywheel" / "scripted"
BACKEND = ["--backend", "view_sandbox:ScriptedTasksBackend"]

VALIDATE = "validate-20261201-090000-1"
SOLVE = "solve-20261201-100000-1"
PROPOSE = "propose-20261201-110000-1"
FLYWHEEL = "flywheel-scripted-20261201-120000"


def _cli(*args: str) -> None:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, (args, result.output, result.exception)


def make_runs(root: Path) -> dict[str, Path]:
    root.mkdir(parents=True, exist_ok=True)
    runs = {k: root / name for k, name in [("validate", VALIDATE), ("solve", SOLVE), ("propose", PROPOSE)]}
    tasks = EXAMPLES / "flywheel" / "tasks"
    broken = [EXAMPLES / "broken" / name for name in ("reward-never-written", "solution-leaked")]
    _cli("validate", str(tasks), *map(str, broken), "-k", "2", "--run-dir", str(runs["validate"]), *BACKEND)
    replies = f"scripted:{SCRIPTED / 'replies.json'}"
    _cli("solve", str(tasks), "--model", replies, "-k", "2", "--run-dir", str(runs["solve"]), *BACKEND)
    propose = ["--mode", "agentic", "-n", "2", "--max-checks", "2", "--repeats", "1", "--reproduce", "0"]
    _cli("propose", *propose, "--from", str(runs["solve"]), "--model", replies, "--out", str(runs["propose"]), *BACKEND)
    cfg = load_config(EXAMPLES / "flywheel" / "scripted.toml", [])
    fw = Flywheel.create(cfg, root / FLYWHEEL, backend=ScriptedTasksBackend())
    metrics = fw.run()
    assert [m.learnable for m in metrics] == [1, 1], [m.model_dump() for m in metrics]
    runs["flywheel"] = root / FLYWHEEL
    return runs


def first_env(pool: Path, status: str) -> str:
    import sqlite3

    conn = sqlite3.connect(f"file:{pool / 'catalog.sqlite'}?mode=ro", uri=True)
    try:
        row = conn.execute("SELECT id FROM envs WHERE status = ? ORDER BY created_at", (status,)).fetchone()
    finally:
        conn.close()
    assert row is not None, f"no {status} environment in {pool}"
    return str(row[0])


def learnable_env(runs: dict[str, Path]) -> str:
    return first_env(runs["flywheel"] / "pool", "learnable")


def episode_with_checks(runs: dict[str, Path]) -> Path:
    for traj in sorted((runs["propose"] / "episodes").glob("*/trajectory.json")):
        if (traj.parent / "checks" / "01").is_dir():
            return traj
    raise AssertionError(json.dumps(sorted(str(p) for p in runs["propose"].rglob("*"))[:50]))


@contextmanager
def serving(root: Path) -> Iterator[str]:
    """The viewer over ``root`` on a free loopback port, in a thread; yields its base URL (no trailing slash)."""
    import uvicorn

    from autoenvscaling.view.app import create_app

    sock = bind("127.0.0.1", 0)
    server = uvicorn.Server(uvicorn.Config(create_app(root), log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the viewer did not start"
        time.sleep(0.02)
    try:
        yield url_of(sock).rstrip("/")
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()


@dataclass
class Tab:
    """A browser page on the viewer that records console errors, page errors and failed requests."""

    page: Page
    base: str
    problems: list[str] = field(default_factory=list)

    def open(self, path: str) -> Page:
        response = self.page.goto(self.base + path)
        assert response is not None and response.status == 200, (path, response and response.status)
        return self.page


def shoot(page: Page, path: Path) -> None:
    """A screenshot of the viewport; with Pillow (the `report` extra brings it) cut to 64 colours, a third the size."""
    png = page.screenshot()
    try:
        from PIL import Image
    except ImportError:
        path.write_bytes(png)
        return
    import io

    with Image.open(io.BytesIO(png)) as im:
        im.convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)
