"""Reaching the Docker engine, and turning SDK exceptions into our typed errors."""

from __future__ import annotations

import gc
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import docker
import docker.errors
import requests.exceptions

from autoenvscaling.sandbox.base import EngineUnavailableError, SandboxError

ENGINE_HINT = "is dockerd running? try `docker info`"


def connect() -> docker.DockerClient:
    """A client for the engine named by the environment (DOCKER_HOST, ...), checked with a ping."""
    with warnings.catch_warnings():
        # docker-py drops the socket of a failed connect unclosed; free it here, quietly
        warnings.simplefilter("ignore", ResourceWarning)
        try:
            client = docker.from_env()
            client.ping()
            return client
        except (docker.errors.DockerException, requests.exceptions.RequestException) as e:
            problem = str(e)
        gc.collect()
    raise EngineUnavailableError(f"cannot reach the Docker engine ({problem}); {ENGINE_HINT}")


@contextmanager
def engine_errors(what: str) -> Iterator[None]:
    """Re-raise docker SDK exceptions as SandboxError / EngineUnavailableError, naming what we were doing."""
    try:
        yield
    except docker.errors.APIError as e:
        raise SandboxError(f"{what}: {e.explanation or e}") from None
    except (requests.exceptions.ConnectionError, docker.errors.DockerException) as e:
        raise EngineUnavailableError(f"{what}: lost the Docker engine ({e}); {ENGINE_HINT}") from None


def exec_status(api: Any, container_id: str, argv: list[str], timeout: float, user: str = "0") -> int:
    """Run ``argv`` in its own exec (no persistent shell) and return its exit status as the engine reports it, which
    nothing in the container can forge; 124 when it still runs after ``timeout`` seconds."""
    exec_id = api.exec_create(container_id, argv, user=user)["Id"]
    done = threading.Event()

    def wait() -> None:  # the engine answers exec_start once the command's output ends
        try:
            api.exec_start(exec_id)
        except docker.errors.DockerException:
            pass  # exec_inspect below tells what happened
        finally:
            done.set()

    threading.Thread(target=wait, name=f"exec {exec_id[:12]}", daemon=True).start()
    done.wait(timeout)
    info = api.exec_inspect(exec_id)
    return 124 if info["Running"] else int(info["ExitCode"] or 0)


def writable_layer_size(api: Any, container_id: str) -> int | None:
    """Docker's ``SizeRw`` of a container (``GET /containers/ID/json?size=1``, which docker-py's ``inspect_container``
    cannot ask for; by id, not a filtered list of every container); None when the container is gone."""
    try:
        attrs = api._result(api._get(api._url("/containers/{0}/json", container_id), params={"size": 1}), True)
    except docker.errors.NotFound:
        return None
    return int(attrs.get("SizeRw") or 0)
