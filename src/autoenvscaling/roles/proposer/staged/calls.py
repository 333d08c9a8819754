"""One model call per stage, each with a short fresh prompt: a constant system prompt (llama.cpp and vLLM
reuse its cached prefix) and a user message holding only what the stage needs. Every call is an ATIF step."""

from __future__ import annotations

import json
import re
import time
from typing import Any

from pydantic import BaseModel, ValidationError

from autoenvscaling.agent.actions import json_objects
from autoenvscaling.agent.trajectory import TrajectoryRecorder, metrics_from_response
from autoenvscaling.errors import AutoEnvError
from autoenvscaling.llm.base import Message, Model, ModelResponse, Sampling, Usage
from autoenvscaling.roles.proposer import prompts

_FENCE = re.compile(r"```[\w+-]*[ \t]*\n(.*?)(?:```|\Z)", re.DOTALL)
_WHOLE_FENCE = re.compile(r"```[\w+-]*[ \t]*\n.*?(?:```|\Z)", re.DOTALL)
# "..., you can use the following command:" (or "..., the person must execute the following commands in
# sequence:") in front of a code block that is left out
_POINTER = re.compile(
    r",?\s*(?:(?:the |a )?(?:person|user|you|one) (?:must|should|can|will|needs to|has to) |simply |just )?"
    r"(?:use|run|execute|try)\s+(?:the |this |these )?(?:following )?"
    r"(?:shell |bash |awk |sh )?(?:command|script|code|one-liner)s?(?:[ \t]+[a-z]+){0,3}\s*:[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
# "Here's the instruction for a person who must ...:" in front of the instruction itself
_PREAMBLE = re.compile(r"\A\s*(?:(?:sure|certainly|okay)[,!.]?\s*)?here(?:'s| is)\b[^\n]*:[ \t]*\n+", re.IGNORECASE)
# "The instruction is:" over the reply's text, which stands in quotes (a recorded demo run on 62c9339)
_INTRO = re.compile(r"\A\s*(?:the |your |new )*instruction(?: is| for [^\n:]*)?\s*:[ \t]*\n+", re.IGNORECASE)
# The prompt's own label copied in front of the reply ("NEW TASK: Select only...", hackable-share run on 34a6a5e)
_PROMPT_LABEL = re.compile(r"\A\s*new task\s*:[ \t]*\n?", re.IGNORECASE)
_QUOTED_LINE = re.compile(r'\A"([^"\n]+)"[ \t]*(?=\n|\Z)')
_LABEL = re.compile(r"^\s*(?:#+\s*)?(?:instruction(?:\.md)?|solve\.sh|content)\s*:?\s*$", re.IGNORECASE)


class BudgetSpent(AutoEnvError):
    """The episode's call or wall budget ran out (an ordinary end, recorded as the exit reason)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class StageSampling(BaseModel):
    """Completion-token caps and temperatures per stage (small models run away on data and prose)."""

    idea_max_tokens: int = 160
    data_max_tokens: int = 400
    instruction_max_tokens: int = 220
    solution_max_tokens: int = 300
    decision_max_tokens: int = 80
    oneshot_max_tokens: int = 1400
    temperature: float | None = 0.7


def fenced_or_plain(text: str) -> str:
    """The first fenced block's body (an unclosed fence runs to the end), else the text minus label lines."""
    m = _FENCE.search(text)
    body = m.group(1) if m else text
    lines = [ln for ln in body.strip("\n").splitlines() if not (not m and _LABEL.match(ln))]
    return "\n".join(lines).strip("\n")


def prose_of(text: str) -> str:
    """An instruction reply's prose: fenced blocks are code (a command in an instruction gives the task away),
    so only the text around them counts, unless the reply is nothing but a fence (around prose, or code that
    the prose check then refuses). A line that introduced a block goes with it (``_lead_in``), and so does a
    first line that introduces the instruction, with the quotes around the line under it (``_INTRO``), and the
    prompt's ``NEW TASK:`` label in front of it."""
    text = _PREAMBLE.sub("", text, count=1)
    if (intro := _INTRO.match(text)) is not None:
        text = _QUOTED_LINE.sub(r"\1", text[intro.end() :], count=1)
    text = _LEAD_FENCE.sub(_lead_in, text)
    outside = re.sub(r"\n{3,}", "\n\n", _WHOLE_FENCE.sub("\n", text)).strip()
    if not outside:
        return fenced_or_plain(text)
    if _WHOLE_FENCE.search(text):
        outside = _without_lead_in(outside)
    return _PROMPT_LABEL.sub("", _POINTER.sub(".", fenced_or_plain(plain_markdown(outside))), count=1)


_HEADING = re.compile(r"^[ \t]*#{1,6}[ \t]+", re.MULTILINE)
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_EMPHASIS = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")  # not __: /app/pkg/__init__.py


def plain_markdown(text: str) -> str:
    """``text`` without heading marks and bold (``**Input file:**``, ``### Rules``): an instruction is plain prose
    for a person at a terminal. Code spans keep theirs. Of the 62 recorded candidates of the yield and demo
    series on disk (2026-12-05) that passed validation, the blind solver reproduced 7 of the 24 whose instruction
    held ``**`` and 20 of the 38 without (a correlation, not a cause: wordy replies carry both)."""
    if "\0" in text:
        return text
    spans = iter(_CODE_SPAN.findall(text))  # set aside while the marks go: ``**`` may open before a span
    masked = _EMPHASIS.sub(r"\1", _CODE_SPAN.sub("\0", _HEADING.sub("", text)))
    return re.sub("\0", lambda _m: next(spans), masked)


_LEAD_IN = re.compile(r"^\s*(?:#+\s.*|.*:)\s*$")
_LEAD_FENCE = re.compile(r"^([^\n`]*(?:`[^`\n]*`[^\n`]*)*):[ \t]*\n(?:[ \t]*\n)*(?=```)", re.MULTILINE)
_FOLLOWING = re.compile(
    r"[ ,]*(?:with|as|in|using|by) (?:the |this )?following(?: \w+){0,2}$|[ ,]*(?:using|with) (?:the|this) "
    r"(?:script|command)$",
    re.IGNORECASE,
)


def _lead_in(m: re.Match[str]) -> str:
    """A line ending in ':' right before a code block that is left out: "..., with the following contents" loses
    that clause, a short lead-in ("The output of this command will be", "The file should start with") goes, a
    long one ends in a full stop. Pointers to a command stay for ``_POINTER`` (a recorded `make demo` run, 2026-12-05:
    "To produce the file `/app/errors.txt` with the following contents:" and "The output of this command will
    be:" stood over nothing)."""
    line = m.group(1)
    if _POINTER.search(line + ":"):
        return m.group(0)
    if following := _FOLLOWING.search(line):
        return line[: following.start()].rstrip(" ,") + ".\n"
    return "" if len(line.split()) <= 10 else line.rstrip() + ".\n"


def _without_lead_in(text: str) -> str:
    """``text`` without the trailing headings and lines ending in ':' that introduced a code block left out
    (``### Example Solution`` / ``Here is a sample script that accomplishes the task:``, yield series v15)."""
    lines = text.splitlines()
    while len(lines) > 1 and (not lines[-1].strip() or _LEAD_IN.match(lines[-1])):
        lines.pop()
    return "\n".join(lines).strip()


def parse_json(text: str, model: type[BaseModel]) -> BaseModel | None:
    """The first JSON object in ``text`` that validates as ``model``."""
    for obj, _, _ in json_objects(text):
        try:
            return model.model_validate(obj)
        except ValidationError:
            continue
    return None


class StageCaller:
    """Calls the model for one stage at a time; counts calls, tokens and wall against the budgets."""

    def __init__(
        self,
        model: Model,
        recorder: TrajectoryRecorder,
        system: str,
        *,
        max_calls: int,
        max_wall_sec: float | None,
        sampling: StageSampling,
    ) -> None:
        self.model = model
        self.recorder = recorder
        self.system = system
        self.max_calls = max_calls
        self.max_wall_sec = max_wall_sec
        self.sampling = sampling
        self.calls = 0
        self.usage = Usage()
        self.started = time.perf_counter()
        self.cut = False  # the last reply ended at its token cap
        recorder.add_step("system", system)

    def ask(
        self,
        stage: str,
        template: str,
        *,
        max_tokens: int,
        schema: dict[str, Any] | None = None,
        **variables: Any,
    ) -> str:
        if self.calls >= self.max_calls:
            raise BudgetSpent("max_turns")
        if self.max_wall_sec is not None and time.perf_counter() - self.started > self.max_wall_sec:
            raise BudgetSpent("max_wall")
        user = prompts.render(f"staged/{template}", **variables)
        self.recorder.add_step("user", user, extra={"stage": stage})
        self.calls += 1
        response: ModelResponse = self.model.complete(
            [Message(role="system", content=self.system), Message(role="user", content=user)],
            response_format=schema,
            sampling=Sampling(max_tokens=max_tokens, temperature=self.sampling.temperature),
        )
        self.usage = self.usage + response.usage
        self.cut = response.finish_reason == "length"
        self.recorder.add_step(
            "agent",
            response.content,
            model_name=response.model_name or None,
            reasoning_content=response.reasoning_content,
            metrics=metrics_from_response(response),
            extra={"stage": stage},
        )
        return response.content

    def note(self, stage: str, text: str, **extra: Any) -> None:
        """A harness observation (what ran, what was recorded), as a user step the next call builds on."""
        payload = {"stage": stage, "harness": True, **extra}
        self.recorder.add_step("user", text, extra=json.loads(json.dumps(payload, default=str)))
