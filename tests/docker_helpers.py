"""What the Docker-backed tests look up on the engine."""

from __future__ import annotations


def containers_of(run_id: str) -> list[str]:
    """The names of the containers (running or not) labelled with ``run_id``: what a run left behind."""
    import docker

    client = docker.from_env()
    try:
        found = client.containers.list(all=True, filters={"label": [f"autoenvscaling.run={run_id}"]})
        return [c.name or c.id or "" for c in found]
    finally:
        client.close()
