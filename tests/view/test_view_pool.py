"""The pool browser and environment page on a pool whose entries share a name (two runs' ``prompt-000``) and carry
the quality probes' results: entries are told apart by id and generation, and the probe flags filter the list."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from starlette.testclient import TestClient
from view_fixtures import EXAMPLES

from autoenvscaling.pool.catalog import Pool
from autoenvscaling.pool.models import Lineage
from autoenvscaling.validate.report import ProbeReport, ValidationReport, Verdict
from autoenvscaling.view.app import create_app
from autoenvscaling.view.pool_read import PoolFilter, list_entries

SEED = EXAMPLES / "flywheel" / "tasks" / "seed-count-words"


def _task(root: Path, n: int, instruction: str) -> Path:
    dest = root / f"run-{n}" / "prompt-000"  # the pool names an entry after its dir, as every run names its first
    shutil.copytree(SEED, dest)
    (dest / "instruction.md").write_text(instruction)
    return dest


def _report(probes: ProbeReport | None) -> ValidationReport:
    return ValidationReport(task_name="prompt-000", task_path="x", verdict=Verdict.VALID, probes=probes)


@pytest.fixture
def pool(tmp_path: Path) -> tuple[Path, list[str]]:
    """Three entries named ``prompt-000``: run-a's (hackable, weak tests), run-b's (unprobed), one not validated."""
    d = tmp_path / "pool"
    p = Pool.open(d)
    ids = []
    texts = ["Count the words in /app/a.txt.", "Reverse every line of /app/b.txt.", "Sum the numbers in /app/c.txt."]
    for n, (run, text) in enumerate(zip(["run-a", "run-b", "run-c"], texts, strict=True)):
        lineage = Lineage(proposer_episode=f"/x/{run}/rounds/{n + 1}/propose/episodes/prompt-000", parent_run=run)
        res = p.add(_task(tmp_path, n, text), round=n + 1, lineage=lineage, near_duplicate="ignore")
        assert res.added, res
        ids.append(res.id)
    p.record_validation(ids[0], _report(ProbeReport(flags=["hackable:empty-output", "weak-tests"])))
    p.record_validation(ids[1], _report(None))
    p.close()
    return d, ids


def _ids(pool_dir: Path, **kw: object) -> list[str]:
    return [e.id for e in list_entries(pool_dir, PoolFilter.model_validate(kw)).entries]


def test_probe_flags_filter_the_list(pool: tuple[Path, list[str]]) -> None:
    d, ids = pool
    listing = list_entries(d, PoolFilter())
    assert {"hackable", "unprobed", "probe:weak-tests", "probe:hackable:empty-output"} <= set(listing.flag_choices)
    assert listing.flags[ids[0]] == ["hackable", "probe:hackable:empty-output", "probe:weak-tests"]
    assert listing.flags[ids[1]] == ["unprobed"] and listing.flags[ids[2]] == []
    assert _ids(d, flags=["hackable"]) == [ids[0]]
    assert _ids(d, flags=["probe:weak-tests"]) == [ids[0]]
    assert _ids(d, flags=["unprobed"]) == [ids[1]]
    f = PoolFilter(flags=["no-such-flag"])
    assert [e.id for e in list_entries(d, f).entries] == ids and f.flags == []  # an unknown flag is dropped


def test_entries_that_share_a_name_are_told_apart(pool: tuple[Path, list[str]]) -> None:
    d, ids = pool
    listing = list_entries(d, PoolFilter())
    assert len(set(ids)) == 3 and listing.shared_names == {"prompt-000": 3}
    assert listing.labels[ids[0]] == "generation prompt-000, round 1, run run-a"
    assert listing.labels[ids[1]] == "generation prompt-000, round 2, run run-b"


def test_pages_link_by_id_and_show_the_generation(pool: tuple[Path, list[str]]) -> None:
    d, ids = pool
    client = TestClient(create_app(d.parent), base_url="http://127.0.0.1")
    page = client.get("/pool/pool", params={"flag": "hackable"})
    assert page.status_code == 200
    rows = re.findall(r'<tr class="env"', page.text)
    assert len(rows) == 1 and f"id={ids[0]}" in page.text and f"id={ids[1]}" not in page.text
    assert "shared name" in page.text and "generation prompt-000, round 1, run run-a" in page.text
    assert 'value="probe:weak-tests" checked' not in page.text and 'value="hackable" checked' in page.text
    env = client.get("/env", params={"pool": "pool", "id": ids[1]})
    assert env.status_code == 200
    assert f'<code id="env-id">{ids[1]}</code>' in env.text
    assert "generation prompt-000, round 2, run run-b" in env.text
    assert f"id={ids[0]}" in env.text and f"id={ids[2]}" in env.text  # its namesakes, linked by id
