"""The viewer in headless Chromium on runs our code wrote: every page loads cleanly (and is photographed), the
filters change the lists, the trajectory player steps both ways (a staged proposer episode too), the flywheel's
charts render."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import quote

import pytest
from staged_episode import TASK, write_parent, write_staged_episode
from view_fixtures import FLYWHEEL, PROPOSE, SOLVE, VALIDATE, Tab, episode_with_checks, learnable_env, serving, shoot

if TYPE_CHECKING:
    from playwright.sync_api import Browser

pytestmark = pytest.mark.browser


def urls(runs: dict[str, Path]) -> dict[str, tuple[str, str]]:
    """page name -> (path, a selector the page must show)."""
    root = runs["validate"].parent
    episode = episode_with_checks(runs).relative_to(root).as_posix()
    solver = next((runs["solve"] / "trials").glob("*/agent/trajectory.json")).relative_to(root).as_posix()
    pool = f"{FLYWHEEL}/pool"
    return {
        "runs": ("/", "#runs tr.run"),
        "validation": (f"/run/{VALIDATE}", "#verdicts tr.task"),
        "trial": (f"/trial/{VALIDATE}/trials/seed-count-words__oracle-1", "td.reward"),
        "solve": (f"/run/{SOLVE}", "#tasks"),
        "propose": (f"/run/{PROPOSE}", "#proposals a.trajectory-link"),
        "trajectory": (f"/trajectory/{episode}", "#player section.step"),
        "solver-trajectory": (f"/trajectory/{solver}", "#player section.step"),
        "pool": (f"/pool/{pool}", "#envs tr.env"),
        "environment": (f"/env?pool={quote(pool)}&id={learnable_env(runs)}", "#instruction .markdown p"),
        "flywheel": (f"/run/{FLYWHEEL}", "svg.chart rect.bar"),
    }


PAGES = ("runs", "validation", "trial", "solve", "propose", "trajectory", "solver-trajectory", "pool", "environment",
         "flywheel")  # fmt: skip


@pytest.mark.parametrize("name", PAGES)
def test_every_page_loads_without_console_errors(tab: Tab, runs: dict[str, Path], shots: Path, name: str) -> None:
    path, selector = urls(runs)[name]
    page = tab.open(path)
    assert page.locator(selector).first.is_visible(), (name, selector)
    shoot(page, shots / f"view-{name}.png")
    assert (shots / f"view-{name}.png").stat().st_size > 3_000


def test_runs_filter_changes_the_list(tab: Tab) -> None:
    page = tab.open("/")
    rows = page.locator("#runs tr.run")
    assert rows.count() == 4
    page.select_option("#kind", "validate")  # submits on change
    page.wait_for_url("**kind=validate**")
    assert rows.count() == 1 and rows.first.get_attribute("data-kind") == "validate"
    page.select_option("#kind", "")
    page.wait_for_url("**kind=&**")
    page.fill("#q", "learnable")
    page.press("#q", "Enter")
    page.wait_for_url("**q=learnable**")
    assert [rows.nth(i).get_attribute("data-kind") for i in range(rows.count())] == ["flywheel"]


def test_pool_filters_change_the_list(tab: Tab) -> None:
    page = tab.open(f"/pool/{FLYWHEEL}/pool")
    rows = page.locator("#envs tr.env")
    total = rows.count()
    assert total >= 3
    page.select_option("#status", "learnable")
    page.wait_for_url("**status=learnable**")
    statuses = {rows.nth(i).get_attribute("data-status") for i in range(rows.count())}
    assert statuses == {"learnable"} and rows.count() < total
    page.goto(f"{tab.base}/pool/{FLYWHEEL}/pool?min_pass=0.9")
    assert {rows.nth(i).get_attribute("data-status") for i in range(rows.count())} == {"too-easy"}
    page.goto(f"{tab.base}/pool/{FLYWHEEL}/pool")
    page.fill("#q", "longest word")
    page.press("#q", "Enter")
    page.wait_for_url("**q=longest**")
    assert rows.count() == 1 and "/app/words.txt" in rows.first.inner_text()  # the longest-word task
    assert page.locator("#count").inner_text() == f"1 of {total}"
    page.goto(f"{tab.base}/pool/{FLYWHEEL}/pool")
    assert page.locator("#envs .shared-name").count() == 2  # both rounds' prompt-000, told apart by id
    page.check("#flags input[value=hackable]")  # the quality probes' flag; submits on change
    page.wait_for_url("**flag=hackable**")
    assert rows.count() == 0 and page.locator("#count").inner_text() == f"0 of {total}"  # every entry passed them


def test_trajectory_player_steps_forward_and_back(tab: Tab, runs: dict[str, Path], shots: Path) -> None:
    page = tab.open(urls(runs)["trajectory"][0])
    steps = page.locator("#player section.step")
    n = steps.count()
    assert n >= 4

    def at(i: int) -> None:
        assert page.locator("#step-no").inner_text() == str(i)
        assert [steps.nth(j).is_visible() for j in range(n)] == [j == i - 1 for j in range(n)]

    at(1)
    assert page.locator("#prev").is_disabled()
    page.click("#next")
    at(2)
    page.keyboard.press("ArrowRight")
    at(3)
    page.click("#prev")
    at(2)
    page.keyboard.press("ArrowLeft")
    at(1)
    page.click("#last")
    at(n)
    assert page.locator("#next").is_disabled()
    page.locator(".step-index a.has-check").first.click()  # the step that ran `check`
    check = page.locator("section.step:visible .check")
    assert "check 1: passed" in check.inner_text()
    diff = page.locator("section.step:visible div.diff")
    assert "tests/test.sh" in diff.inner_text() and diff.locator(".d-add").count() > 0
    assert page.url.endswith(f"#step-{page.locator('#step-no').inner_text()}")
    shoot(page, shots / "view-trajectory-check.png")


def test_flywheel_charts_render(tab: Tab) -> None:
    page = tab.open(f"/run/{FLYWHEEL}")
    bars = page.locator("svg.chart[data-kind=bar]").first
    box = bars.bounding_box()
    assert box is not None and box["width"] > 300 and box["height"] > 100
    assert bars.locator("rect.bar").count() == 6  # proposals, valid, learnable x 2 rounds
    assert "valid round 1: 2" in bars.locator("rect.bar title").all_text_contents()
    lines = page.locator("svg.chart[data-kind=line]")
    assert lines.count() >= 3 and lines.first.locator("circle.dot").count() >= 2
    assert page.locator("#rounds tbody tr").count() == 2


def test_staged_episode_player_shows_each_stage_diff_and_the_check(
    browser: Browser, tmp_path: Path, shots: Path
) -> None:
    episode = tmp_path / "propose-staged" / "episodes" / TASK
    write_staged_episode(episode, write_parent(tmp_path))
    context = browser.new_context(viewport={"width": 1200, "height": 820})
    with serving(tmp_path) as base:
        tab = Tab(context.new_page(), base)
        tab.page.on("console", lambda m: tab.problems.append(m.text) if m.type == "error" else None)
        tab.page.on("pageerror", lambda e: tab.problems.append(str(e)))
        page = tab.open(f"/trajectory/propose-staged/episodes/{TASK}/trajectory.json")
        assert page.locator(".step-index a.has-diff").count() == 3  # two observes and the record
        page.locator(".step-index a.has-diff").nth(1).click()  # the second observe: data appended, script fixed
        visible = page.locator("section.step:visible")
        assert "stage observe (harness)" in visible.locator("h2").inner_text()
        diff = visible.locator("div.diff")
        assert "environment/numbers.txt" in diff.inner_text() and diff.locator(".d-add").count() >= 2
        page.click("#last")  # the check
        assert "check: passed" in page.locator("section.step:visible .check").inner_text()
        page.click("#prev")  # the record: the tests with the recorded answers
        assert "tests/expected/result.txt" in page.locator("section.step:visible div.diff").inner_text()
        shoot(page, shots / "view-trajectory-staged.png")
    context.close()
    assert tab.problems == []
