"""What a proposer needs to know about one domain: guide text, base image, valid example tasks.

``DomainContext`` is the resolved, plain-data view the workshop and the prompt-only baseline read; it is
built from a domain pack (``packs.load_pack``) by ``domain_context``, or directly (tests, custom domains).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from autoenvscaling.errors import UserInputError
from autoenvscaling.images.catalog import catalog_names
from autoenvscaling.tasks import find_task_dirs

DEFAULT_IMAGE = "autoenv/terminal:latest"
REPO_ROOT = Path(__file__).resolve().parents[4]  # src/autoenvscaling/roles/proposer/ -> repository root


class DomainContext(BaseModel):
    name: str
    description: str = ""
    image: str = DEFAULT_IMAGE  # the workshop's image and the draft's FROM line
    guide: str = ""  # markdown, shown to the proposer as /workshop/guide.md
    examples: list[Path] = Field(default_factory=list)  # valid example task dirs
    validator_extras: dict[str, Any] = Field(default_factory=dict)

    @property
    def images(self) -> list[str]:
        """Base images a task may start FROM here."""
        return catalog_names()


def _examples(examples_dir: Path) -> list[Path]:
    if not examples_dir.is_dir():
        return []
    return find_task_dirs([examples_dir])


def domain_context(name: str) -> DomainContext:
    """The context of the domain pack ``name`` (``roles/proposer/domains/<name>/``)."""
    try:
        packs = importlib.import_module("autoenvscaling.roles.proposer.packs")
    except ImportError as e:
        raise UserInputError(f"domain packs are not available: {e}") from None
    pack: Any = packs.load_pack(name)
    guide_text = getattr(pack, "guide", None)
    if not isinstance(guide_text, str):
        guide_path = Path(str(packs.__file__)).parent / "domains" / pack.name / "guide.md"
        guide_text = guide_path.read_text(encoding="utf-8") if guide_path.is_file() else ""
    examples_dir = Path(pack.examples_dir)
    if not examples_dir.is_absolute():
        examples_dir = REPO_ROOT / examples_dir
    return DomainContext(
        name=pack.name,
        description=getattr(pack, "description", "") or "",
        image=getattr(pack, "image", None) or DEFAULT_IMAGE,
        guide=guide_text,
        examples=_examples(examples_dir),
        validator_extras=dict(getattr(pack, "validator_extras", None) or {}),
    )
