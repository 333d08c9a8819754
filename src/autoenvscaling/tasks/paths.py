"""Where things live inside a Harbor task directory."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class TaskPaths:
    """Paths of one task directory::

    my-task/
      task.toml            config (schema 1.4)
      instruction.md       given verbatim to the agent
      environment/         build context of the agent container
        Dockerfile
      solution/solve.sh    reference solution (oracle run only)
      tests/test.sh        copied to /tests after the agent finishes; writes the reward
      steps/<name>/        multi-step tasks only
    """

    root: Path

    @property
    def config(self) -> Path:
        return self.root / "task.toml"

    @property
    def instruction(self) -> Path:
        return self.root / "instruction.md"

    @property
    def environment_dir(self) -> Path:
        return self.root / "environment"

    @property
    def dockerfile(self) -> Path:
        return self.environment_dir / "Dockerfile"

    @property
    def compose_file(self) -> Path:
        return self.environment_dir / "docker-compose.yaml"

    @property
    def solution_dir(self) -> Path:
        return self.root / "solution"

    @property
    def solve_script(self) -> Path:
        return self.solution_dir / "solve.sh"

    @property
    def tests_dir(self) -> Path:
        return self.root / "tests"

    @property
    def test_script(self) -> Path:
        return self.tests_dir / "test.sh"

    @property
    def test_dirs(self) -> list[Path]:
        """The dirs uploaded to /tests, in order (a step of a multi-step task adds its own over the task's)."""
        return [self.tests_dir] if self.tests_dir.is_dir() else []

    @property
    def steps_dir(self) -> Path:
        return self.root / "steps"

    @property
    def name(self) -> str:
        return self.root.name


# Paths inside the container, fixed by Harbor.
CONTAINER_TESTS_DIR = "/tests"
CONTAINER_SOLUTION_DIR = "/solution"
CONTAINER_LOGS_AGENT = "/logs/agent"
CONTAINER_LOGS_VERIFIER = "/logs/verifier"
CONTAINER_LOGS_ARTIFACTS = "/logs/artifacts"
CONTAINER_REWARD_TXT = "/logs/verifier/reward.txt"
CONTAINER_REWARD_JSON = "/logs/verifier/reward.json"
