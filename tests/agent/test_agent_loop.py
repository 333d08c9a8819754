"""The agent loop with the scripted model: solving, limits, format errors, timeouts, infrastructure errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from autoenvscaling.agent import Agent, AgentConfig, TrajectoryRecorder, read_trajectory
from autoenvscaling.agent.config import guarded_solver, one_shot
from autoenvscaling.agent.loop import truncate_output
from autoenvscaling.llm.base import (
    Message,
    ModelError,
    ModelResponse,
    Sampling,
    ToolCall,
    ToolSpec,
    Usage,
    seconds_left,
)
from autoenvscaling.llm.scripted import ScriptedError, ScriptedModel
from autoenvscaling.sandbox.base import ExecResult, Sandbox, SandboxError
from autoenvscaling.sandbox.fake import FakeBackend, FakeCall, FakeSandbox


def bash(cmd: str, note: str = "Next step.") -> str:
    return f"{note}\n\n```bash\n{cmd}\n```"


def make_agent(
    replies: list[Any], sandbox: Sandbox, tmp_path: Path | None = None, **config: Any
) -> tuple[Agent, ScriptedModel]:
    model = ScriptedModel(replies)
    recorder = TrajectoryRecorder(tmp_path / "agent" / "trajectory.json" if tmp_path else None)
    return Agent(model, sandbox, AgentConfig(**config), recorder), model


def test_solves_a_tiny_task(sandbox: Sandbox, tmp_path: Path) -> None:
    replies = [bash("echo hello > out.txt"), bash("cat out.txt"), "The file is written.\nsubmit"]
    agent, model = make_agent(replies, sandbox, tmp_path)
    result = agent.run("Write hello to out.txt")
    assert result.exit_reason == "submitted"
    assert result.turns == 3
    assert sandbox.exec("cat out.txt").stdout == "hello\n"
    # The second model call saw the first command's output as a user message, after its own reply.
    assert [m.role for m in model.calls[1]] == ["system", "user", "assistant", "user"]
    assert "Exit code: 0" in model.calls[2][-1].content and "hello" in model.calls[2][-1].content
    traj = read_trajectory(tmp_path / "agent" / "trajectory.json")
    assert [s.source for s in traj.steps] == ["system", "user", "agent", "agent", "agent"]
    assert str(traj.steps[1].message).endswith("Write hello to out.txt")
    assert traj.extra is not None and traj.extra["exit_reason"] == "submitted"
    last = traj.steps[-1]
    assert last.tool_calls is not None and last.tool_calls[0].function_name == "submit"
    assert last.observation is None


def test_history_is_append_only(sandbox: Sandbox) -> None:
    agent, model = make_agent([bash("echo a"), bash("echo b"), "submit"], sandbox)
    agent.run("task")
    for earlier, later in zip(model.calls, model.calls[1:], strict=False):
        assert later[: len(earlier)] == earlier


def loop_forever(_: list[Message]) -> str:
    return bash("echo again")


def test_max_turns(sandbox: Sandbox) -> None:
    agent = Agent(ScriptedModel(responder=loop_forever), sandbox, AgentConfig(max_turns=4))
    result = agent.run("task")
    assert (result.exit_reason, result.turns) == ("max_turns", 4)


def reply_with_usage(tokens: int = 0, cost: float = 0.0) -> ModelResponse:
    usage = Usage(prompt_tokens=tokens, completion_tokens=tokens, cost_usd=cost)
    return ModelResponse(content=bash("echo hi"), usage=usage)


def test_max_tokens(sandbox: Sandbox) -> None:
    model = ScriptedModel(responder=lambda _: reply_with_usage(tokens=50))
    result = Agent(model, sandbox, AgentConfig(max_tokens_total=250)).run("task")
    # 100 tokens per call: 300 >= 250 after the third call, so there is no fourth.
    assert (result.exit_reason, result.turns, result.usage.total_tokens) == ("max_tokens", 3, 300)


def test_max_cost(sandbox: Sandbox, tmp_path: Path) -> None:
    model = ScriptedModel(responder=lambda _: reply_with_usage(cost=0.01))
    recorder = TrajectoryRecorder(tmp_path / "t.json")
    result = Agent(model, sandbox, AgentConfig(max_cost_usd=0.025), recorder).run("task")
    assert (result.exit_reason, result.turns) == ("max_cost", 3)
    final = read_trajectory(tmp_path / "t.json").final_metrics
    assert final is not None and final.total_cost_usd == pytest.approx(0.03)


def test_max_wall_also_caps_the_command_timeout(sandbox: Sandbox) -> None:
    # The command would run 30 s; the run's 1.5 s budget cuts it short, then the loop ends on the wall limit.
    model = ScriptedModel(responder=lambda _: bash("sleep 30"))
    agent = Agent(model, sandbox, AgentConfig(max_wall_sec=1.5, command_timeout_sec=60))
    result = agent.run("task")
    assert (result.exit_reason, result.turns) == ("max_wall", 1)
    observation = agent.recorder.steps[-1].observation
    assert observation is not None and observation.results[0].extra is not None
    assert observation.results[0].extra["timed_out"] is True


def test_malformed_actions_then_recovery(sandbox: Sandbox) -> None:
    replies = [
        "I will just think about it.",
        "```bash\necho cut off```",
        bash("echo fixed"),
        "submit",
    ]
    agent, model = make_agent(replies, sandbox)
    result = agent.run("task")
    assert (result.exit_reason, result.format_errors, result.turns) == ("submitted", 2, 4)
    first, second = model.calls[1][-1], model.calls[2][-1]
    assert first.role == "user" and "no ```bash block found" in first.content
    assert "block is not closed" in second.content
    assert "fixed" in model.calls[3][-1].content


def test_several_blocks_run_the_first_and_say_the_others_did_not_run(sandbox: Sandbox, tmp_path: Path) -> None:
    replies = [
        bash("echo one > a.txt") + "\n" + bash("echo two > b.txt") + "\n" + bash("cat a.txt b.txt") + "\nsubmit",
        bash("echo two > b.txt"),
        "submit",
    ]
    agent, model = make_agent(replies, sandbox, tmp_path)
    result = agent.run("task")
    assert (result.exit_reason, result.format_errors, result.turns, agent.commands_run) == ("submitted", 0, 3, 2)
    seen = model.calls[1][-1].content
    assert "Exit code: 0" in seen
    assert "Only the first ```bash block of your reply ran. The other 2 blocks were NOT run" in seen
    assert "Your submission was not accepted" in seen  # a submit next to a command is still deferred
    assert sandbox.exec("cat a.txt b.txt").stdout == "one\ntwo\n"
    assert "NOT run" not in model.calls[2][-1].content
    traj = read_trajectory(tmp_path / "agent" / "trajectory.json")
    first = traj.steps[2]
    assert first.tool_calls is not None and first.tool_calls[0].arguments == {"command": "echo one > a.txt"}
    assert first.extra == {"deferred_submit": True, "skipped_blocks": 2}


def test_too_many_format_errors(sandbox: Sandbox) -> None:
    agent, _ = make_agent(["no command", "still none", "nothing"], sandbox, max_format_errors=3)
    result = agent.run("task")
    assert (result.exit_reason, result.format_errors, result.turns) == ("format_errors", 3, 3)


def test_format_errors_must_be_consecutive_to_end_the_run(sandbox: Sandbox) -> None:
    replies = ["oops", bash("true"), "oops", bash("true"), "oops", "submit"]
    agent, _ = make_agent(replies, sandbox, max_format_errors=2)
    assert agent.run("task").exit_reason == "submitted"


def test_command_timeout_then_next_command_works(sandbox: Sandbox) -> None:
    agent, model = make_agent([bash("sleep 20"), bash("echo still-alive"), "submit"], sandbox, command_timeout_sec=1)
    assert agent.run("task").exit_reason == "submitted"
    timed_out, after = model.calls[1][-1].content, model.calls[2][-1].content
    assert "timed out after 1.0 seconds" in timed_out
    assert "Exit code: 0" in after and "still-alive" in after


def test_model_error_propagates_and_keeps_the_trajectory(sandbox: Sandbox, tmp_path: Path) -> None:
    agent, _ = make_agent([bash("echo before"), ScriptedError("endpoint down")], sandbox, tmp_path)
    with pytest.raises(ModelError, match="endpoint down"):
        agent.run("task")
    traj = read_trajectory(tmp_path / "agent" / "trajectory.json")
    assert [s.source for s in traj.steps] == ["system", "user", "agent"]
    assert traj.extra is not None
    assert traj.extra["exit_reason"] == "error" and traj.extra["error"] == "ModelError: endpoint down"


def test_sandbox_error_propagates_and_records_the_step(fake: FakeBackend, sandbox: Sandbox, tmp_path: Path) -> None:
    def container_died(sb: FakeSandbox, call: FakeCall) -> ExecResult:
        raise SandboxError("container vanished")

    fake.register(r"^crash", container_died)
    model = ScriptedModel([bash("echo 1"), bash("crash now"), "submit"])
    recorder = TrajectoryRecorder(tmp_path / "t.json")
    with pytest.raises(SandboxError):
        Agent(model, sandbox, AgentConfig(), recorder).run("task")
    steps = read_trajectory(tmp_path / "t.json").steps
    assert len(steps) == 4
    assert steps[-1].observation is not None and steps[-1].observation.results[0].content == "container vanished"


def test_command_and_submit_in_one_reply_is_not_accepted(sandbox: Sandbox) -> None:
    agent, model = make_agent([bash("echo done > f") + "\nsubmit", "submit"], sandbox)
    result = agent.run("task")
    assert (result.exit_reason, result.turns) == ("submitted", 2)
    assert "Your submission was not accepted" in model.calls[1][-1].content
    assert sandbox.exec("cat f").stdout == "done\n"


def test_native_command_and_submit_calls_answer_each_call(sandbox: Sandbox) -> None:
    both = ModelResponse(
        tool_calls=[
            ToolCall(id="c1", name="bash", arguments={"command": "echo native"}),
            ToolCall(id="c2", name="submit"),
        ]
    )
    done = ModelResponse(tool_calls=[ToolCall(id="c3", name="submit")])
    agent, model = make_agent([both, done], sandbox, action_format="tool_calls")
    assert agent.run("task").turns == 2
    answers = model.calls[1][-2:]
    assert [(m.role, m.tool_call_id) for m in answers] == [("tool", "c1"), ("tool", "c2")]
    assert "native" in answers[0].content and "Submission refused" in answers[1].content


def test_qwen_style_json_tool_call_in_content(sandbox: Sandbox) -> None:
    replies = [
        'Creating.\n<tool_call>\n{"name": "bash", "arguments": {"command": "echo q > q"}}\n</tool_call>',
        '```json\n{"name": "bash", "arguments": {"command": "cat q"}}\n```',
        '{"name": "submit", "arguments": {}}',
    ]
    agent, model = make_agent(replies, sandbox, action_format="tool_calls")
    assert agent.run("task").exit_reason == "submitted"
    # Parsed from content, so there is no native call id to answer: the output goes back as a user message.
    assert model.calls[2][-1].role == "user" and "q" in model.calls[2][-1].content


class RecordingModel(ScriptedModel):
    """Keeps the request options too, to check what each action format asks of the server."""

    def __init__(self, script: list[Any]) -> None:
        super().__init__(script)
        self.options: list[tuple[list[ToolSpec] | None, dict[str, Any] | None]] = []

    def complete(
        self,
        messages: list[Message],
        *,
        tools: list[ToolSpec] | None = None,
        response_format: dict[str, Any] | None = None,
        sampling: Sampling | None = None,
    ) -> ModelResponse:
        self.options.append((tools, response_format))
        return super().complete(messages, tools=tools, response_format=response_format)


def test_json_format_sends_the_schema_and_runs_the_command(sandbox: Sandbox) -> None:
    replies = [
        json.dumps({"thought": "make it", "action": "bash", "command": "echo j > j.txt"}),
        json.dumps({"thought": "done", "action": "submit", "command": ""}),
    ]
    model = RecordingModel(replies)
    assert Agent(model, sandbox, AgentConfig(action_format="json")).run("task").exit_reason == "submitted"
    tools, response_format = model.options[0]
    assert tools is None and response_format is not None
    assert response_format["json_schema"]["schema"]["properties"]["action"]["enum"] == ["bash", "submit"]
    assert sandbox.exec("cat j.txt").stdout == "j\n"


def test_long_output_is_truncated_head_and_tail(fake: FakeBackend, sandbox: Sandbox) -> None:
    fake.register(r"^big-output$", lambda sb, call: ExecResult(stdout="a" * 5000 + "b" * 5000))
    agent, model = make_agent(
        [bash("big-output"), "submit"],
        sandbox,
        observation_head_chars=100,
        observation_tail_chars=50,
    )
    agent.run("task")
    seen = model.calls[1][-1].content
    assert "a" * 100 + "\n[... 9850 characters omitted ...]\n" + "b" * 50 in seen


def test_truncate_output_edges() -> None:
    assert truncate_output("short", 3, 2) == "short"
    assert truncate_output("abcdefgh", 2, 0) == "ab\n[... 6 characters omitted ...]\n"


def test_template_override(sandbox: Sandbox) -> None:
    agent, model = make_agent(
        ["submit"], sandbox, templates={"instance.j2": "DO THIS: {{ task }}"}, min_commands_before_submit=0
    )
    agent.run("the task")
    assert model.calls[0][1].content == "DO THIS: the task"


def test_submit_before_any_command_is_refused(sandbox: Sandbox) -> None:
    agent, model = make_agent(["submit", "```bash\ntrue\n```", "submit"], sandbox)
    result = agent.run("the task")
    assert result.exit_reason == "submitted"
    assert result.turns == 3 and result.format_errors == 1
    assert "no command has run yet" in model.calls[1][-1].content


def test_a_command_repeated_at_once_is_not_run_again_and_the_next_reply_is_sampled_hotter(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    replies = [bash("echo x >> log.txt"), bash("echo x >> log.txt"), bash("cat log.txt"), bash("echo x >> log.txt")]
    agent, model = make_agent([*replies, "submit"], sandbox, tmp_path, repeat_temperature=1.2)
    agent.run("task")
    # The repeat appended nothing; the same command after another one runs again.
    assert sandbox.exec("cat log.txt").stdout == "x\nx\n"
    assert "Not run again" in model.calls[2][-1].content
    assert [s.temperature if s else None for s in model.samplings] == [None, None, 1.2, None, None]
    traj = read_trajectory(tmp_path / "agent" / "trajectory.json")
    repeated = [s for s in traj.steps if s.extra and s.extra.get("repeated_command")]
    assert len(repeated) == 1 and traj.extra is not None and traj.extra["repeated_commands"] == 1


def test_a_reply_that_resends_its_plan_runs_its_first_block_that_never_ran(sandbox: Sandbox, tmp_path: Path) -> None:
    plan = "\n".join(bash(c) for c in ("cat in.txt", "cat in.txt", "cat in.txt > out.txt", "cat out.txt"))
    replies = [bash("printf 'b\\na\\n' > in.txt"), bash("cat in.txt"), plan, plan, plan, "submit"]
    agent, model = make_agent(replies, sandbox, tmp_path)
    agent.run("task")
    assert sandbox.exec("cat out.txt").stdout == "b\na\n"
    third, fourth, fifth = (model.calls[i][-1].content for i in (3, 4, 5))
    assert "Your first ```bash block had run before" in third and "Only that ```bash block" in third
    assert "The other 1 block was NOT run" in third  # only the blocks that never ran are counted
    assert "had run before" in fourth and "b\na" in fourth and "NOT run" not in fourth
    assert "had run before" not in fifth  # every block has run: the plan's first block runs as usual
    traj = read_trajectory(tmp_path / "agent" / "trajectory.json")
    ran = [s.tool_calls[0].arguments["command"] for s in traj.steps if s.extra and s.extra.get("first_block_repeated")]
    assert ran == ["cat in.txt > out.txt", "cat out.txt"]


def test_without_a_repeat_temperature_the_models_own_sampling_is_kept(sandbox: Sandbox) -> None:
    agent, model = make_agent(
        [bash("echo x >> log.txt"), bash("echo x >> log.txt"), "submit"], sandbox, repeat_temperature=None
    )
    agent.run("task")
    assert "Not run again" in model.calls[2][-1].content and model.samplings == [None, None, None]


def test_flag_reruns_notes_a_command_that_ran_before_to_the_same_output(sandbox: Sandbox, tmp_path: Path) -> None:
    sandbox.exec("printf '1\\n2\\n' > in.txt")
    loop = [bash("grep"), bash("cat in.txt"), bash("grep"), bash("cat in.txt")]
    agent, model = make_agent([*loop, bash("echo 3 >> in.txt"), "submit"], sandbox, tmp_path, flag_reruns=True)
    result = agent.run("task")
    assert (result.exit_reason, agent.commands_run, agent.reruns) == ("submitted", 5, 2)
    seen = [model.calls[i][-1].content for i in range(1, 6)]
    assert ["You ran this same command before" in s for s in seen] == [False, False, True, True, False]
    assert "Exit code: 0" in seen[3] and "1\n2" in seen[3]  # the rerun ran: its output is shown as usual
    # The reply after each rerun is sampled hotter.
    assert [s.temperature if s else None for s in model.samplings] == [None, None, None, 1.0, 1.0, None]
    traj = read_trajectory(tmp_path / "agent" / "trajectory.json")
    assert sum(bool(s.extra and s.extra.get("rerun_same_output")) for s in traj.steps) == 2
    assert traj.extra is not None and traj.extra["reruns_same_output"] == 2


def test_a_rerun_whose_output_changed_is_no_rerun(sandbox: Sandbox) -> None:
    replies = [bash("cat log.txt"), bash("echo x >> log.txt"), bash("cat log.txt"), "submit"]
    agent, model = make_agent(replies, sandbox, flag_reruns=True)
    agent.run("task")
    assert agent.reruns == 0 and "same command before" not in model.calls[3][-1].content
    # Off (the loop's default), an A-B-A-B loop runs without a note.
    agent, model = make_agent([bash("pwd"), bash("ls"), bash("pwd"), bash("ls"), "submit"], sandbox)
    agent.run("task")
    assert agent.reruns == 0 and all("same command before" not in c[-1].content for c in model.calls)


def test_reruns_in_a_row_count_toward_max_repeats(sandbox: Sandbox) -> None:
    loop = [bash("pwd"), bash("ls"), bash("pwd"), bash("ls"), bash("pwd"), bash("ls"), "submit"]
    agent, _ = make_agent(loop, sandbox, flag_reruns=True, max_repeats=3)
    result = agent.run("task")
    assert (result.exit_reason, agent.commands_run, agent.reruns) == ("repeats", 5, 3)
    # A command with a new result in between starts the count again.
    broken = [*loop[:4], bash("echo new"), *loop[4:]]
    agent, _ = make_agent(broken, sandbox, flag_reruns=True, max_repeats=3)
    assert agent.run("task").exit_reason == "submitted"


def test_a_one_shot_run_runs_one_script_and_ends(sandbox: Sandbox, tmp_path: Path) -> None:
    sandbox.exec("mkdir -p /app && printf 'a\\nb\\n' > /app/in.txt")
    model = ScriptedModel([bash("cat /app/in.txt > /app/out.txt", "The script:"), "never asked"])
    recorder = TrajectoryRecorder(tmp_path / "agent" / "trajectory.json")
    agent = Agent(model, sandbox, one_shot(guarded_solver(10)), recorder)
    result = agent.run("Copy /app/in.txt to /app/out.txt.")
    assert (result.exit_reason, result.turns, agent.commands_run) == ("max_turns", 1, 1)
    assert sandbox.exec("cat /app/out.txt").stdout == "a\nb\n"
    system, user = model.calls[0][0].content, model.calls[0][1].content
    assert "write one bash script that does the whole task" in system and "one command at a time" not in system
    assert user.startswith("Here is your task:\n\nCopy /app/in.txt") and user.endswith("one ```bash block only.")


def test_the_round_solver_flags_reruns() -> None:
    assert guarded_solver(10).flag_reruns and not AgentConfig().flag_reruns


def test_review_before_submit_answers_the_first_submit_with_a_request_to_check(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    replies = [bash("echo hi > out.txt"), "Done.\nsubmit", bash("cat out.txt"), "submit"]
    agent, model = make_agent(replies, sandbox, tmp_path, review_before_submit=True)
    result = agent.run("Write hi to out.txt")
    assert result.exit_reason == "submitted" and result.turns == 4
    assert "Before you submit, check your work" in model.calls[2][-1].content
    traj = read_trajectory(tmp_path / "agent" / "trajectory.json")
    reviewed = [s for s in traj.steps if s.extra and s.extra.get("review_before_submit")]
    assert len(reviewed) == 1 and reviewed[0].tool_calls and reviewed[0].tool_calls[0].function_name == "submit"
    # Off (the loop's default), the first submit ends the run.
    agent, _ = make_agent(replies[:2], sandbox)
    assert agent.run("Write hi to out.txt").turns == 2


def test_stop_after_block_ends_each_reply_at_its_first_block(sandbox: Sandbox, tmp_path: Path) -> None:
    rambling = (
        "Look first.\n```bash\necho one > a.txt\n```\nIt printed a b c, so:\n```bash\necho two > b.txt\n```\nsubmit"
    )
    agent, model = make_agent([rambling, bash("cat a.txt"), "submit"], sandbox, tmp_path, stop_after_block=True)
    result = agent.run("task")
    assert (result.exit_reason, agent.commands_run) == ("submitted", 2)
    assert all(s is not None and s.stop and s.stop[0] == "\n```\n" for s in model.samplings)
    # The reply kept (and shown in the history) is the thought and the first block, closed again.
    assert model.calls[1][2].content == "Look first.\n```bash\necho one > a.txt\n```"
    seen = model.calls[1][-1].content
    assert "NOT run" not in seen and "submission was not accepted" not in seen
    assert sandbox.exec("cat b.txt").exit_code != 0
    # A repeated command still gets the hotter sample, with the stop string.
    agent, model = make_agent([bash("ls"), bash("ls"), "submit"], sandbox, stop_after_block=True)
    agent.run("task")
    assert model.samplings[2] is not None and model.samplings[2].temperature == 1.0
    assert model.samplings[2].stop == model.samplings[0].stop


def test_stop_after_block_also_stops_at_an_indented_block_of_a_numbered_plan(sandbox: Sandbox, tmp_path: Path) -> None:
    plan = (
        "Steps:\n1. Make a:\n   ```bash\n   echo one > a.txt\n   ```\n2. Make b:\n   ```bash\n   echo two > b.txt\n"
        "   ```\nsubmit"
    )
    agent, model = make_agent([plan, "submit", "submit"], sandbox, tmp_path, stop_after_block=True)
    agent.run("task")
    assert model.calls[1][2].content == "Steps:\n1. Make a:\n   ```bash\n   echo one > a.txt\n```"
    assert sandbox.exec("cat a.txt").stdout.strip() == "one" and sandbox.exec("cat b.txt").exit_code != 0
    assert "NOT run" not in model.calls[1][-1].content


def test_max_repeats_ends_a_run_stuck_on_one_command(sandbox: Sandbox, tmp_path: Path) -> None:
    replies = [bash("ls"), bash("ls"), bash("ls"), bash("ls"), bash("pwd"), "submit"]
    agent, _ = make_agent(replies, sandbox, tmp_path, max_repeats=3)
    result = agent.run("task")
    assert (result.exit_reason, agent.commands_run, agent.repeats, result.turns) == ("repeats", 1, 3, 4)
    # A different command in between starts the count again.
    agent, _ = make_agent([bash("ls"), bash("ls"), bash("pwd"), bash("pwd"), "submit"], sandbox, max_repeats=2)
    assert agent.run("task").exit_reason == "submitted"
    # 0 is no limit, as None is (TOML has no null: a [solver] table turns the limit off with 0).
    agent, _ = make_agent(replies, sandbox, max_repeats=0)
    assert (agent.run("task").exit_reason, agent.repeats) == ("submitted", 3)


def test_outputs_before_submit_refuses_a_submit_while_a_named_output_is_missing_or_empty(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    sandbox.exec("mkdir -p /app && echo 1 > /app/in.txt")
    task = "Copy the first line of /app/in.txt to /app/out.txt."
    replies = ["submit", bash("touch /app/out.txt"), "submit", bash("cat /app/in.txt > /app/out.txt"), "submit"]
    agent, model = make_agent(replies, sandbox, tmp_path, outputs_before_submit=2, min_commands_before_submit=0)
    result = agent.run(task)
    assert result.exit_reason == "submitted" and result.turns == 5
    # Named and absent at the start: /app/out.txt only (/app/in.txt existed). Missing, then empty: both refused.
    assert "Not submitted: the task names /app/out.txt" in model.calls[1][-1].content
    assert "Not submitted" in model.calls[3][-1].content
    traj = read_trajectory(tmp_path / "agent" / "trajectory.json")
    refused = [s.extra["outputs_missing"] for s in traj.steps if s.extra and "outputs_missing" in s.extra]
    assert refused == [["/app/out.txt"], ["/app/out.txt"]]


def test_outputs_before_submit_gives_up_after_its_budget_and_is_off_by_default(sandbox: Sandbox) -> None:
    task = "Write the answer to /app/answer.txt."
    agent, _ = make_agent(["submit", "submit"], sandbox, outputs_before_submit=1, min_commands_before_submit=0)
    assert agent.run(task).turns == 2  # one refusal, then the submit stands (the verifier decides)
    agent, _ = make_agent(["submit"], sandbox, min_commands_before_submit=0)
    assert agent.run(task).turns == 1


def test_outputs_before_submit_ignores_url_paths_and_checks_declared_outputs(sandbox: Sandbox, tmp_path: Path) -> None:
    """An example log line names /index.html: no output (its top-level dir does not exist). With declared outputs
    (the task's artifacts), only the named paths among them count."""
    sandbox.exec("mkdir -p /app/data && echo '10.0.0.1 GET /index.html 200' > /app/data/access.log")
    task = "Write the lines of /app/data/access.log with status 200 to /app/ok.txt and a count to /app/n.txt.\n" + (
        "A line looks like `10.0.0.1 GET /index.html 200`."
    )
    agent, model = make_agent(["submit", "submit"], sandbox, outputs_before_submit=1, min_commands_before_submit=0)
    agent.run(task)
    assert "the task names /app/ok.txt, /app/n.txt, which" in model.calls[1][-1].content
    agent, model = make_agent(["submit", "submit"], sandbox, outputs_before_submit=1, min_commands_before_submit=0)
    agent.run(task, outputs=["/app/ok.txt"])
    assert "the task names /app/ok.txt, which" in model.calls[1][-1].content
    agent, model = make_agent(["submit"], sandbox, outputs_before_submit=1, min_commands_before_submit=0)
    assert agent.run("Fetch /index.html from the server.").turns == 1  # no output to wait for


@pytest.mark.parametrize("max_wall_sec", [100.0, None])
def test_each_model_call_knows_how_long_the_run_has_left(sandbox: Sandbox, max_wall_sec: float | None) -> None:
    """A local model that can stop generating early (the ``hf:`` solver) reads the run's deadline: a CPU
    generation outlived a task's agent timeout, and the trial became an error instead of a graded attempt."""
    left: list[float | None] = []

    def answer(messages: list[Message]) -> str:
        left.append(seconds_left())
        return bash("echo a") if len(left) == 1 else "submit"

    agent = Agent(ScriptedModel(responder=answer), sandbox, AgentConfig(max_wall_sec=max_wall_sec))
    agent.run("task")
    assert len(left) == 2 and seconds_left() is None  # the deadline holds for the calls only
    if max_wall_sec is None:
        assert left == [None, None]
    else:
        first, second = left
        assert first is not None and second is not None and 0 < second <= first <= max_wall_sec
