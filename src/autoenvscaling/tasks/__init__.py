"""Harbor task format: task.toml models, paths, load/save and lint. Imports nothing of the project."""

from autoenvscaling.tasks.config import (
    AgentConfig,
    EnvironmentConfig,
    NetworkMode,
    SolutionConfig,
    StepConfig,
    TaskConfig,
    TaskInfo,
    VerifierConfig,
)
from autoenvscaling.tasks.errors import TaskFormatError
from autoenvscaling.tasks.model import Task, load_task, save_task
from autoenvscaling.tasks.paths import TaskPaths

__all__ = [
    "AgentConfig",
    "EnvironmentConfig",
    "NetworkMode",
    "SolutionConfig",
    "StepConfig",
    "Task",
    "TaskConfig",
    "TaskFormatError",
    "TaskInfo",
    "TaskPaths",
    "VerifierConfig",
    "load_task",
    "save_task",
]
