"""The viewer over HTTP without a browser: confinement to the served root, loopback-only Host headers, read-only
methods, paged logs, a crawl of every linked page (all 200, nothing on disk changed), and the command's errors."""

from __future__ import annotations

import fcntl
import http.client
import os
import re
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import pytest
from typer.testing import CliRunner
from view_fixtures import VALIDATE, serving

from autoenvscaling.cli.app import app
from autoenvscaling.errors import UserInputError
from autoenvscaling.view.files import PAGE_BYTES, Root


def get(base: str, path: str, *, method: str = "GET", host: str | None = None) -> tuple[int, dict[str, str], str]:
    """A raw request: ``path`` goes on the wire exactly as given (no client-side normalisation of ``..``)."""
    parts = urlsplit(base)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
    try:
        conn.putrequest(method, path, skip_host=True)
        conn.putheader("Host", host or parts.netloc)
        conn.endheaders()
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read().decode(errors="replace")
    finally:
        conn.close()


ESCAPES = [
    "/file/..%2f..%2fetc/passwd",
    "/file/../../etc/passwd",
    "/file/%2e%2e/%2e%2e/etc/passwd",
    "/file/%2Fetc%2Fpasswd",
    "/raw/..%2f..%2fetc/passwd",
    "/trajectory/..%2f..%2f..%2fetc",
    "/run/..",
    "/pool/..%2f..",
    "/env?pool=..%2F..&id=x",
    "/file/outside/passwd",  # a symlink inside the root that points out of it
]


def test_paths_never_leave_the_served_root(tmp_path: Path) -> None:
    root = tmp_path / "served"
    (root / "run").mkdir(parents=True)
    (root / "run" / "results.jsonl").write_text('{"attempt": 1}\n')
    (root / "outside").symlink_to("/etc")
    (tmp_path / "secret.txt").write_text("not for the viewer")
    with serving(root) as base:
        for path in [*ESCAPES, "/file/..%2fsecret.txt", "/raw/..%2fsecret.txt"]:
            status, _, body = get(base, path)
            assert status in (404, 400), (path, status)
            assert "root:x:0" not in body and "not for the viewer" not in body, path
        assert get(base, "/file/run/results.jsonl")[0] == 200


def test_only_loopback_hosts_and_reads(runs: dict[str, Path], viewer: str) -> None:
    status, headers, _ = get(viewer, "/")
    assert status == 200
    assert "default-src 'self'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"
    assert get(viewer, "/", host="attacker.example")[0] == 400  # DNS rebinding
    assert get(viewer, "/", host="localhost")[0] == 200
    assert get(viewer, f"/run/{VALIDATE}", method="POST")[0] == 405
    assert get(viewer, f"/raw/{VALIDATE}/summary.json", method="DELETE")[0] == 405


def test_large_logs_are_paged(tmp_path: Path) -> None:
    root = tmp_path / "served"
    log = root / "trials" / "t__1" / "agent" / "oracle.txt"
    log.parent.mkdir(parents=True)
    log.write_text("".join(f"line {i:06d} of a long log\n" for i in range(12_000)))  # ~290 KB
    with serving(root) as base:
        status, _, first = get(base, "/file/trials/t__1/agent/oracle.txt")
        assert status == 200 and "line 000000" in first and "line 011999" not in first
        assert len(first) < PAGE_BYTES + 8_000
        nxt = re.search(r'id="next-page" href="\?offset=(\d+)"', first)
        assert nxt is not None and int(nxt.group(1)) == PAGE_BYTES
        _, _, last = get(base, f"/file/trials/t__1/agent/oracle.txt?offset={log.stat().st_size - 100}")
        assert "line 011999" in last and 'id="next-page"' not in last and 'id="prev-page"' in last
        assert get(base, "/file/trials/t__1/agent/oracle.txt?offset=abc")[0] == 400


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        href = dict(attrs).get("href")
        if tag == "a" and href and not href.startswith(("#", "data:")):
            self.links.append(href.split("#")[0])


def _state(root: Path) -> dict[str, tuple[int, int]]:
    # SQLite's shared-memory index (-shm) is the one file a reader maps, so it is left out
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*")
            if p.is_file() and not p.name.endswith("-shm")}  # fmt: skip


def test_every_linked_page_loads_and_nothing_is_written(runs: dict[str, Path], viewer: str) -> None:
    root = runs["validate"].parent
    before = _state(root)
    seen: dict[str, float] = {}
    queue = ["/"]
    while queue and len(seen) < 400:
        path = queue.pop(0)
        if path in seen:
            continue
        started = time.perf_counter()
        status, headers, body = get(viewer, path)
        seen[path] = time.perf_counter() - started
        if status == 302:  # a dir linked as a run that is a pool
            queue.append(headers["location"])
            continue
        assert status == 200, (path, status, body[-300:])
        parser = _Links()
        parser.feed(body)
        for link in parser.links:
            url = urljoin(path, link)
            files = sum(p.startswith("/file/") for p in seen)  # every page kind in full, plain files sampled
            wanted = url.startswith("/") and not url.startswith(("/static/", "/raw/")) and url not in seen
            if wanted and (not url.startswith("/file/") or files < 40):
                queue.append(url)
    kinds = {p.split("/")[1].split("?")[0] for p in seen}
    assert {"run", "pool", "env", "trial", "trajectory", "file"} <= kinds, kinds
    assert len(seen) > 100
    assert _state(root) == before
    slowest = max(seen.values())
    assert slowest < 5.0, sorted(seen.items(), key=lambda kv: -kv[1])[:3]


def test_a_running_flywheel_page_reloads_itself(runs: dict[str, Path], viewer: str) -> None:
    path = f"/run/{runs['flywheel'].name}"
    assert 'data-refresh="5"' not in get(viewer, path)[2]
    with (runs["flywheel"] / ".lock").open("rb") as f:
        fcntl.flock(f.fileno(), fcntl.LOCK_EX)  # what a flywheel process holds while it runs
        try:
            _, _, body = get(viewer, path)
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)
    assert 'data-refresh="5"' in body and "status-running" in body


def test_the_command_serves_and_prints_its_url(runs: dict[str, Path]) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "autoenvscaling.cli", "view", str(runs["flywheel"]), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "COLUMNS": "200"},
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        m = re.search(r"(http://127\.0\.0\.1:\d+)/", line)
        assert m is not None, line
        deadline = time.monotonic() + 15
        while True:  # the URL is printed just before uvicorn starts answering
            try:
                status, headers, _ = get(m.group(1), "/")
                break
            except ConnectionRefusedError:
                assert time.monotonic() < deadline
                time.sleep(0.05)
        assert status == 302 and headers["location"] == "/run/."  # a run dir served on its own
        status, _, body = get(m.group(1), "/run/.")
        assert status == 200 and "svg" in body
    finally:
        proc.terminate()
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()


def test_command_errors_are_one_line(tmp_path: Path) -> None:
    runner = CliRunner()
    missing = runner.invoke(app, ["view", str(tmp_path / "nope")])
    assert isinstance(missing.exception, UserInputError) and "no such directory" in str(missing.exception)
    empty = runner.invoke(app, ["view", str(tmp_path)])
    assert isinstance(empty.exception, UserInputError) and "not a run dir or a pool" in str(empty.exception)


def test_recorded_paths_are_found_after_a_move(tmp_path: Path) -> None:
    run = tmp_path / "new-home" / "validate-1"
    (run / "trials" / "t__1").mkdir(parents=True)
    root = Root(tmp_path / "new-home")
    assert root.locate("/old/machine/validate-1/trials/t__1", run) == (run / "trials" / "t__1").resolve()
    assert root.locate("/old/machine/validate-1/trials/missing", run) is None
    assert root.locate("/etc/passwd", run) is None
    with pytest.raises(LookupError):
        root.resolve("../new-home/../..")
