"""A round's export loads as is in other trainers: TRL's ``HarborSpec`` (called for real), SkyRL's Harbor dataset
and rLLM's local-benchmark loader (neither importable here: their rules are reproduced from the files cited).

Every trainer is pointed at the export's ``dataset/`` dir (``<run>/rounds/<n>/export/dataset``); docs/training.md
gives the commands. The export is built by our code from the flywheel's two example tasks."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from autoenvscaling.export.round import export_round
from autoenvscaling.pool import EnvStatus, Pool
from autoenvscaling.tasks.dataset import dataset_task_dirs, read_manifest
from autoenvscaling.train.rows import load_rows

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "flywheel" / "tasks"
TASKS = ["seed-count-words", "heldout-reverse-lines"]


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    """``<export>/dataset`` of a round whose learnable environments are the two example tasks."""
    with Pool.open(tmp_path / "pool") as pool:
        for name in TASKS:
            env = pool.add(EXAMPLES / name, domain="terminal", round=1, source="import")
            pool.set_status(env.id, EnvStatus.LEARNABLE)
        export_round(pool, tmp_path / "export", round_=1, solver_trials=[], episodes=[])
    return tmp_path / "export" / "dataset"


def _ours(dataset: Path) -> list[Path]:
    """The task dirs our own trainer rows use (``train.rows.load_rows``), resolved."""
    return [Path(r.task_dir) for r in load_rows(dataset.parent).rows]


def test_trl_harborspec_reads_the_dataset_dir(dataset: Path) -> None:
    """``trl.experimental.harbor.HarborSpec(DIR)``: ``DIR/tasks/*/task.toml``, else ``DIR/*/task.toml`` (anything
    else is taken for a Hugging Face dataset id and downloaded). Its rows drive our environment unchanged."""
    harbor = pytest.importorskip("trl.experimental.harbor")  # imports without `harbor`; the env needs it, not rows
    pytest.importorskip("datasets")
    spec = harbor.HarborSpec(str(dataset), agent="bash")
    rows = list(spec.train_dataset)
    assert sorted(Path(r["task_dir"]).resolve() for r in rows) == sorted(_ours(dataset))
    assert all(r["prompt"] == [{"role": "user", "content": ""}] for r in rows)  # as train.rows.TaskRow
    assert load_rows(dataset.parent).rows[0].prompt == rows[0]["prompt"]
    assert not (dataset / "tasks").exists()  # so HarborSpec takes the second rule, the task dirs in DIR


def test_skyrl_harbor_task_dataset_rule(dataset: Path) -> None:
    """SkyRL's ``HarborTaskDataset(data_files=[DIR])`` (NovaSky-AI/SkyRL @ a9564572,
    examples/train_integrations/harbor/dataset.py, ``_load_data_files`` / ``_is_valid_task_directory``): the
    immediate subdirectories of DIR holding an ``instruction.md`` file are the tasks; each item's ``prompt`` is the
    task dir's path, which SkyRL hands to Harbor's ``Trial`` as ``task.path``. Only when no subdirectory qualifies
    is DIR itself a task. ``main_harbor.py`` asserts ``len(dataset) >= trainer.train_batch_size``."""
    subdirs = [d for d in dataset.iterdir() if d.is_dir()]
    tasks = [d for d in subdirs if (d / "instruction.md").is_file()]
    assert tasks == subdirs  # no other dir that SkyRL would drop (or, with no task at all, misread DIR as one)
    assert sorted(d.resolve() for d in tasks) == sorted(_ours(dataset))
    for task in tasks:  # what Harbor's Trial then needs of task.path
        assert (task / "task.toml").is_file() and (task / "environment" / "Dockerfile").is_file()
        assert (task / "tests" / "test.sh").is_file()
    assert not (dataset / "instruction.md").exists()


def test_rllm_benchmark_loader_rule(dataset: Path) -> None:
    """rLLM's ``rllm eval DIR`` / ``rllm train DIR`` (rllm-org/rllm @ 9beb6e0f): ``rllm/tasks/loader.py``
    ``BenchmarkLoader.load`` reads DIR/dataset.toml when present (``rllm/tasks/dataset_config.py``): a ``data`` key
    or a ``data/`` dir makes it a rows dataset; else each ``[[tasks]]`` entry's ``path`` (a KeyError without one)
    is a task dir under DIR (Task id = its ``[task] name``, sub_dir = the path). ``rllm/cli/train.py`` then needs a
    dataset-level verifier (``rllm/eval/_resolution.py`` ``_detect_verifier``: DIR/dataset.toml ``[verifier]``
    ``script``/``module``/``name``/``import_path``, or DIR/tests/test.sh), and per task the task.toml's
    ``[verifier]`` keys, else the task's own tests/test.sh."""
    raw = tomllib.loads((dataset / "dataset.toml").read_text())
    section = raw.get("dataset", {})
    assert "data" not in section and not (dataset / "data").is_dir()  # a sandbox dataset, not rows
    assert section.get("type", "sandbox") == "sandbox"
    entries = raw.get("tasks")
    assert isinstance(entries, list) and all(isinstance(e, dict) and "path" in e for e in entries)
    task_dirs = [(dataset / e["path"]).resolve() for e in entries]
    assert task_dirs == [p.resolve() for p in dataset_task_dirs(dataset)]  # the manifest's order, as autoenv eval
    assert sorted(task_dirs) == sorted(_ours(dataset))
    for entry, task_dir in zip(entries, task_dirs, strict=True):
        assert task_dir.parent == dataset.resolve()  # sub_dir is relative to DIR
        config = tomllib.loads((task_dir / "task.toml").read_text())
        assert config["task"]["name"] == entry["name"]  # rLLM's task id is Harbor's task name
        assert (task_dir / "instruction.md").is_file()
        own = config.get("verifier", {})
        assert not {"script", "module", "name", "import_path"} & set(own)  # so rLLM finds ...
        assert (task_dir / "tests" / "test.sh").is_file()  # ... the task's own tests/test.sh
    assert raw["verifier"] == {"script": "tests/test.sh"}  # the dataset-level verifier `rllm train` requires


def test_the_rllm_keys_leave_harbors_manifest_as_it_was(dataset: Path) -> None:
    """Harbor 0.26's ``DatasetManifest`` (``harbor/models/dataset/manifest.py``, pydantic models without
    ``extra="forbid"``) ignores ``path`` and ``[verifier]``, as our reader of the same model does."""
    manifest = read_manifest(dataset / "dataset.toml")
    assert manifest.dataset.name == "autoenv/round-001"
    assert [t.name for t in manifest.tasks] == [f"autoenv/{p.name}" for p in dataset_task_dirs(dataset)]
    text = (dataset / "dataset.toml").read_text()
    assert text.startswith("[dataset]\n") and text.index("[[tasks]]") < text.index("[verifier]")
