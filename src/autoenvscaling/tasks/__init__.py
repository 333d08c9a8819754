"""Harbor task format: task.toml models, paths, load/save and lint. Imports nothing of the project."""

from autoenvscaling.tasks.config import (
    EnvironmentConfig,
    NetworkMode,
    SolutionConfig,
    StepConfig,
    TaskAgentConfig,
    TaskConfig,
    TaskInfo,
    VerifierConfig,
)
from autoenvscaling.tasks.errors import TaskFormatError
from autoenvscaling.tasks.lint import lint_task
from autoenvscaling.tasks.lint_rules import Finding
from autoenvscaling.tasks.model import Task, find_task_dirs, load_task, save_task
from autoenvscaling.tasks.paths import TaskPaths

__all__ = [
    "EnvironmentConfig",
    "Finding",
    "NetworkMode",
    "SolutionConfig",
    "StepConfig",
    "Task",
    "TaskAgentConfig",
    "TaskConfig",
    "TaskFormatError",
    "TaskInfo",
    "TaskPaths",
    "VerifierConfig",
    "find_task_dirs",
    "lint_task",
    "load_task",
    "save_task",
]
