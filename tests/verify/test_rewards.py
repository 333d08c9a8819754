from __future__ import annotations

import json
from pathlib import Path

import pytest

from autoenvscaling.verify.errors import RewardInvalidError, RewardMissingError
from autoenvscaling.verify.verifier import expand_env, read_rewards


def test_reward_txt(tmp_path: Path) -> None:
    (tmp_path / "reward.txt").write_text("1\n")
    assert read_rewards(tmp_path) == {"reward": 1.0}


def test_reward_json_wins_over_txt(tmp_path: Path) -> None:
    (tmp_path / "reward.txt").write_text("0")
    (tmp_path / "reward.json").write_text(json.dumps({"reward": 0.5, "style": 1}))
    assert read_rewards(tmp_path) == {"reward": 0.5, "style": 1.0}


@pytest.mark.parametrize(
    ("name", "content", "error"),
    [
        ("reward.txt", "", RewardMissingError),
        ("reward.txt", "   \n", RewardMissingError),
        ("reward.txt", "nan", RewardInvalidError),
        ("reward.txt", "inf", RewardInvalidError),
        ("reward.txt", "pass", RewardInvalidError),
        ("reward.json", "", RewardMissingError),
        ("reward.json", "{not json", RewardInvalidError),
        ("reward.json", "[1]", RewardInvalidError),
        ("reward.json", "{}", RewardInvalidError),
        ("reward.json", '{"reward": "1"}', RewardInvalidError),
        ("reward.json", '{"reward": true}', RewardInvalidError),
        ("reward.json", '{"reward": NaN}', RewardInvalidError),
    ],
)
def test_bad_reward_is_an_error_not_zero(tmp_path: Path, name: str, content: str, error: type[Exception]) -> None:
    (tmp_path / name).write_text(content)
    with pytest.raises(error):
        read_rewards(tmp_path)


def test_missing_reward_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(RewardMissingError, match="without writing"):
        read_rewards(tmp_path)


def test_symlinked_reward_is_refused(tmp_path: Path) -> None:
    secret = tmp_path / "secret"
    secret.write_text("1")
    (tmp_path / "v").mkdir()
    (tmp_path / "v" / "reward.txt").symlink_to(secret)
    with pytest.raises(RewardInvalidError, match="symlink"):
        read_rewards(tmp_path / "v")


def test_expand_env_from_host() -> None:
    host = {"A": "1", "EMPTY": ""}
    out = expand_env({"x": "${A}", "y": "${B:-dflt}", "z": "${EMPTY:-d}", "w": "pre-${A}-${MISSING}"}, host)
    assert out == {"x": "1", "y": "dflt", "z": "d", "w": "pre-1-"}
