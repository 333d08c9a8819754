"""Where a trial's outputs live on the host."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class TrialPaths:
    """One attempt's directory (Harbor's layout)::

    <task>__<n>/
      result.json           TrialResult
      agent/                copy of /logs/agent (trajectory.json, oracle.txt, ...)
      verifier/             copy of /logs/verifier (reward.txt | reward.json, test-stdout.txt)
      artifacts/            files listed in task.toml ``artifacts``
    """

    root: Path

    @property
    def result(self) -> Path:
        return self.root / "result.json"

    @property
    def agent_dir(self) -> Path:
        return self.root / "agent"

    @property
    def verifier_dir(self) -> Path:
        return self.root / "verifier"

    @property
    def artifacts_dir(self) -> Path:
        return self.root / "artifacts"

    @property
    def trajectory(self) -> Path:
        return self.agent_dir / "trajectory.json"

    def make(self) -> TrialPaths:
        for d in (self.agent_dir, self.verifier_dir, self.artifacts_dir):
            d.mkdir(parents=True, exist_ok=True)
        return self
