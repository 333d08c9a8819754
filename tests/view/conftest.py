"""Fixtures for the viewer: the runs (written once per session), a live server on 127.0.0.1, and headless Chromium.

Screenshots go to a temp dir; ``AUTOENV_VIEW_SCREENSHOTS=docs/img`` writes them where the README links them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from view_fixtures import REPO, Tab, make_runs, serving

if TYPE_CHECKING:
    from playwright.sync_api import Browser

CHROMIUM = os.environ.get("AUTOENV_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-dev-shm-usage"]


@pytest.fixture(scope="session")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return make_runs(tmp_path_factory.mktemp("view") / "runs")


@pytest.fixture(scope="session")
def viewer(runs: dict[str, Path]) -> Iterator[str]:
    with serving(runs["validate"].parent) as url:
        yield url


@pytest.fixture(scope="session")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = os.environ.get("AUTOENV_VIEW_SCREENSHOTS")
    path = (REPO / target) if target else tmp_path_factory.mktemp("screenshots")
    path.mkdir(parents=True, exist_ok=True)
    return path


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"{CHROMIUM} not found: `make setup` installs Debian's chromium (or set AUTOENV_CHROMIUM)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def tab(browser: Browser, viewer: str) -> Iterator[Tab]:
    context = browser.new_context(viewport={"width": 1200, "height": 820})
    t = Tab(context.new_page(), viewer)
    t.page.on("console", lambda m: t.problems.append(f"console.{m.type}: {m.text}") if m.type == "error" else None)
    t.page.on("pageerror", lambda e: t.problems.append(f"page error: {e}"))
    t.page.on("requestfailed", lambda r: t.problems.append(f"request failed: {r.url}"))
    try:
        yield t
    finally:
        context.close()
    assert t.problems == []
