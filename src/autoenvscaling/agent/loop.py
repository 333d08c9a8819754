"""The terminal agent loop: ``run -> step -> query -> parse -> execute -> observe``, each step overridable.

The message history is append-only: earlier messages are never rewritten, so servers with prefix caching
(llama.cpp, vLLM) pay only for the new tokens of each turn. Every model reply becomes one ATIF agent step,
written to disk before the next model call. Loop exits are ``agent.errors`` exceptions; ``ModelError`` and
``SandboxError`` propagate out of ``run`` (after the trajectory so far is written): they are infrastructure
failures, not task failures.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Literal

from jinja2 import ChoiceLoader, DictLoader, Environment, FileSystemLoader, StrictUndefined
from pydantic import BaseModel

from autoenvscaling import __version__
from autoenvscaling.agent.actions import Action, get_action_format, redirect_targets
from autoenvscaling.agent.config import AgentConfig
from autoenvscaling.agent.errors import FormatError, LimitsExceeded, StuckRepeating, Submitted, TooManyFormatErrors
from autoenvscaling.agent.guards import (
    REPEATED,
    REVIEW,
    close_open_block,
    expected_outputs,
    input_preview,
    missing_outputs,
    outputs_missing_note,
    skip_replayed_plan,
    stop_at_block_end,
)
from autoenvscaling.agent.trajectory import (
    AgentInfo,
    Observation,
    ObservationResult,
    TrajectoryRecorder,
    metrics_from_response,
)
from autoenvscaling.agent.trajectory import ToolCall as AtifToolCall
from autoenvscaling.llm.base import Message, Model, ModelResponse, Sampling, Usage, generation_deadline
from autoenvscaling.sandbox.base import ExecResult, Sandbox, SandboxError
from autoenvscaling.stopping import check_stop

ExitReason = Literal["submitted", "max_turns", "max_tokens", "max_wall", "max_cost", "format_errors", "repeats"]
TEMPLATES_DIR = Path(__file__).parent / "templates"
_SKIPPED_CALL = "Not executed: one command runs per reply; see the result of the first call."
_SKIPPED_SUBMIT = "Submission refused: submit in a later reply, after the command's output shows the task is done."


class AgentResult(BaseModel):
    exit_reason: ExitReason
    turns: int
    usage: Usage
    wall_sec: float
    format_errors: int
    trajectory_path: Path | None = None


def truncate_output(text: str, head: int, tail: int) -> str:
    """Keep ``head`` + ``tail`` characters, marking how many were dropped in between."""
    omitted = len(text) - head - tail
    if omitted <= 0:
        return text
    return f"{text[:head]}\n[... {omitted} characters omitted ...]\n{text[len(text) - tail :]}"


class Agent:
    def __init__(
        self,
        model: Model,
        sandbox: Sandbox,
        config: AgentConfig | None = None,
        recorder: TrajectoryRecorder | None = None,
    ) -> None:
        self.model = model
        self.sandbox = sandbox
        self.config = config or AgentConfig()
        self.action_format = get_action_format(self.config.action_format)
        self.recorder = recorder or TrajectoryRecorder()
        self.templates = Environment(
            loader=ChoiceLoader([DictLoader(self.config.templates), FileSystemLoader(TEMPLATES_DIR)]),
            undefined=StrictUndefined,
            autoescape=False,  # prompts are plain text, not HTML
            auto_reload=False,  # templates do not change during a run: skip the stat per render
        )
        self._tools = self.action_format.tools()
        self._response_format = self.action_format.response_format()
        self.messages: list[Message] = []
        self.usage = Usage()
        self.turns = 0
        self.format_errors = 0
        self.commands_run = 0
        self._errors_in_a_row = 0
        self._last_command: str | None = None
        self._results: dict[str, tuple[int, int]] = {}  # every command run so far -> (exit code, output hash)
        self.reruns = 0
        self._reruns_in_a_row = 0
        self._sampling: Sampling | None = None  # set for the one call after a repeated command
        self.repeats = 0
        self._repeats_in_a_row = 0
        self._reviewed = False
        self._outputs: list[str] = []  # paths the task names that did not exist at the start (outputs_before_submit)
        self._outputs_refused = 0
        self._started = time.monotonic()
        self._timeout = self.config.command_timeout_sec

    # -- run --

    def run(self, task_prompt: str, outputs: list[str] | None = None) -> AgentResult:
        """Run the loop on ``task_prompt``. ``outputs``: the task's declared output paths (Harbor's artifacts), which
        ``outputs_before_submit`` checks where the instruction names them (None: it guesses from the instruction)."""
        self._started = time.monotonic()
        if self.recorder.agent is None:
            self.recorder.set_agent(self.agent_info())
        self.add_message("system", self.render("system.j2"))
        self.add_message("user", self.render("instance.j2", task=task_prompt, preview=self.preview(task_prompt)))
        if self.config.outputs_before_submit:
            self._outputs = expected_outputs(self.sandbox, task_prompt, outputs)
        outcome: dict[str, Any] = {}
        try:
            exit_reason = outcome["exit_reason"] = self.loop()
        except BaseException as e:  # recorded, then propagated: infrastructure errors are not rewards
            outcome.update(exit_reason="error", error=f"{type(e).__name__}: {e}")
            raise
        finally:
            self.recorder.finish(
                **outcome,
                turns=self.turns,
                wall_sec=round(self.elapsed(), 6),
                format_errors=self.format_errors,
                repeated_commands=self.repeats,
                reruns_same_output=self.reruns,
            )
        return AgentResult(
            exit_reason=exit_reason,
            turns=self.turns,
            usage=self.usage,
            wall_sec=self.elapsed(),
            format_errors=self.format_errors,
            trajectory_path=self.recorder.path,
        )

    def preview(self, task_prompt: str) -> str:
        """The first lines of the existing files the task names (``preview_inputs``; ``guards.input_preview``)."""
        return input_preview(self.sandbox, task_prompt, self.config.preview_inputs)

    def loop(self) -> ExitReason:
        while True:
            try:
                self.step()
            except Submitted:
                return "submitted"
            except LimitsExceeded as e:
                return e.limit
            except TooManyFormatErrors:
                return "format_errors"
            except StuckRepeating:
                return "repeats"

    def step(self) -> None:
        self.check_limits()
        response = self.query()
        try:
            action = self.parse(response)
        except FormatError as e:
            self.on_format_error(response, e)
            return
        self._errors_in_a_row = 0
        if action.kind == "submit":
            if self._outputs_refused < self.config.outputs_before_submit and self._outputs:
                missing = missing_outputs(self.sandbox, self._outputs)
                if missing:
                    self.on_outputs_missing(response, action, missing)
                    return
            if self.config.review_before_submit and not self._reviewed:
                self.on_review(response, action)
                return
            self.record(response, action, [])
            raise Submitted(action.thought)
        action = skip_replayed_plan(action, self._results)
        if action.command == self._last_command:
            self.on_repeat(response, action)
            return
        self._last_command = action.command
        self._repeats_in_a_row = 0
        check_stop()  # an interrupted run runs no new command (the reply came after the interrupt)
        try:
            result = self.execute(action)
        except SandboxError as e:
            self.record(response, action, [ObservationResult(source_call_id=self.call_id(action), content=str(e))])
            raise
        rerun = self.is_rerun(action.command, result)
        self.observe(response, action, result, rerun=rerun)
        if rerun:
            self.on_rerun()
        else:
            self._reruns_in_a_row = 0

    # -- the steps --

    def check_limits(self) -> None:
        c, u = self.config, self.usage
        if self.turns >= c.max_turns:
            raise LimitsExceeded("max_turns", f"{self.turns} turns")
        if c.max_tokens_total is not None and u.total_tokens >= c.max_tokens_total:
            raise LimitsExceeded("max_tokens", f"{u.total_tokens} tokens")
        if c.max_cost_usd is not None and u.cost_usd >= c.max_cost_usd:
            raise LimitsExceeded("max_cost", f"${u.cost_usd:.4f}")
        if c.max_wall_sec is not None and self.elapsed() >= c.max_wall_sec:
            raise LimitsExceeded("max_wall", f"{self.elapsed():.1f} s")

    def query(self) -> ModelResponse:
        self.turns += 1
        sampling, self._sampling = self._sampling, None
        if self.config.stop_after_block and self.config.action_format == "bash_block":
            sampling = stop_at_block_end(sampling)
        c = self.config
        deadline = None if c.max_wall_sec is None else self._started + c.max_wall_sec
        with generation_deadline(deadline):  # a slow local generation may not outlive the run's wall budget
            response = self.model.complete(
                self.messages, tools=self._tools, response_format=self._response_format, sampling=sampling
            )
        response = close_open_block(response, sampling)
        self.usage = self.usage + response.usage
        self.messages.append(
            Message(
                role="assistant",
                content=response.content,
                tool_calls=response.tool_calls,
                reasoning_content=response.reasoning_content,
            )
        )
        return response

    def parse(self, response: ModelResponse) -> Action:
        action = self.action_format.parse(response)
        if action.kind == "submit" and self.commands_run < self.config.min_commands_before_submit:
            ids = (action.tool_call_id,) if action.tool_call_id else ()
            raise FormatError(
                "Submission refused: no command has run yet. Run commands to do the task and check the result "
                "first; submit only after a command's output shows the task is done.",
                ids,
            )
        return action

    def execute(self, action: Action) -> ExecResult:
        self.commands_run += 1
        self._timeout = self.config.command_timeout_sec
        if self.config.max_wall_sec is not None:  # a command may not outlive the run's budget
            self._timeout = max(1.0, min(self._timeout, self.config.max_wall_sec - self.elapsed()))
        return self.sandbox.exec(action.command, timeout=self._timeout)

    def is_rerun(self, command: str, result: ExecResult) -> bool:
        """``command`` ran before with exactly this exit code and output (``flag_reruns``); records this run."""
        outcome = (result.exit_code, hash(result.output))
        before, self._results[command] = self._results.get(command), outcome
        return self.config.flag_reruns and before == outcome

    def observe(self, response: ModelResponse, action: Action, result: ExecResult, rerun: bool = False) -> None:
        text = self.render(
            "observation.j2",
            exit_code=result.exit_code,
            timed_out=result.timed_out,
            timeout=self._timeout,
            output=truncate_output(
                result.output.rstrip("\n"),
                self.config.observation_head_chars,
                self.config.observation_tail_chars,
            ),
            redirected=redirect_targets(action.command or ""),
            sandbox_truncated=result.truncated,
            skipped_commands=sum(c.name != "submit" for c in action.skipped_calls),
            skipped_blocks=len(action.skipped_blocks),
            first_block_repeated=action.first_block_repeated,
            deferred_submit=action.deferred_submit,
            rerun=rerun,
        )
        self.add_feedback(text, action)
        facts = {
            "exit_code": result.exit_code,
            "timed_out": result.timed_out,
            "duration_sec": result.duration_sec,
        }
        results = [ObservationResult(source_call_id=self.call_id(action), content=text, extra=facts)]
        extra: dict[str, Any] = {}
        if action.deferred_submit:
            extra["deferred_submit"] = True
        if action.skipped_blocks:
            extra["skipped_blocks"] = len(action.skipped_blocks)
        if action.first_block_repeated:
            extra["first_block_repeated"] = True
        if rerun:
            extra["rerun_same_output"] = True
        self.record(response, action, results, extra=extra or None)

    def on_review(self, response: ModelResponse, action: Action) -> None:
        """The first submit: not yet; the model is asked to look at what it wrote (once per run)."""
        self._reviewed = True
        self.refuse_submit(response, action, REVIEW, {"review_before_submit": True})

    def on_outputs_missing(self, response: ModelResponse, action: Action, missing: list[str]) -> None:
        """A submit while a named path that was absent at the start is still missing or empty: not yet."""
        self._outputs_refused += 1
        self.refuse_submit(response, action, outputs_missing_note(missing), {"outputs_missing": missing})

    def refuse_submit(self, response: ModelResponse, action: Action, note: str, extra: dict[str, Any]) -> None:
        """A submit answered with ``note`` instead of ending the run, recorded with ``extra``."""
        self.add_feedback(note, action)
        results = [ObservationResult(source_call_id=self.call_id(action), content=note)]
        self.record(response, action, results, extra=extra)

    def on_repeat(self, response: ModelResponse, action: Action) -> None:
        """The same command twice in a row: not run (a loop, not a new step); the next reply is sampled hotter."""
        self.repeats += 1
        self._repeats_in_a_row += 1
        self.add_feedback(REPEATED, action)
        results = [ObservationResult(source_call_id=self.call_id(action), content=REPEATED)]
        self.record(response, action, results, extra={"repeated_command": True})
        if self.config.repeat_temperature is not None:
            self._sampling = Sampling(temperature=self.config.repeat_temperature)
        if self.config.max_repeats and self._repeats_in_a_row >= self.config.max_repeats:
            raise StuckRepeating(f"{self._repeats_in_a_row} replies in a row repeated the last command")

    def on_rerun(self) -> None:
        """An earlier command run again, to the same output: a loop over several commands; the next reply is sampled
        hotter, and such reruns in a row count toward ``max_repeats``."""
        self.reruns += 1
        self._reruns_in_a_row += 1
        if self.config.repeat_temperature is not None:
            self._sampling = Sampling(temperature=self.config.repeat_temperature)
        if self.config.max_repeats and self._reruns_in_a_row >= self.config.max_repeats:
            raise StuckRepeating(f"{self._reruns_in_a_row} commands in a row ran again to the same output")

    def on_format_error(self, response: ModelResponse, error: FormatError) -> None:
        self.format_errors += 1
        self._errors_in_a_row += 1
        text = self.render("format_error.j2", error=error.feedback)
        if error.tool_call_ids:
            for call_id in error.tool_call_ids:
                self.messages.append(Message(role="tool", tool_call_id=call_id, content=text))
            results = [ObservationResult(source_call_id=i, content=text) for i in error.tool_call_ids]
        else:
            self.add_message("user", text, record=False)
            results = [ObservationResult(content=text)]
        self.record(response, None, results, extra={"format_error": True})
        if self._errors_in_a_row >= self.config.max_format_errors:
            raise TooManyFormatErrors(f"{self._errors_in_a_row} consecutive replies without a usable action")

    # -- helpers --

    def add_feedback(self, text: str, action: Action) -> None:
        """Output to the model: a ``tool`` message per native call (each must be answered), else ``user``."""
        if action.tool_call_id is None:
            self.add_message("user", text, record=False)
            return
        self.messages.append(Message(role="tool", tool_call_id=action.tool_call_id, content=text))
        for call in action.skipped_calls:
            note = _SKIPPED_SUBMIT if call.name == "submit" else _SKIPPED_CALL
            self.messages.append(Message(role="tool", tool_call_id=call.id, content=note))

    def add_message(self, role: Literal["system", "user"], content: str, *, record: bool = True) -> None:
        self.messages.append(Message(role=role, content=content))
        if record:
            self.recorder.add_step(role, content)

    def record(
        self,
        response: ModelResponse,
        action: Action | None,
        results: list[ObservationResult],
        extra: dict[str, Any] | None = None,
    ) -> None:
        """One ATIF agent step for one model reply, with the observation the model got back."""
        if response.tool_calls:
            calls = [
                AtifToolCall(tool_call_id=c.id, function_name=c.name, arguments=c.arguments)
                for c in response.tool_calls
            ]
            if action is not None:
                for c in action.skipped_calls:
                    note = _SKIPPED_SUBMIT if c.name == "submit" else _SKIPPED_CALL
                    results.append(ObservationResult(source_call_id=c.id, content=note))
        elif action is not None:  # text formats: the parsed action, under an id of our own
            args = {"command": action.command} if action.kind == "bash" else {}
            calls = [AtifToolCall(tool_call_id=self.call_id(action), function_name=action.kind, arguments=args)]
        else:
            calls = []
        self.recorder.add_step(
            "agent",
            response.content,
            model_name=response.model_name if response.model_name not in ("", self.model.name) else None,
            reasoning_content=response.reasoning_content,
            tool_calls=calls,
            observation=Observation(results=results) if results else None,
            metrics=metrics_from_response(response),
            extra=extra,
        )

    def call_id(self, action: Action) -> str:
        return action.tool_call_id or f"call_{self.turns}"

    def render(self, name: str, **variables: Any) -> str:
        return (
            self.templates.get_template(name)
            .render(
                action_format=self.action_format.name,
                command_timeout_sec=self.config.command_timeout_sec,
                max_turns=self.config.max_turns,
                **variables,
            )
            .strip()
        )

    def agent_info(self) -> AgentInfo:
        tools = [{"type": "function", "function": t.model_dump()} for t in self._tools or []]
        return AgentInfo(
            name=self.config.agent_name,
            version=__version__,
            model_name=self.model.name,
            tool_definitions=tools or None,
            extra={"action_format": self.action_format.name},
        )

    def elapsed(self) -> float:
        return time.monotonic() - self._started
