"""How the agent loop ends, as a tiny exception family.

``AgentExit`` subclasses are control flow inside ``Agent.run`` and never escape it: ``run`` turns them into
an ``AgentResult``. Infrastructure failures (``ModelError``, ``SandboxError``) are *not* part of this family:
they propagate out of ``run`` so the solver records an error instead of a reward of 0.
"""

from __future__ import annotations

from typing import Literal

from autoenvscaling.errors import AutoEnvError

LimitName = Literal["max_turns", "max_tokens", "max_wall", "max_cost"]


class AgentExit(Exception):
    """Base of the loop's exits (deliberately not an ``AutoEnvError``: it is not a failure to report)."""


class Submitted(AgentExit):
    """The model declared the task done."""


class LimitsExceeded(AgentExit):
    """A budget ran out; ``limit`` names which one."""

    def __init__(self, limit: LimitName, detail: str = "") -> None:
        super().__init__(f"{limit}: {detail}" if detail else limit)
        self.limit: LimitName = limit


class FormatError(AgentExit):
    """The reply held no usable action. Recoverable: ``feedback`` goes back to the model.

    ``tool_call_ids`` are the native tool calls of the bad reply; each needs an answer (role ``tool``) for the
    next request to be valid against OpenAI-compatible servers.
    """

    def __init__(self, feedback: str, tool_call_ids: tuple[str, ...] = ()) -> None:
        super().__init__(feedback)
        self.feedback = feedback
        self.tool_call_ids = tool_call_ids


class TooManyFormatErrors(AgentExit):
    """Too many consecutive replies without a usable action."""


class TrajectoryError(AutoEnvError):
    """A trajectory file is missing, not JSON, or not valid ATIF."""


class StuckRepeating(AgentExit):
    """Too many replies in a row repeated the command that just ran (``AgentConfig.max_repeats``)."""
