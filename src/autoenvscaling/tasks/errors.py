"""The error a malformed task directory raises."""

from __future__ import annotations

from autoenvscaling.errors import UserInputError


class TaskFormatError(UserInputError):
    """A task directory or one of its files is malformed. The message names the file and field."""
