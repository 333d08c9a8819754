"""What a proposer needs to know about one domain: guide text, base image, valid example tasks.

``DomainContext`` is the resolved, plain-data view the workshop and the prompt-only baseline read; it is
built from a domain pack (``packs.load_pack``) by ``domain_context``, or directly (tests, custom domains).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from autoenvscaling.errors import UserInputError
from autoenvscaling.images.catalog import catalog_names
from autoenvscaling.roles.proposer.packs import load_pack
from autoenvscaling.validate.validator import ValidationConfig

DEFAULT_IMAGE = "autoenv/terminal:latest"


class DomainContext(BaseModel):
    name: str
    description: str = ""
    image: str = DEFAULT_IMAGE  # the workshop's image and the draft's FROM line
    guide: str = ""  # markdown, shown to the proposer as /workshop/guide.md
    examples: list[Path] = Field(default_factory=list)  # valid example task dirs
    validator_extras: dict[str, Any] = Field(default_factory=dict)  # ValidationConfig fields the domain overrides

    @property
    def images(self) -> list[str]:
        """Base images a task may start FROM here."""
        return catalog_names()

    def validation(self, base: ValidationConfig) -> ValidationConfig:
        """``base`` with this domain's validator extras applied; an extra that names no ValidationConfig field
        is a UserInputError (it would otherwise do nothing)."""
        unknown = sorted(set(self.validator_extras) - set(ValidationConfig.model_fields))
        if unknown:
            known = ", ".join(ValidationConfig.model_fields)
            raise UserInputError(f"domain {self.name}: unknown validator extras {', '.join(unknown)}; known: {known}")
        return base.model_copy(update=self.validator_extras)


def domain_context(name: str) -> DomainContext:
    """The context of the domain pack ``name`` (``roles/proposer/domains/<name>/``)."""
    pack = load_pack(name)
    return DomainContext(
        name=pack.name,
        description=pack.description,
        image=pack.image,
        guide=pack.guide,
        examples=pack.examples(),
        validator_extras=dict(pack.validator_extras),
    )
