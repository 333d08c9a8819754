"""What the Docker-backed tests look up on the engine."""

from __future__ import annotations


def containers_of(run_id: str) -> list[str]:
    """The names of the containers (running or not) labelled with ``run_id``: what a run left behind.

    The low-level list: the high-level ``containers.list`` inspects each container in turn and raises NotFound for
    one that the run removes between the list and its inspect."""
    import docker

    client = docker.from_env()
    try:
        found = client.api.containers(all=True, filters={"label": [f"autoenvscaling.run={run_id}"]})
        return [(c.get("Names") or [c["Id"]])[0].lstrip("/") for c in found]
    finally:
        client.close()
