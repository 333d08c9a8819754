"""The pool's environments as a Harbor dataset dir, with Harbor's registry manifest next to our own::

    dataset/
      dataset.toml     Harbor 0.26's manifest: [dataset] name, then one [[tasks]] name + digest per task dir
      dataset.json     ours: where each task came from (pool id, round, domain, pass rate)
      <task>/          one Harbor task dir each

``harbor run -p dataset/`` runs every task dir in it; ``harbor sync``/``harbor publish`` read ``dataset.toml``.
Task names are the task's ``[task] name`` when it is ``org/name`` (and not already taken), else
``<org>/<dir name>``; digests are Harbor's content digests (``tasks.dataset.task_digest``).

``dataset.toml`` also carries two keys for rLLM's local-benchmark loader (``rllm eval|train DIR``), which reads the
same file: each ``[[tasks]]`` entry's ``path`` (its dir; rLLM requires it of every entry) and a dataset-level
``[verifier] script = "tests/test.sh"`` (``rllm train`` refuses a dataset with no dataset-level verifier; each task
still runs its own ``tests/test.sh``). Harbor's manifest model ignores keys it does not know, so Harbor reads the
file as before; ``harbor sync``/``harbor publish`` rewrite it without them.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import tomli_w

from autoenvscaling.execution.rundir import write_atomic
from autoenvscaling.export.pool_dataset import export_dataset
from autoenvscaling.pool import Pool
from autoenvscaling.pool.catalog import StatusFilter
from autoenvscaling.pool.models import DatasetManifest
from autoenvscaling.tasks.dataset import (
    MANIFEST_FILENAME,
    DatasetInfo,
    DatasetTaskRef,
    HarborDatasetManifest,
    task_digest,
    task_ref_name,
)
from autoenvscaling.tasks.names import slug

DEFAULT_ORG = "autoenv"
RLLM_VERIFIER = {"script": "tests/test.sh"}


def harbor_manifest(
    dataset_dir: Path, task_dirs: list[str], *, name: str, description: str = ""
) -> HarborDatasetManifest:
    """The manifest of ``task_dirs`` (names relative to ``dataset_dir``, in order)."""
    org = name.split("/", 1)[0]
    refs: list[DatasetTaskRef] = []
    taken: set[str] = set()
    for rel in task_dirs:
        task_dir = dataset_dir / rel
        ref_name, n = task_ref_name(task_dir, org), 1
        while ref_name in taken:  # a [task] name two tasks share: the later ones by dir name
            n += 1
            ref_name = f"{org}/{slug(rel)}" if n == 2 else f"{org}/{slug(rel)}-{n}"
        taken.add(ref_name)
        refs.append(DatasetTaskRef(name=ref_name, digest=task_digest(task_dir)))
    return HarborDatasetManifest(dataset=DatasetInfo(name=name, description=description), tasks=refs)


def manifest_toml(manifest: HarborDatasetManifest, task_dirs: list[str]) -> str:
    """Harbor's manifest text with rLLM's keys added: ``path`` on each ``[[tasks]]`` entry, ``[verifier]`` last."""
    data: dict[str, Any] = tomllib.loads(manifest.to_toml())
    for ref, rel in zip(data["tasks"], task_dirs, strict=True):
        ref["path"] = rel
    data["verifier"] = dict(RLLM_VERIFIER)
    return tomli_w.dumps(data)


def write_harbor_manifest(dataset_dir: Path, task_dirs: list[str], *, name: str, description: str = "") -> Path:
    manifest = harbor_manifest(dataset_dir, task_dirs, name=name, description=description)
    path = dataset_dir / MANIFEST_FILENAME
    write_atomic(path, manifest_toml(manifest, task_dirs))
    return path


def export_harbor_dataset(
    pool: Pool, dest: Path, status: StatusFilter, *, name: str, description: str = ""
) -> DatasetManifest:
    """``export_dataset`` (task dirs + dataset.json), then Harbor's ``dataset.toml`` over the same task dirs."""
    manifest = export_dataset(pool, dest, status=status)
    write_harbor_manifest(dest, [t.path for t in manifest.tasks], name=name, description=description)
    return manifest
