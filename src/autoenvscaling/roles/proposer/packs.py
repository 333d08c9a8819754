"""Domain packs: what the proposer is given for one domain, shipped as package data::

    roles/proposer/domains/<name>/
      pack.toml    name, description, image (catalog image drafts start FROM), examples_dir, validator_extras
      guide.md     the domain guide, read by the proposer as /workshop/guide.md

The example tasks live in the repository's ``examples/`` (``examples_dir`` is relative to its root); a wheel ships
that folder inside the package (pyproject's force-include), where ``examples_base`` finds it.
"""

from __future__ import annotations

import tomllib
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from autoenvscaling.errors import UserInputError
from autoenvscaling.tasks import TaskFormatError, find_task_dirs

_PACKAGE = "autoenvscaling.roles.proposer"
REPO_ROOT = Path(__file__).resolve().parents[4]  # src/autoenvscaling/roles/proposer/ -> repository root
_DOMAINS = "domains"


class DomainPack(BaseModel):
    """One domain pack, read from its ``pack.toml`` and ``guide.md``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str
    image: str = Field(description="catalog image the domain's environments start FROM")
    examples_dir: str = Field(description="valid example tasks; relative to the repository root, or absolute")
    validator_extras: dict[str, Any] = Field(
        default_factory=dict,
        description="ValidationConfig fields the domain overrides (an unknown one is an error when a run applies "
        "them); pack.toml may list bare names (each becomes name = true)",
    )
    guide: str = Field(default="", description="the text of guide.md")

    @field_validator("validator_extras", mode="before")
    @classmethod
    def _names_to_table(cls, value: Any) -> Any:
        if isinstance(value, list):
            return {str(name): True for name in value}
        return value

    def examples_path(self, repo_root: Path | None = None) -> Path:
        path = Path(self.examples_dir)
        if path.is_absolute():
            return path
        return (examples_base() if repo_root is None else repo_root) / path

    def examples(self, repo_root: Path | None = None) -> list[Path]:
        """The example task dirs (sorted); empty when the examples dir is missing (e.g. a wheel install)."""
        path = self.examples_path(repo_root)
        if not path.is_dir():
            return []
        try:
            return find_task_dirs([path])
        except TaskFormatError:
            return []


def examples_base() -> Path:
    """What ``examples/...`` is relative to: the repository root in a checkout, else the installed package."""
    if (REPO_ROOT / "examples").is_dir():
        return REPO_ROOT
    return Path(str(resources.files("autoenvscaling")))


def _domains_dir() -> Traversable:
    return resources.files(_PACKAGE).joinpath(_DOMAINS)


def pack_names() -> list[str]:
    """Names of the packaged domains, sorted."""
    return sorted(d.name for d in _domains_dir().iterdir() if d.is_dir() and d.joinpath("pack.toml").is_file())


def load_pack(name: str) -> DomainPack:
    """The pack ``name``; an unknown name is a UserInputError that lists the known ones."""
    known = pack_names()
    if name not in known:
        raise UserInputError(f"unknown domain pack {name!r}; known: {', '.join(known)}")
    folder = _domains_dir().joinpath(name)
    try:
        data = tomllib.loads(folder.joinpath("pack.toml").read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise UserInputError(f"domain pack {name}: pack.toml: {e}") from None
    guide = folder.joinpath("guide.md")
    data["guide"] = guide.read_text(encoding="utf-8") if guide.is_file() else ""
    try:
        pack = DomainPack.model_validate(data)
    except ValidationError as e:
        first = e.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "pack.toml"
        raise UserInputError(f"domain pack {name}: {where}: {first['msg']}") from None
    if pack.name != name:
        raise UserInputError(f"domain pack {name}: pack.toml says name = {pack.name!r}")
    return pack


def pack_dir(name: str) -> Path:
    """The folder of the packaged domain ``name`` (its pack.toml, guide.md, worked example and starters)."""
    return Path(str(_domains_dir().joinpath(name)))


def list_packs() -> list[DomainPack]:
    """Every packaged domain pack, sorted by name."""
    return [load_pack(name) for name in pack_names()]
