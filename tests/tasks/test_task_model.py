"""task.toml models and task dir load/save: round trips, legacy spellings, multi-step, error messages."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from autoenvscaling.tasks import (
    NetworkMode,
    Task,
    TaskConfig,
    TaskFormatError,
    TaskPaths,
    find_task_dirs,
    load_task,
    save_task,
)
from autoenvscaling.tasks.model import dump_task_toml, parse_task_toml_text
from task_factory import TASK_TOML, MakeTask

# The shape of a Terminal-Bench 2.1 task.toml (legacy spellings included).
TB21_TOML = """\
version = "1.1"
artifacts = []

[task]
name = "terminal-bench/extract-elf"
description = "Parse an ELF file."
keywords = ["file-operations"]
[[task.authors]]
name = "A. Author"
email = "a@example.com"

[metadata]
difficulty = "medium"
expert_time_estimate_min = 30.0

[verifier]
timeout_sec = 900.0

[agent]
timeout_sec = 900.0

[environment]
build_timeout_sec = 600.0
docker_image = "alexgshaw/extract-elf:20251031"
cpus = 1
memory = "2G"
storage_mb = 10240
gpus = 0
allow_internet = false
mcp_servers = []

[verifier.env]

[environment.env]

[solution.env]
"""

MULTI_STEP_TOML = """\
schema_version = "1.4"
multi_step_reward_strategy = "mean"

[environment]
workdir = "/app"

[[steps]]
name = "scaffold"
min_reward = 1.0

[steps.agent]
timeout_sec = 60.0

[steps.verifier]
timeout_sec = 30.0
colour = "red"

[[steps]]
name = "implement"
contributes_to_mean = false
"""


def test_round_trip_keeps_every_field(make_task: MakeTask, tmp_path: Path) -> None:
    src = make_task(files={"task.toml": TASK_TOML + '\n[metadata.extra]\nwhen = 2024-01-02\nx = "y"\n'})
    task = load_task(src)
    copy = save_task(task, tmp_path / "copy")
    again = load_task(copy.paths.root)
    assert again.config == task.config
    assert again.instruction == task.instruction
    assert again.config.metadata["extra"]["when"] == datetime.date(2024, 1, 2)
    assert (copy.paths.root / "tests" / "test_outputs.py").is_file()
    # task.toml is rewritten in normal form, so a second save changes nothing.
    assert save_task(again, tmp_path / "copy2").content_hash() == again.content_hash()


def test_dump_parse_is_a_fixed_point() -> None:
    config = parse_task_toml_text(TB21_TOML)
    assert parse_task_toml_text(dump_task_toml(config)) == config


def test_legacy_version_and_allow_internet() -> None:
    config = parse_task_toml_text(TB21_TOML)
    assert config.schema_version == "1.1"
    assert config.environment.network_mode == NetworkMode.NO_NETWORK
    assert not config.network_enabled
    assert config.environment.memory_mb == 2048
    assert config.task.authors == [{"name": "A. Author", "email": "a@example.com"}]
    # Real Harbor keys are not "unknown": a TB 2.1 task lints clean on that rule.
    assert config.unknown_key_paths() == []
    dumped = dump_task_toml(config)
    assert "allow_internet" not in dumped
    assert 'network_mode = "no-network"' in dumped


def test_allow_internet_true_and_explicit_network_mode_wins() -> None:
    assert parse_task_toml_text("[environment]\nallow_internet = true\n").network_enabled
    both = parse_task_toml_text('[environment]\nallow_internet = true\nnetwork_mode = "no-network"\n')
    assert both.environment.network_mode == NetworkMode.NO_NETWORK


def test_both_version_spellings_keep_schema_version() -> None:
    config = parse_task_toml_text('version = "1.0"\nschema_version = "1.4"\n')
    assert config.schema_version == "1.4"
    assert config.unknown_key_paths() == []


def test_numeric_user_is_accepted() -> None:
    config = parse_task_toml_text('[agent]\nuser = 1000\n[verifier]\nuser = "root"\n')
    assert config.agent.user == 1000
    assert config.verifier.user == "root"


def test_multi_step_parsing(make_task: MakeTask) -> None:
    root = make_task(
        files={
            "task.toml": MULTI_STEP_TOML,
            "instruction.md": None,
            "steps/scaffold/instruction.md": "Create /app/a.txt.\n",
            "steps/implement/instruction.md": "Append to /app/a.txt.\n",
        }
    )
    task = load_task(root)
    cfg = task.config
    assert cfg.is_multi_step
    assert [s.name for s in cfg.steps] == ["scaffold", "implement"]
    assert cfg.steps[0].min_reward == 1.0
    assert cfg.steps[0].agent is not None and cfg.steps[0].agent.timeout_sec == 60.0
    assert cfg.steps[0].verifier is not None and cfg.steps[0].verifier.timeout_sec == 30.0
    assert cfg.steps[1].contributes_to_mean is False
    assert cfg.multi_step_reward_strategy == "mean"
    assert task.instruction == ""  # root instruction is optional for multi-step tasks
    assert cfg.unknown_key_paths() == ["steps[0].verifier.colour"]


def test_unknown_keys_are_kept_and_listed() -> None:
    config = parse_task_toml_text('flavour = 1\n[task]\nnick = "x"\n[environment]\ngpu = 1\n')
    assert config.unknown_key_paths() == ["flavour", "task.nick", "environment.gpu"]
    assert parse_task_toml_text(dump_task_toml(config)).unknown_key_paths() == config.unknown_key_paths()


def test_malformed_toml_names_the_file(make_task: MakeTask) -> None:
    root = make_task(files={"task.toml": "[task\nname = 1\n"})
    with pytest.raises(TaskFormatError) as err:
        load_task(root)
    assert str(root / "task.toml") in str(err.value)
    assert "invalid TOML" in str(err.value)


@pytest.mark.parametrize(
    ("toml", "field"),
    [
        ('[verifier]\ntimeout_sec = "soon"\n', "verifier.timeout_sec"),
        ('[environment]\nnetwork_mode = "sometimes"\n', "environment.network_mode"),
        ("[[steps]]\nmin_reward = 1.0\n", "steps.0.name"),
        ('[environment]\nmemory = "lots"\n', "environment"),
    ],
)
def test_field_errors_name_file_and_field(make_task: MakeTask, toml: str, field: str) -> None:
    root = make_task(files={"task.toml": toml})
    with pytest.raises(TaskFormatError) as err:
        load_task(root)
    message = str(err.value)
    assert message.startswith(f"{root / 'task.toml'}: field {field}")


def test_missing_files_are_task_format_errors(make_task: MakeTask, tmp_path: Path) -> None:
    with pytest.raises(TaskFormatError, match=r"instruction\.md: missing"):
        load_task(make_task(name="a", files={"instruction.md": None}))
    with pytest.raises(TaskFormatError, match=r"task\.toml: missing"):
        load_task(make_task(name="b", files={"task.toml": None}))
    with pytest.raises(TaskFormatError, match="not a task directory"):
        load_task(tmp_path / "nowhere")


def test_save_in_memory_task_creates_the_dir(tmp_path: Path) -> None:
    task = Task(paths=TaskPaths(tmp_path / "never"), config=TaskConfig(), instruction="Do it.\n")
    saved = save_task(task, tmp_path / "new")
    assert load_task(saved.paths.root).instruction == "Do it.\n"


def test_save_into_own_subdir_is_refused(make_task: MakeTask) -> None:
    task = load_task(make_task())
    with pytest.raises(TaskFormatError, match="inside its own directory"):
        save_task(task, task.paths.root / "copy")


def test_find_task_dirs(make_task: MakeTask, tmp_path: Path) -> None:
    a = make_task(name="set/a")
    b = make_task(name="set/b", files={"environment/task.toml": "# data of the task, not a task\n"})
    assert find_task_dirs([tmp_path / "set"]) == [a, b]
    assert find_task_dirs([a / "task.toml", a, tmp_path / "set"]) == [a, b]
    with pytest.raises(TaskFormatError, match=r"no task\.toml"):
        find_task_dirs([a / "environment"])
    with pytest.raises(TaskFormatError, match="no such file"):
        find_task_dirs([tmp_path / "missing"])
