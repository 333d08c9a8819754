"""Flywheel config: TOML + key=value overrides, model strings, paths relative to the file, the saved copy."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
import tomli_w

from autoenvscaling.agent.config import guarded_solver
from autoenvscaling.errors import UserInputError
from autoenvscaling.flywheel.config import FlywheelConfig, load_config, parse_override
from autoenvscaling.flywheel.domains import allocate, seed_tasks
from autoenvscaling.roles.proposer.domain import DomainContext

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "flywheel"


def test_shipped_configs_load() -> None:
    scripted = load_config(EXAMPLES / "scripted.toml")
    assert scripted.rounds == 2 and scripted.models.co_evolution
    assert scripted.models.solver.provider == "scripted"
    assert scripted.models.solver.scripted_path == EXAMPLES / "scripted" / "replies.json"
    assert scripted.seed_tasks == [EXAMPLES / "tasks" / "seed-count-words"]
    demo = load_config(EXAMPLES / "demo.toml")
    assert demo.models.solver.provider == "embedded" and demo.proposer_mode == "auto"
    assert demo.counts.proposals == 2 and demo.counts.reproduce_attempts == 3 and demo.solver.max_turns == 15


def test_overrides_and_model_tables(tmp_path: Path) -> None:
    path = tmp_path / "fw.toml"
    path.write_text('rounds = 1\n[models]\nsolver = "embedded:0.5b"\nproposer = "gpt-x"\n')
    cfg = load_config(
        path,
        ["rounds=3", "counts.proposals=7", "domains={swe = 2, terminal = 1}", "models.solver.temperature=0.5",
         "train.kind=command", "train.command=python train.py {export_dir}"],
    )  # fmt: skip
    assert cfg.rounds == 3 and cfg.counts.proposals == 7 and cfg.domains == {"swe": 2, "terminal": 1}
    assert cfg.models.solver.embedded_size == "0.5b" and cfg.models.solver.temperature == 0.5
    assert cfg.models.proposer is not None and cfg.models.proposer.name == "gpt-x"
    assert cfg.train.command == "python train.py {export_dir}"
    assert parse_override("a.b=hello world") == (["a", "b"], "hello world")


def test_a_solver_table_keeps_the_guards_it_does_not_name(tmp_path: Path) -> None:
    path = tmp_path / "fw.toml"
    path.write_text("[solver]\nmax_turns = 12\nmax_repeats = 0\n")
    cfg = load_config(path, ["solver.command_timeout_sec=45"])
    assert (cfg.solver.max_turns, cfg.solver.max_repeats, cfg.solver.command_timeout_sec) == (12, 0, 45)
    guarded = guarded_solver(max_turns=12)  # the guards the table left alone are the round's defaults
    assert cfg.solver.review_before_submit and cfg.solver.outputs_before_submit == guarded.outputs_before_submit
    assert cfg.solver.preview_inputs == guarded.preview_inputs and cfg.solver.stop_after_block
    assert FlywheelConfig().solver == guarded_solver(max_turns=30)


def test_errors_are_one_line(tmp_path: Path) -> None:
    path = tmp_path / "fw.toml"
    path.write_text("rounds = 0\n")
    with pytest.raises(UserInputError, match="rounds"):
        load_config(path)
    with pytest.raises(UserInputError, match="expected key=value"):
        load_config(None, ["rounds"])
    with pytest.raises(UserInputError, match="domains"):
        load_config(None, ["domains={terminal = 0}"])


def test_resolved_config_round_trips_through_toml() -> None:
    cfg = load_config(EXAMPLES / "scripted.toml")
    again = FlywheelConfig.model_validate(tomllib.loads(tomli_w.dumps(cfg.to_toml_dict())))
    assert again == cfg


def test_allocate_splits_by_weight() -> None:
    assert allocate(5, {"a": 1, "b": 1}) == {"a": 3, "b": 2}
    assert allocate(4, {"a": 3, "b": 1}) == {"a": 3, "b": 1}
    assert allocate(2, {"a": 1, "b": 0}) == {"a": 2}
    assert sum(allocate(7, {"a": 0.2, "b": 0.3, "c": 0.5}).values()) == 7


def test_seed_tasks_interleave_domain_examples(tmp_path: Path) -> None:
    a = DomainContext(name="a", examples=[tmp_path / "a1", tmp_path / "a2"])
    b = DomainContext(name="b", examples=[tmp_path / "b1"])
    assert seed_tasks([], [a, b]) == [tmp_path / "a1", tmp_path / "b1", tmp_path / "a2"]


def test_shipped_scripted_files_match_their_generator() -> None:
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / "scripted" / "generate.py"), "--check"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout
