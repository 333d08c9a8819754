"""Finding 6: the prompt-only baseline writes separate-mode tasks whose artifacts are the files the tests read."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from proposer_scripts import prompt_reply

from autoenvscaling.roles.proposer import prompts
from autoenvscaling.roles.proposer.outputs import image_paths, task_outputs
from autoenvscaling.roles.proposer.prompt_only import SCHEMA, parse_proposal, write_proposal
from autoenvscaling.tasks import lint_task, load_task


def _written(tmp_path: Path, **changes: object) -> tuple[dict[str, object], list[str]]:
    data = json.loads(prompt_reply())
    data.update(changes)
    proposal = parse_proposal(json.dumps(data))
    assert proposal is not None
    notes = write_proposal(proposal, tmp_path / "t", "terminal")
    return tomllib.loads((tmp_path / "t" / "task.toml").read_text()), notes


def test_a_reply_without_outputs_gets_them_from_its_tests(tmp_path: Path) -> None:
    config, notes = _written(tmp_path)  # the scripted reply predates the outputs field
    assert config["artifacts"] == ["/app/sum.txt"] and notes == []
    assert config["verifier"] == {"timeout_sec": 120, "environment_mode": "separate"}
    task = load_task(tmp_path / "t")
    assert task.config.verifier.environment_mode == "separate"
    assert "shared-verifier" not in [f.rule for f in lint_task(tmp_path / "t")]


def test_a_reply_whose_tests_read_nothing_it_writes_gets_a_note(tmp_path: Path) -> None:
    config, notes = _written(tmp_path, test_files=[], test_sh="#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n")
    assert config["artifacts"] == [] and notes == [
        "no outputs listed or found in the tests: they will see only what the image holds"
    ]


def test_declared_outputs_are_kept_when_safe(tmp_path: Path) -> None:
    outputs = ["/app/report.md", "/logs/verifier/reward.txt", "../../etc/passwd", "/app/report.md", "/"]
    config, notes = _written(tmp_path, outputs=outputs)
    assert config["artifacts"] == ["/app/report.md", "/app/sum.txt"]
    assert len(notes) == 3 and all(n.startswith("left out output") for n in notes)


@pytest.mark.parametrize(
    ("tests", "solution", "expected"),
    [
        # a file under a directory the solution creates
        ("json.loads(Path('/app/json/app.json').read_text())", "mkdir -p /app/json", ["/app/json/app.json"]),
        # the dir and one of its files: the dir covers the file (no overlapping artifacts)
        ("Path('/app/json') / n; Path('/app/json/app.json')", "mkdir -p /app/json", ["/app/json"]),
        # the work dir is where everything lives, not an output
        ("cd /app && test -s /app/out.txt", "sort /app/data/in.txt > /app/out.txt", ["/app/out.txt"]),
        # an input the image provides is never taken from the solver's container
        ("wc -l /app/data/in.txt /app/out.txt", "cat /app/data/in.txt > /app/out.txt", ["/app/out.txt"]),
        # what the solution never mentions, and the harness's dirs, are not outputs
        ("cat /tests/expected.txt /etc/hostname > /logs/verifier/x", "echo hi > /app/o", []),
        # a URL is not a path
        ("curl http://localhost/app/out.txt", "echo > /app/out.txt", []),
    ],
)
def test_outputs_inferred_from_the_texts(tests: str, solution: str, expected: list[str]) -> None:
    image = image_paths("FROM x\nWORKDIR /app\nCOPY --chown=1 in.txt /app/data/in.txt\n")
    assert image == ({"/app/data/in.txt"}, {"/app"})
    assert task_outputs([], [tests], [solution], image) == (expected, [])


def test_the_schema_and_the_prompt_ask_for_outputs_in_step_with_the_tests() -> None:
    assert "outputs" in SCHEMA["required"] and SCHEMA["properties"]["outputs"]["type"] == "array"
    text = prompts.render(
        "prompt_only_user.j2",
        domain="terminal",
        description="",
        guide="g",
        examples="e",
        digest="",
        has_trajectories=False,
        images=["autoenv/terminal:latest"],
    )
    assert "Keep outputs in step with what the tests read" in text
    assert "only the files listed in outputs are copied" in text
