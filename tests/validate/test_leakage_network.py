"""The leakage scan's sandbox gets the network the agent phase gets, so a compose service that needs a network to
become healthy (in Harbor's cookbook, an MCP server started with ``uv run``, which installs its dependencies first)
starts there as it does in the trials. Before, the scan's sandbox never had a network: such a service never became
healthy, and the validation of a task Harbor runs was an ``error``. With the rule probes on, the sandbox they share
keeps no network (docs/quality-probes.md)."""

from __future__ import annotations

import uuid
from pathlib import Path

import docker
import pytest

from autoenvscaling.sandbox.base import LABEL_RUN
from autoenvscaling.sandbox.docker import DockerBackend
from autoenvscaling.validate.report import Verdict
from autoenvscaling.validate.run import ValidationRun
from autoenvscaling.validate.validator import ValidationConfig
from docker_helpers import containers_of

pytestmark = [pytest.mark.docker, pytest.mark.slow]
IMAGE = "autoenv/terminal:latest"

# The service is healthy once a host answers beyond its network's gateway (a refused connection is an answer): on a
# network that leads outside the trial, not on the internal one of a sandbox without network, where the host has no
# address. It stands for a service that downloads what it runs when it starts.
REACHABLE = """\
import socket, struct
routes = [line.split() for line in open("/proc/net/route").readlines()[1:]]
gateway = next(socket.inet_ntoa(struct.pack("<L", int(r[2], 16))) for r in routes if r[1] == "00000000")
try:
    socket.create_connection((gateway, 9), timeout=2).close()
except ConnectionRefusedError:
    pass
"""
COMPOSE = """\
services:
  main:
    depends_on:
      api:
        condition: service_healthy
  api:
    build: ./api
    command: ["python3", "-m", "http.server", "8000", "--directory", "/srv"]
    healthcheck:
      test: ["CMD", "python3", "/reachable.py"]
      interval: 1s
      timeout: 5s
      retries: 3
"""


def _task(root: Path) -> Path:
    files = {
        "task.toml": 'schema_version = "1.4"\n[verifier]\ntimeout_sec = 60\n[agent]\ntimeout_sec = 60\n',
        "instruction.md": "Fetch http://api:8000/answer and write it to /app/answer.txt.\n",
        "environment/Dockerfile": f"FROM {IMAGE}\nWORKDIR /app\n",
        "environment/docker-compose.yaml": COMPOSE,
        "environment/api/Dockerfile": f"FROM {IMAGE}\nRUN mkdir -p /srv && echo 42 > /srv/answer\n"
        "COPY reachable.py /\n",
        "environment/api/reachable.py": REACHABLE,
        "solution/solve.sh": "#!/bin/bash\ncurl -sf http://api:8000/answer > /app/answer.txt\n",
        "tests/test.sh": "#!/bin/bash\ngrep -qx 42 /app/answer.txt && echo 1 > /logs/verifier/reward.txt"
        " || echo 0 > /logs/verifier/reward.txt\n",
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _left(run_id: str) -> list[str]:
    """The run's containers and networks still on the engine."""
    client = docker.from_env()
    try:
        networks = client.networks.list(filters={"label": f"{LABEL_RUN}={run_id}"})
    finally:
        client.close()
    return containers_of(run_id) + [n.name or "" for n in networks]


def test_a_service_that_needs_the_network_is_scanned_with_it(backend: DockerBackend, tmp_path: Path) -> None:
    task = _task(tmp_path / "needs-network")
    run_dir = tmp_path / f"run-{uuid.uuid4().hex[:8]}"
    run = ValidationRun(run_dir, backend, ValidationConfig(repeats=1))
    (rep,), _ = run.run([task])
    assert rep.verdict == Verdict.VALID, (rep.error, rep.failed_checks)
    assert [t.reward for t in rep.trials] == [1.0, 0.0]
    assert _left(run_dir.name) == []
