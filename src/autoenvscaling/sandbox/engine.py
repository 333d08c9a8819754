"""Reaching the Docker engine, and turning SDK exceptions into our typed errors."""

from __future__ import annotations

import gc
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

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
