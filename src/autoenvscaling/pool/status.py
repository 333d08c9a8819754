"""What a pool holds, counted: entries per status and domain, and the quality probes' results over the
validation reports stored with the entries (``autoenv pool status``, the flywheel's ``report.html``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from pydantic import BaseModel, Field

from autoenvscaling.pool.models import EnvStatus, PoolEntry
from autoenvscaling.validate.report import ProbeBrief, ProbeCounts, probe_counts

# Statuses of environments the pool accepted: they passed validation (calibration may have sorted them since).
ACCEPTED = frozenset({EnvStatus.VALID, EnvStatus.LEARNABLE, EnvStatus.TOO_EASY, EnvStatus.TOO_HARD})


class PoolStatus(BaseModel):
    total: int = 0
    by_status: dict[str, int] = Field(default_factory=dict)
    by_domain: dict[str, int] = Field(default_factory=dict)
    probes: ProbeCounts = Field(default_factory=ProbeCounts)  # every entry with a stored validation report
    accepted: int = 0  # entries with an ACCEPTED status
    accepted_probes: ProbeCounts = Field(default_factory=ProbeCounts)  # ... of those

    @property
    def accepted_not_probed(self) -> int:
        """Accepted entries whose validation ran no probe (probes off, a multi-step task, no stored report)."""
        return self.accepted - self.accepted_probes.probed


def pool_status(entries: Iterable[PoolEntry]) -> PoolStatus:
    entries = list(entries)
    accepted = [e for e in entries if e.status in ACCEPTED]
    return PoolStatus(
        total=len(entries),
        by_status=dict(sorted(Counter(e.status.value for e in entries).items())),
        by_domain=dict(sorted(Counter(e.domain or "-" for e in entries).items())),
        probes=probe_counts(ProbeBrief.of(e.validation) for e in entries if e.validation is not None),
        accepted=len(accepted),
        accepted_probes=probe_counts(ProbeBrief.of(e.validation) for e in accepted if e.validation is not None),
    )
