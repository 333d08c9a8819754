"""The workshop: a sandbox laid out as files, where the proposer writes its draft task.

Layout inside the container::

    /workshop/README.md                          what is where, and the tools
    /workshop/guide.md                           the domain guide
    /workshop/examples/<task>/                   valid example tasks of the domain
    /workshop/trajectories/digest.md             the solver attempts, digested
    /workshop/trajectories/<trial>/trajectory.json   the raw ATIF trajectories
    /workshop/task/                              the draft (a Harbor task dir)

The container has no network and no Docker socket; the harness does every build and run. Only
``/workshop/task`` ever comes back out, and only as regular files and directories: symbolic links and
special files are dropped on the way, so a draft cannot make the harness read a host file.
"""

from __future__ import annotations

import os
import shutil
import stat
import tarfile
import tempfile
from pathlib import Path
from types import TracebackType
from typing import Self

from pydantic import BaseModel, Field

from autoenvscaling.roles.proposer.domain import DomainContext
from autoenvscaling.sandbox.base import Sandbox, SandboxBackend, SandboxError, SandboxSpec

WORKSHOP_DIR = "/workshop"
DRAFT_DIR = f"{WORKSHOP_DIR}/task"
TEMPLATE_DIR = Path(__file__).parent / "draft_template"
START_NAME = "starting-draft"  # the first draft's dir name, as novelty feedback names it
_TOOL_STUB = (
    "#!/bin/sh\n"
    'echo "$(basename "$0") is a harness tool, not a program: send it as your whole command '
    '(e.g. just: check, or: try ls /app)." >&2\n'
    "exit 2\n"
)


class WorkshopConfig(BaseModel):
    cpus: float = Field(default=1.0, gt=0)
    memory_mb: int = Field(default=2048, ge=128)
    pids_limit: int = Field(default=512, ge=16)
    max_trajectories: int = Field(default=12, ge=0, description="raw trajectories copied in (failures first)")
    max_draft_bytes: int = Field(default=50_000_000, ge=1, description="a draft larger than this is not copied")


class DraftCopy(BaseModel):
    """What came out of ``/workshop/task``: where, and what was left behind (and why)."""

    path: Path
    skipped: list[str] = Field(default_factory=list)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def safe_copy_tree(src: Path, dst: Path, max_bytes: int) -> list[str]:
    """Copy regular files and directories only; never follow a link. Returns what was skipped."""
    skipped: list[str] = []
    total = 0
    dst.mkdir(parents=True, exist_ok=True)
    for root, dirs, files in os.walk(src, followlinks=False):
        rel_root = Path(root).relative_to(src)
        for name in sorted(dirs + files):
            path = Path(root) / name
            rel = (rel_root / name).as_posix()
            mode = path.lstat().st_mode
            if stat.S_ISLNK(mode):
                skipped.append(f"{rel} (symbolic link -> {os.readlink(path)})")
                if name in dirs:
                    dirs.remove(name)  # os.walk does not descend into links anyway; keep it explicit
            elif stat.S_ISDIR(mode):
                (dst / rel).mkdir(parents=True, exist_ok=True)
            elif stat.S_ISREG(mode):
                total += path.lstat().st_size
                if total > max_bytes:
                    raise ValueError(f"the draft is larger than {max_bytes // 1_000_000} MB")
                shutil.copyfile(path, dst / rel, follow_symlinks=False)
                os.chmod(dst / rel, mode & 0o755)
            else:
                skipped.append(f"{rel} (not a regular file)")
    return skipped


def prepare_start(dest: Path, domain: DomainContext, start_from: str, index: int) -> str:
    """Write the starting draft to ``dest``; returns what it is, in words."""
    if start_from == "example" and domain.examples:
        example = domain.examples[index % len(domain.examples)]
        safe_copy_tree(example, dest, max_bytes=200_000_000)
        return f"a copy of the example {example.name}"
    safe_copy_tree(TEMPLATE_DIR, dest, max_bytes=1_000_000)
    dockerfile = dest / "environment" / "Dockerfile"
    dockerfile.write_text(
        dockerfile.read_text(encoding="utf-8").replace("autoenv/terminal:latest", domain.image), encoding="utf-8"
    )
    toml = dest / "task.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace('"terminal"', f'"{domain.name}"'), encoding="utf-8")
    return "a minimal template (upper-case a word list)"


def stage_workshop(
    dest: Path, *, domain: DomainContext, readme: str, digest_md: str, trial_dirs: list[Path], start_dir: Path
) -> None:
    """Build the ``/workshop`` tree on the host, to upload in one piece."""
    dest.mkdir(parents=True, exist_ok=True)
    (dest / "README.md").write_text(readme, encoding="utf-8")
    (dest / "guide.md").write_text(domain.guide or f"# {domain.name}\n\n{domain.description}\n", encoding="utf-8")
    (dest / "examples").mkdir(exist_ok=True)
    for example in domain.examples:
        safe_copy_tree(example, dest / "examples" / example.name, max_bytes=200_000_000)
    traj_dir = dest / "trajectories"
    traj_dir.mkdir(exist_ok=True)
    (traj_dir / "digest.md").write_text(digest_md, encoding="utf-8")
    for trial in trial_dirs:
        src = trial / "agent" / "trajectory.json"
        if src.is_file() and not src.is_symlink():
            (traj_dir / trial.name).mkdir(exist_ok=True)
            shutil.copyfile(src, traj_dir / trial.name / "trajectory.json")
    safe_copy_tree(start_dir, dest / "task", max_bytes=200_000_000)


class Workshop:
    """One workshop container. ``start(staging)`` uploads the staged tree; ``copy_draft`` brings the draft out."""

    def __init__(
        self,
        backend: SandboxBackend,
        image: str,
        config: WorkshopConfig | None = None,
        *,
        name_hint: str = "workshop",
        run_id: str | None = None,
    ) -> None:
        self.config = config or WorkshopConfig()
        self.spec = SandboxSpec(
            image=image,
            name_hint=name_hint,
            workdir=WORKSHOP_DIR,
            cpus=self.config.cpus,
            memory_mb=self.config.memory_mb,
            pids_limit=self.config.pids_limit,
            network=False,
            mounts=[],  # nothing of the host, the Docker socket least of all
            run_id=run_id,
            labels={"autoenvscaling.role": "proposer-workshop"},
        )
        self._sandbox: Sandbox = backend.create(self.spec)

    @property
    def sandbox(self) -> Sandbox:
        return self._sandbox

    def start(self, staging: Path) -> None:
        self._sandbox.start()
        self._sandbox.upload(staging, WORKSHOP_DIR)
        for tool in ("check", "try", "submit"):
            self._sandbox.upload_text(_TOOL_STUB, f"/usr/local/bin/{tool}", mode=0o755)

    def copy_draft(self, dest: Path) -> DraftCopy:
        """Copy ``/workshop/task`` to ``dest`` (replaced), as regular files and directories only."""
        shutil.rmtree(dest, ignore_errors=True)
        with tempfile.TemporaryDirectory(prefix="autoenv-draft-") as tmp:
            raw = Path(tmp) / "raw"
            try:
                self._sandbox.download(DRAFT_DIR, raw)
                skipped = safe_copy_tree(raw, dest, self.config.max_draft_bytes)
            except (SandboxError, tarfile.TarError, OSError, ValueError) as e:
                shutil.rmtree(dest, ignore_errors=True)
                dest.mkdir(parents=True, exist_ok=True)
                return DraftCopy(path=dest, error=f"cannot copy {DRAFT_DIR} out: {e}")
        return DraftCopy(path=dest, skipped=skipped)

    def stop(self) -> None:
        self._sandbox.stop()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
