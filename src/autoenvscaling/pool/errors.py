"""Errors of the environment pool."""

from __future__ import annotations

from autoenvscaling.errors import AutoEnvError, UserInputError


class PoolError(AutoEnvError):
    """The pool's catalog or its files are in a state this code cannot work with."""


class UnknownEnvError(UserInputError, PoolError):
    """No environment with this id (or id prefix) is in the pool."""


class OptionalDependencyError(PoolError):
    """A feature needs a package from an extra that is not installed."""
