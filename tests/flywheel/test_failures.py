"""Failures that must end as a recorded error of one item while the round goes on: a model endpoint that fails
mid-round (proposer and solver), a disk-full write (an OSError injected at the write sites), a Docker build that
hangs (cut by the task's build timeout)."""

from __future__ import annotations

import errno
import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from flywheel_helpers import EXAMPLES

from autoenvscaling.export import round as export_round
from autoenvscaling.flywheel.config import load_config
from autoenvscaling.flywheel.records import CalibrateOutput, DedupOutput, ExportOutput, ValidateOutput
from autoenvscaling.flywheel.rounds import Flywheel
from autoenvscaling.pool import EnvStatus, Pool, storage
from docker_helpers import containers_of

pytestmark = [pytest.mark.docker, pytest.mark.slow]
DOWN = {"error": "endpoint down (HTTP 503 after retries)"}


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fw_generate", EXAMPLES / "scripted" / "generate.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


G = _generator()


def _run(tmp_path: Path, rules: list[dict[str, Any]], *overrides: str) -> Flywheel:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps({"rules": rules, "default": ["submit"]}))
    cfg = load_config(
        EXAMPLES / "scripted.toml",
        ["rounds=1", "counts.seed_tasks=0", "eval.tasks=[]", f'models.solver="scripted:{script}"', *overrides],
    )
    fw = Flywheel.create(cfg, tmp_path / "flywheel-failures")
    fw.run()
    assert containers_of(fw.paths.run_id) == []
    return fw


def test_endpoint_failures_and_full_disk_are_recorded_per_item(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real_copy = storage.stage_copy

    def full_disk_for_the_third(src: Path, tmp_root: Path) -> Path:
        if src.name == "prompt-002":
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_copy(src, tmp_root)

    def full_disk(*_a: object, **_k: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(storage, "stage_copy", full_disk_for_the_third)
    monkeypatch.setattr(export_round, "write_sft", full_disk)
    first_line = G.TASKS["count-error-lines"][3].splitlines()[-1]
    rules = [
        {"match": "^You write environments",
         "variants": [[G.prompt_reply("count-error-lines")], [DOWN], [G.prompt_reply("sum-numbers")]]},
        {"match": first_line, "variants": [G.solver_variants("count-error-lines")[0], [DOWN]]},
    ]  # fmt: skip
    fw = _run(tmp_path, rules, "counts.proposals=3")
    (metrics,) = fw.round_metrics()
    assert metrics.proposals == 3 and metrics.valid == 2
    assert metrics.errors == {"propose": 1, "dedup": 1}

    validated = ValidateOutput.model_validate_json(
        fw.paths.stage_dir(1, "validate").joinpath("output.json").read_text()
    )
    failed = {r.id: r for r in validated.records}["prompt-001"]
    assert failed.verdict == "no-candidate" and "endpoint down" in str(failed.generation.error)

    dedup = DedupOutput.model_validate_json((fw.paths.stage_dir(1, "dedup") / "output.json").read_text())
    full = {a.proposal_id: a for a in dedup.adds}["prompt-002"]
    assert full.outcome == "error" and "No space left on device" in str(full.error) and full.env_id is None

    cal = CalibrateOutput.model_validate_json((fw.paths.stage_dir(1, "calibrate") / "output.json").read_text())
    (task,) = cal.tasks
    assert [a.reward for a in task.attempts] == [1.0, None]
    assert "endpoint down" in str(task.attempts[1].error)
    (record,) = cal.calibrations
    assert record.calibration is not None and (record.calibration.attempts, record.errors) == (1, 1)
    with Pool.open(fw.paths.default_pool) as pool:
        assert [e.status for e in pool.list()] == [EnvStatus.TOO_EASY]

    export = ExportOutput.model_validate_json((fw.paths.stage_dir(1, "export") / "output.json").read_text())
    assert any(n.startswith("sft: OSError") and "No space left" in n for n in export.notes)
    assert export.episodes == 3 and Path(export.dataset_dir, "dataset.json").is_file()
    assert fw.paths.metrics.is_file()


def _hanging_task_command() -> str:
    t = "/workshop/task"
    files = G.files("sum-numbers")
    files["task.toml"] = (
        files["task.toml"]
        .replace("build_timeout_sec = 300", "build_timeout_sec = 3")
        .replace('expected_verdict = "valid"\n', "")
    )
    files["environment/Dockerfile"] += "RUN sleep 300\n"
    parts = [f"rm -rf {t}/environment/* {t}/tests/* && mkdir -p {t}/environment {t}/solution {t}/tests"]
    parts += [f"cat > {t}/{rel} <<'EOF'\n{text}EOF" for rel, text in files.items()]
    return "\n".join(parts)


def test_a_hanging_build_is_cut_by_its_timeout_and_the_round_goes_on(tmp_path: Path) -> None:
    first_line = G.TASKS["count-error-lines"][3].splitlines()[-1]
    hanging = [G.bash(_hanging_task_command(), "A task with a slow build."), G.bash("check"), "submit"]
    rules = [
        {"match": "^You build environments", "variants": [hanging, G.agentic_variant("count-error-lines")]},
        {"match": first_line, "variants": G.solver_variants("count-error-lines")},
    ]
    fw = _run(tmp_path, rules, "counts.proposals=2", 'proposer_mode="agentic"')
    validated = ValidateOutput.model_validate_json((fw.paths.stage_dir(1, "validate") / "output.json").read_text())
    by_id = {r.id: r for r in validated.records}
    assert by_id["agentic-000"].verdict == "timeout" and "build-timeout" in by_id["agentic-000"].failed_checks
    assert by_id["agentic-001"].verdict == "valid"
    (metrics,) = fw.round_metrics()
    assert (metrics.valid, metrics.learnable, metrics.rejection_reasons.get("build-timeout")) == (1, 1, 1)
    # The valid episode's `try` ran in its built image (through the run's relabelling backend).
    steps = json.loads(Path(by_id["agentic-001"].episode_dir, "trajectory.json").read_text())["steps"]
    tried = next(s for s in steps if "try ls /app" in str(s.get("message")))
    assert "app.log" in str(tried["observation"]["results"][0]["content"])
