"""The project's error root. Infrastructure failures are typed errors; task failures are rewards."""

from __future__ import annotations


class AutoEnvError(Exception):
    """Base class of every error this package raises on purpose.

    The CLI prints these as one line (``error: ...``) instead of a traceback, because they
    describe a problem the user can act on (bad input, missing image, engine not running).
    """


class UserInputError(AutoEnvError):
    """Malformed input: a task file, a config file, a command-line value."""
