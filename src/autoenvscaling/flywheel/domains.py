"""Domains of a run: their proposer context, their seed tasks, and how a round's proposals split across them."""

from __future__ import annotations

import math
from pathlib import Path

from autoenvscaling.errors import UserInputError
from autoenvscaling.roles.proposer.domain import DomainContext, domain_context
from autoenvscaling.roles.proposer.packs import examples_base
from autoenvscaling.tasks import find_task_dirs


def resolve_domain(name: str) -> DomainContext:
    """The domain pack's context; without a pack of that name, the examples in ``examples/<name>/``."""
    try:
        return domain_context(name)
    except UserInputError:
        examples_dir = examples_base() / "examples" / name
        if not examples_dir.is_dir():
            raise
        return DomainContext(name=name, examples=find_task_dirs([examples_dir]))


def seed_tasks(configured: list[Path], domains: list[DomainContext]) -> list[Path]:
    """The configured seed tasks, else the domains' examples interleaved (one of each domain in turn)."""
    if configured:
        return find_task_dirs(configured)
    lists = [list(d.examples) for d in domains]
    out: list[Path] = []
    for i in range(max((len(x) for x in lists), default=0)):
        out += [x[i] for x in lists if i < len(x)]
    return out


def allocate(total: int, weights: dict[str, float]) -> dict[str, int]:
    """Split ``total`` proposals by weight (largest remainder; ties go to the earlier domain)."""
    positive = {k: w for k, w in weights.items() if w > 0}
    norm = sum(positive.values())
    shares = {k: total * w / norm for k, w in positive.items()}
    counts = {k: math.floor(s) for k, s in shares.items()}
    left = total - sum(counts.values())
    order = sorted(positive, key=lambda k: (-(shares[k] - counts[k]), list(positive).index(k)))
    for k in order[:left]:
        counts[k] += 1
    return {k: counts[k] for k in weights if k in counts}
