"""Calibration arithmetic: pass rate from attempts, status from the band, learnability reward, histogram."""

from __future__ import annotations

import pytest

from autoenvscaling.pool import Calibration, CalibrationBand, EnvStatus
from autoenvscaling.pool.calibration import (
    calibration_from_rewards,
    difficulty_histogram,
    episode_reward,
    histogram_bin,
    learnability,
)


def test_errors_do_not_count_either_way() -> None:
    cal = calibration_from_rewards([1.0, None, 0.0, 1.0], trial_dirs=["a", "b", "c", "d"], solver="m")
    assert cal is not None
    assert (cal.attempts, cal.passes, cal.pass_rate) == (3, 2, pytest.approx(2 / 3))
    assert calibration_from_rewards([None, None]) is None
    assert calibration_from_rewards([0.999]) == Calibration(attempts=1, passes=0)  # partial credit is not a pass


@pytest.mark.parametrize(
    ("passes", "status"),
    [(0, EnvStatus.TOO_HARD), (1, EnvStatus.LEARNABLE), (3, EnvStatus.LEARNABLE), (4, EnvStatus.TOO_EASY)],
)
def test_default_band(passes: int, status: EnvStatus) -> None:
    assert CalibrationBand().classify(Calibration(attempts=4, passes=passes)) == status


def test_a_narrower_band() -> None:
    band = CalibrationBand(low=0.25, high=0.75)
    assert band.classify(Calibration(attempts=4, passes=1)) == EnvStatus.TOO_HARD
    assert band.classify(Calibration(attempts=4, passes=2)) == EnvStatus.LEARNABLE
    assert band.classify(Calibration(attempts=4, passes=3)) == EnvStatus.TOO_EASY


def test_reward_is_learnability_of_valid_calibrated_environments_only() -> None:
    half = Calibration(attempts=4, passes=2)
    assert learnability(0.5) == 1.0 and learnability(0.0) == learnability(1.0) == 0.0
    assert episode_reward(True, half) == 1.0
    assert episode_reward(True, Calibration(attempts=4, passes=1)) == pytest.approx(0.75)
    assert episode_reward(False, half) == 0.0
    assert episode_reward(True, None) == 0.0


def test_histogram_keeps_every_bin_in_order() -> None:
    hist = difficulty_histogram([0.0, 0.25, 0.5, 0.5, 0.8, 1.0])
    assert list(hist) == ["0", "(0,0.25]", "(0.25,0.5]", "(0.5,0.75]", "(0.75,1)", "1"]
    assert list(hist.values()) == [1, 1, 2, 0, 1, 1]
    assert histogram_bin(0.01) == "(0,0.25]" and histogram_bin(0.999) == "(0.75,1)"
