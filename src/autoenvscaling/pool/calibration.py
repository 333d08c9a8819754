"""Difficulty calibration: from the solver's attempts on an environment to its pass rate, status and the
learnability reward of the proposer episode that wrote it.

The solver attempts each valid new environment ``n`` times. Attempts that ended in an infrastructure error
(no reward) do not count either way: ``p`` is passes over scored attempts. ``p`` inside the band makes the
environment learnable; the proposer's reward is ``4p(1-p)`` for a valid, non-duplicate environment (1 at
p = 1/2, 0 when always or never solved) and 0 for anything else. Running the attempts is the flywheel's job;
this module is the arithmetic and the records.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import BaseModel, Field

from autoenvscaling.pool.models import Calibration, CalibrationBand, EnvStatus
from autoenvscaling.verify.results import is_solved

# Pass-rate bins of the difficulty histogram: exact 0 and exact 1 get their own bins (too hard / too easy).
HISTOGRAM_BINS: tuple[tuple[str, float, float], ...] = (
    ("0", 0.0, 0.0),
    ("(0,0.25]", 0.0, 0.25),
    ("(0.25,0.5]", 0.25, 0.5),
    ("(0.5,0.75]", 0.5, 0.75),
    ("(0.75,1)", 0.75, 1.0),
    ("1", 1.0, 1.0),
)


def calibration_from_rewards(
    rewards: Sequence[float | None], *, trial_dirs: Sequence[str] = (), solver: str | None = None
) -> Calibration | None:
    """The calibration of one environment from its attempts' rewards (None = error); None if none scored."""
    scored = [r for r in rewards if r is not None]
    if not scored:
        return None
    return Calibration(
        attempts=len(scored),
        passes=sum(is_solved(r) for r in scored),
        trial_dirs=list(trial_dirs),
        solver=solver,
    )


def learnability(pass_rate: float) -> float:
    """``4p(1-p)``: the learnability reward of a pass rate."""
    return 4.0 * pass_rate * (1.0 - pass_rate)


def episode_reward(valid: bool, calibration: Calibration | None) -> float:
    """The proposer episode's reward: the learnability of its environment when it is valid and calibrated."""
    if not valid or calibration is None or calibration.attempts == 0:
        return 0.0
    return learnability(calibration.pass_rate)


def histogram_bin(pass_rate: float) -> str:
    if pass_rate <= 0.0:
        return HISTOGRAM_BINS[0][0]
    if pass_rate >= 1.0:
        return HISTOGRAM_BINS[-1][0]
    return next(name for name, lo, hi in HISTOGRAM_BINS[1:-1] if lo < pass_rate <= hi)


def difficulty_histogram(pass_rates: Iterable[float]) -> dict[str, int]:
    """Counts per pass-rate bin, every bin present (in order), so histograms of rounds line up."""
    counts = {name: 0 for name, _, _ in HISTOGRAM_BINS}
    for p in pass_rates:
        counts[histogram_bin(p)] += 1
    return counts


class CalibrationRecord(BaseModel):
    """One environment's calibration, as a line of a round's ``calibrate/results.jsonl``."""

    env_id: str
    domain: str = ""
    proposer_episode: str | None = None
    attempts: int = Field(default=0, ge=0)  # attempts made, errors included
    errors: int = Field(default=0, ge=0)
    calibration: Calibration | None = None  # None: no attempt was scored
    status: EnvStatus | None = None  # the status calibration gave the entry; None on error
    reward: float = 0.0  # the proposer episode's learnability reward
    error: str | None = None

    @property
    def pass_rate(self) -> float | None:
        return None if self.calibration is None else self.calibration.pass_rate


def classify(calibration: Calibration | None, band: CalibrationBand) -> EnvStatus | None:
    """The status for ``calibration``; None (leave the entry as it is) when nothing was scored."""
    return None if calibration is None else band.classify(calibration)
