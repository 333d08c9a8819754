"""A flywheel round with the staged proposer (scripted models, real Docker): the round's solver reproduces the
recorded outputs blindly and the environment reaches the pool with its lineage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from flywheel_helpers import EXAMPLES

from autoenvscaling.flywheel.config import load_config
from autoenvscaling.flywheel.context import NullEvents
from autoenvscaling.flywheel.records import ValidateOutput
from autoenvscaling.flywheel.rounds import Flywheel
from autoenvscaling.pool import Pool
from docker_helpers import containers_of

pytestmark = [pytest.mark.docker, pytest.mark.slow]

IDEA = {
    "operator": "filter",
    "change": "Count the requests that ended with status 404",
    "output_file": "/app/count404.txt",
    "compare": "exact",
    "new_data": False,
}
RULES = [
    {"match": "Make ONE new task from the parent", "replies": [json.dumps(IDEA)]},
    {
        "match": "Write the instruction for a person",
        "replies": [
            "Count the requests with status 404 in /app/data/access.log and write the number to /app/count404.txt."
        ],
    },
    {
        "match": "Write solve.sh for the NEW TASK",
        "replies": ["```bash\ngrep -c ' 404$' /app/data/access.log > /app/count404.txt\n```"],
    },
    {
        "match": "Is this output exactly what the instruction asks for",
        "replies": ['{"decision": "ok", "reason": "yes"}'],
    },
    # The blind solver: the instruction is its first user message.
    {
        "match": "Count the requests with status 404",
        "replies": ["```bash\ngrep -c 404 /app/data/access.log > /app/count404.txt\n```", "submit"],
    },
]


class _Notes(NullEvents):
    """The progress notes of each stage, as the CLI's progress display gets them."""

    def __init__(self) -> None:
        self.notes: list[tuple[str, str]] = []

    def advance(self, round_: int, stage: str, note: str = "") -> None:
        self.notes.append((stage, note))

    def of(self, stage: str) -> list[str]:
        return [n for s, n in self.notes if s == stage]


def test_a_staged_round_accepts_a_reproduced_environment(tmp_path: Path) -> None:
    script = tmp_path / "rules.json"
    script.write_text(json.dumps({"rules": RULES, "default": ["```bash\nls\n```", "submit"]}))
    cfg = load_config(
        EXAMPLES / "scripted.toml",
        [
            "rounds=1",
            "counts.seed_tasks=0",
            "counts.proposals=1",
            "eval.tasks=[]",
            'proposer_mode="staged"',
            f'models.solver="scripted:{script}"',
        ],
    )
    fw = Flywheel.create(cfg, tmp_path / "flywheel-staged")
    notes = _Notes()
    fw.events = notes
    (metrics,) = fw.run()
    assert containers_of(fw.paths.run_id) == []

    validated = ValidateOutput.model_validate_json((fw.paths.stage_dir(1, "validate") / "output.json").read_bytes())
    (record,) = validated.records
    assert record.mode == "staged" and record.verdict == "valid", record
    assert record.validation.recorded and record.validation.reproduce_oneshots == [1.0]  # the one-shot attempt
    assert metrics.valid == 1
    with Pool.open(fw.paths.default_pool) as pool:
        (entry,) = pool.list()
        assert "404" in entry.instruction
        assert (entry.path / "tests" / "expected" / "1-count404.txt").read_text() == "2\n"
        toml = (entry.path / "task.toml").read_text()
        assert 'parent = "worked-example"' in toml and 'operator = "filter"' in toml
    # The dedup stage's progress line says with which status the candidate entered the pool.
    assert notes.of("dedup") == ["terminal/staged-000: added as valid"]  # calibration then made it too-easy
