"""What a scripted reply may be: a string, a ``ModelResponse``, a ``ScriptedError`` or a ``ScriptedDelay``
(shared by the scripted model and its rules scripts)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from autoenvscaling.llm.base import Message, ModelResponse


@dataclass(frozen=True)
class ScriptedError:
    message: str = "scripted model failure"


@dataclass(frozen=True)
class ScriptedDelay:
    seconds: float
    reply: str | ModelResponse


ScriptItem = str | ModelResponse | ScriptedError | ScriptedDelay
Responder = Callable[[list[Message]], ScriptItem]
