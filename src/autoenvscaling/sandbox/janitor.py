"""Remove what crashed runs left behind: labelled containers (then their networks and volumes) whose creating process
is gone, dangling images.

Every sandbox container carries its creator's pid, that process's start time (pids get reused) and the host
name. A container counts as orphaned when that process no longer runs on this host. Containers made on
another host are left alone unless asked (``include_live``): we cannot see their creator.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from autoenvscaling.sandbox.base import LABEL, LABEL_OWNER_PID, LABEL_RUN, SandboxError

if TYPE_CHECKING:
    import docker

LABEL_OWNER_START = "autoenvscaling.pidstart"
LABEL_OWNER_HOST = "autoenvscaling.host"


def _start_time(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (field 22 of /proc/PID/stat), or None."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[-1].split()[19]  # fields after "(comm)" start at field 3


@cache
def owner_labels() -> dict[str, str]:
    """Labels naming the current process as a container's owner."""
    pid = os.getpid()
    return {
        LABEL_OWNER_PID: str(pid),
        LABEL_OWNER_START: _start_time(pid) or "",
        LABEL_OWNER_HOST: socket.gethostname(),
    }


def owner_alive(labels: dict[str, str]) -> bool:
    host = labels.get(LABEL_OWNER_HOST)
    if host and host != socket.gethostname():
        return True  # another host's process: we cannot tell, so we keep it
    try:
        pid = int(labels.get(LABEL_OWNER_PID, "0"))
    except ValueError:
        return False
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by someone else
    started = labels.get(LABEL_OWNER_START)
    now = _start_time(pid)
    return not (started and now is not None and now != started)  # a different process reusing the pid


class GcReport(BaseModel):
    containers: list[str] = Field(default_factory=list)  # names of removed containers
    networks: list[str] = Field(default_factory=list)  # names of removed networks (multi-container sandboxes)
    volumes: list[str] = Field(default_factory=list)  # names of removed volumes (compose sandboxes)
    images: list[str] = Field(default_factory=list)  # ids of removed dangling images
    skipped_live: list[str] = Field(default_factory=list)  # containers whose creator still runs

    @property
    def removed(self) -> int:
        return len(self.containers) + len(self.networks) + len(self.volumes) + len(self.images)


def collect(client: docker.DockerClient, run_id: str | None = None, *, include_live: bool = False) -> GcReport:
    """Remove orphaned sandbox containers, networks and volumes (of ``run_id`` only, if given) and dangling labelled
    images."""
    import docker.errors

    report = GcReport()
    # LABEL_OWNER_PID as well: containers that merely inherit LABEL from a catalog image are not ours.
    filters = [LABEL, LABEL_OWNER_PID] + ([f"{LABEL_RUN}={run_id}"] if run_id else [])
    try:
        # The low-level list: the high-level one inspects each container in turn and fails on one that a live run
        # removes between the list and its inspect.
        for c in client.api.containers(all=True, filters={"label": filters}):
            name = _container_name(c)
            if not include_live and owner_alive(c.get("Labels") or {}):
                report.skipped_live.append(name)
                continue
            try:
                client.api.remove_container(c["Id"], force=True, v=True)
            except docker.errors.NotFound:
                continue
            report.containers.append(name)
        _collect_networks(client, filters, include_live, report)
        _collect_volumes(client, filters, include_live, report)
        pruned = client.images.prune(filters={"dangling": True, "label": LABEL})
    except docker.errors.APIError as e:
        raise SandboxError(f"cleanup failed: {e.explanation or e}") from None
    report.images = [d["Deleted"] for d in pruned.get("ImagesDeleted") or [] if "Deleted" in d]
    return report


def _container_name(entry: dict[str, Any]) -> str:
    """A container's name from an entry of the engine's container list (names there start with a slash)."""
    names = entry.get("Names") or []
    return names[0].lstrip("/") if names else str(entry.get("Id", ""))


def _collect_networks(client: docker.DockerClient, filters: list[str], include_live: bool, report: GcReport) -> None:
    """The networks of multi-container sandboxes (sandbox/compose_sandbox.py), once their containers are gone."""
    import docker.errors

    for network in client.networks.list(filters={"label": filters}):
        labels = network.attrs.get("Labels") or {}
        if not include_live and owner_alive(labels):
            continue
        try:
            network.remove()
        except docker.errors.NotFound:
            continue
        except docker.errors.APIError:
            continue  # a container still uses it (one gc skipped as live): removed with it next time
        report.networks.append(network.name or network.id or "")


def _collect_volumes(client: docker.DockerClient, filters: list[str], include_live: bool, report: GcReport) -> None:
    """The volumes of compose sandboxes (sandbox/compose_sandbox.py), once their containers are gone."""
    import docker.errors

    for volume in client.volumes.list(filters={"label": filters}):
        labels = volume.attrs.get("Labels") or {}
        if not include_live and owner_alive(labels):
            continue
        try:
            volume.remove()
        except docker.errors.NotFound:
            continue
        except docker.errors.APIError:
            continue  # a container still uses it (one gc skipped as live): removed with it next time
        report.volumes.append(volume.name or volume.id or "")


def cleanup(run_id: str | None = None, *, include_live: bool = False, client: docker.DockerClient | None = None) -> int:
    """Like :func:`collect`; returns how many containers and images were removed."""
    from autoenvscaling.sandbox.engine import connect

    return collect(client or connect(), run_id, include_live=include_live).removed


class ImageGcReport(BaseModel):
    removed: list[str] = Field(default_factory=list)  # tags of removed task images
    kept_in_use: list[str] = Field(default_factory=list)  # a container (a live run) still uses them
    freed_bytes: int = 0
    build_cache_bytes: int = 0


def collect_images(
    client: docker.DockerClient,
    *,
    repo: str = "autoenv-task",
    max_age_sec: float | None = 7 * 24 * 3600,
    max_total_bytes: int | None = None,
    prune_build_cache: bool = True,
) -> ImageGcReport:
    """Remove task images (``repo/...``) older than ``max_age_sec``, then the oldest until the rest fit
    ``max_total_bytes``. Images any container uses (a live run's) are never touched."""
    import docker.errors

    report = ImageGcReport()
    in_use = {c.get("ImageID") for c in client.api.containers(all=True)}  # low-level: no inspect to race with removals
    now = time.time()
    candidates = []
    for image in client.images.list(filters={"label": LABEL}):
        tags = [t for t in image.tags if t.startswith(f"{repo}/")]
        if not tags:
            continue
        created = _created(image.attrs.get("Created", ""))
        if image.id in in_use:
            report.kept_in_use += tags
            continue
        candidates.append((created, image, tags))
    candidates.sort(key=lambda c: c[0])  # oldest first
    total = sum(int(img.attrs.get("Size", 0)) for _, img, _ in candidates)
    for created, image, tags in candidates:
        too_old = max_age_sec is not None and now - created > max_age_sec
        too_big = max_total_bytes is not None and total > max_total_bytes
        if not (too_old or too_big):
            continue
        try:
            for tag in tags:
                client.images.remove(tag, noprune=False)
        except docker.errors.APIError:
            continue  # taken by a container started meanwhile, or already gone
        size = int(image.attrs.get("Size", 0))
        total -= size
        report.freed_bytes += size
        report.removed += tags
    if prune_build_cache:
        with contextlib.suppress(docker.errors.APIError):
            report.build_cache_bytes = int(client.api.prune_builds().get("SpaceReclaimed") or 0)
    return report


def _created(text: str) -> float:
    """Seconds since the epoch of an engine timestamp (``2026-01-02T03:04:05.123456789Z``)."""
    try:
        return datetime.fromisoformat(text[:19]).replace(tzinfo=UTC).timestamp()
    except ValueError:
        return 0.0
