"""The ``command`` train stage: the endpoint it reports (file or stdout) becomes the solver; failures are errors."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest

from autoenvscaling.flywheel.backend import RunBackend
from autoenvscaling.flywheel.config import load_config
from autoenvscaling.flywheel.context import NullEvents, RoundContext
from autoenvscaling.flywheel.layout import RunPaths
from autoenvscaling.flywheel.records import ExportOutput, TrainOutput
from autoenvscaling.flywheel.stages_train import run_train
from autoenvscaling.pool import Pool
from autoenvscaling.sandbox.fake import FakeBackend

PY = shlex.quote(sys.executable)
ENDPOINT = {"base_url": "http://127.0.0.1:8000/v1", "model": "solver-r1"}


def _train(tmp_path: Path, command: str, timeout: float = 30) -> TrainOutput:
    cfg = load_config(
        None,
        ["train.kind=command", f"train.command={json.dumps(command)}", f"train.timeout_sec={timeout}",
         'models.solver="embedded:0.5b"', "models.solver.temperature=0.3"],
    )  # fmt: skip
    paths = RunPaths(tmp_path / "run")
    export_dir = tmp_path / "export"
    export_dir.mkdir()
    with Pool.open(tmp_path / "pool") as pool:
        ctx = RoundContext(
            n=2, paths=paths, config=cfg, backend=RunBackend(FakeBackend(), "r"), pool=pool, domains={},
            solver=cfg.models.solver, proposer=cfg.models.solver, events=NullEvents(),
        )  # fmt: skip
        return run_train(ctx, ExportOutput(round=2, stage="export", export_dir=str(export_dir)))


def test_endpoint_from_the_last_json_line_of_stdout(tmp_path: Path) -> None:
    script = f"import json, os; print('training on', os.environ['AUTOENV_EXPORT_DIR']); print(json.dumps({ENDPOINT!r}))"
    out = _train(tmp_path, f"{PY} -c {shlex.quote(script)} {{export_dir}} {{round}}")
    solver = out.solver
    assert out.error is None and solver is not None
    assert (solver.provider, solver.name, solver.base_url) == ("openai", "solver-r1", ENDPOINT["base_url"])
    assert solver.temperature == 0.3  # sampling settings carry over
    log = Path(str(out.log_path)).read_text()
    assert f"training on {tmp_path / 'export'}" in log


def test_endpoint_from_the_endpoint_file(tmp_path: Path) -> None:
    out = _train(tmp_path, f"echo {shlex.quote(json.dumps(ENDPOINT))} > {{endpoint_file}}")
    assert out.solver is not None and out.solver.name == "solver-r1"


@pytest.mark.parametrize(
    ("command", "timeout", "error"),
    [("exit 3", 30, "exit code 3"), ("echo trained", 30, "reported no endpoint"), ("sleep 5", 0.5, "ran past")],
)
def test_failures_leave_the_solver_as_it_was(tmp_path: Path, command: str, timeout: float, error: str) -> None:
    out = _train(tmp_path, command, timeout)
    assert out.solver is None and error in str(out.error)
