"""The ``combine`` operator without Docker: which second parent is offered, how its files enter the child
(fresh directory, COPY lines, renamed collisions), and what the prompts and schemas show."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest
from combine_parents import make_parent

from autoenvscaling.llm.base import Message, ModelResponse, Sampling, ToolSpec
from autoenvscaling.llm.scripted import ScriptedModel
from autoenvscaling.roles.proposer.domain import domain_context
from autoenvscaling.roles.proposer.packs import pack_dir
from autoenvscaling.roles.proposer.staged.combine import free_path, plan_combination, rewrite_paths
from autoenvscaling.roles.proposer.staged.config import StagedConfig
from autoenvscaling.roles.proposer.staged.episode import Episode
from autoenvscaling.roles.proposer.staged.oneshot import propose_oneshot_recorded
from autoenvscaling.roles.proposer.staged.parents import (
    STARTERS,
    Parent,
    load_parent,
    second_parent,
    worked_example,
)
from autoenvscaling.roles.proposer.staged.spec import Idea
from autoenvscaling.roles.proposer.staged.state import StagedContext
from autoenvscaling.sandbox.fake import FakeBackend

COMBINE_IDEA = {
    "operator": "combine",
    "change": "Count the 404 requests of both logs",
    "output_file": "/app/all404.txt",
    "compare": "exact",
    "new_data": False,
}


class SchemaModel(ScriptedModel):
    """A scripted model that also keeps the response format of every call (the constrained-decoding schema)."""

    def __init__(self, replies: list[str]) -> None:
        super().__init__(replies)
        self.formats: list[dict[str, Any] | None] = []

    def complete(
        self,
        messages: list[Message],
        *,
        tools: list[ToolSpec] | None = None,
        response_format: dict[str, Any] | None = None,
        sampling: Sampling | None = None,
    ) -> ModelResponse:
        self.formats.append(response_format)
        return super().complete(messages, tools=tools, response_format=response_format, sampling=sampling)


def _parent(path: Path) -> Parent:
    parent = load_parent(path)
    assert parent is not None
    return parent


def _worked() -> Parent:
    return _parent(worked_example(domain_context("terminal")))  # type: ignore[arg-type]


def _episode(tmp: Path, model: ScriptedModel, first: Parent, second: Parent | None) -> Episode:
    ctx = StagedContext(domain=domain_context("terminal"), parent=first, second=second)
    return Episode(model, FakeBackend(), ctx, StagedConfig(), tmp / "ep", "staged-000", "staged")


def _enum(fmt: dict[str, Any] | None) -> list[str]:
    assert fmt is not None
    return list(fmt["json_schema"]["schema"]["properties"]["operator"]["enum"])


def test_the_second_parent_is_the_next_one_with_inputs_and_the_same_base_image(tmp_path: Path) -> None:
    a = _parent(make_parent(tmp_path, "a"))
    other_image = _parent(make_parent(tmp_path, "b", image="autoenv/python:latest"))
    no_inputs = _parent(make_parent(tmp_path, "c", files={}, copy="RUN mkdir -p /srv/x"))
    d = _parent(make_parent(tmp_path, "d"))
    parents = [a, other_image, no_inputs, d]
    assert second_parent(parents, 0) is d and second_parent(parents, 3) is a  # wraps around
    assert second_parent(parents, 2) is d  # a first parent needs no inputs of its own
    assert second_parent(parents, 1) is None  # nobody else starts FROM its image
    assert second_parent([a], 0) is None and second_parent([], 0) is None


def test_a_colliding_path_gets_a_free_name_and_every_shown_text_uses_it(tmp_path: Path) -> None:
    first = _parent(make_parent(tmp_path, "first"))
    (first.path / "environment" / "combine-worked-example").mkdir()  # taken: the next fresh dir is used
    plan = plan_combination(first, _worked())
    assert plan.renamed == {"/app/data/access.log": "/app/data/access-2.log"}
    assert list(plan.second.data) == ["/app/data/access-2.log"]
    assert "/app/data/access-2.log" in plan.second.solve_sh and "access.log " not in plan.second.solve_sh
    assert "/app/data/access-2.log has one request" in plan.second.instruction
    assert plan.second.sources == {"/app/data/access-2.log": "combine-worked-example-2/data/access.log"}
    assert plan.files["combine-worked-example-2/data/access.log"].startswith("10.0.0.1 GET /index.html 200")
    dockerfile = plan.files["Dockerfile"].splitlines()
    assert dockerfile[:3] == ["FROM autoenv/terminal:latest", "WORKDIR /app", "COPY data/ /app/data/"]
    assert dockerfile[-1] == "COPY combine-worked-example-2/data/access.log /app/data/access-2.log"


def test_a_compressed_input_of_the_second_parent_is_compressed_in_the_child_too(tmp_path: Path) -> None:
    examples = Path(__file__).parents[3] / "examples" / "terminal"
    plan = plan_combination(_worked(), _parent(examples / "log-error-summary"))
    assert "/app/logs/access.log.2.gz" in plan.second.data  # the name it has in the image
    lines = plan.files["Dockerfile"].splitlines()
    at = lines.index("COPY combine-log-error-summary/logs/access.log.2 /app/logs/access.log.2")
    assert lines[at + 1] == "RUN gzip -n /app/logs/access.log.2"


def test_free_names_and_whole_path_rewrites() -> None:
    assert free_path("/app/data/access.log", {"/app/data/access-2.log"}) == "/app/data/access-3.log"
    assert free_path("/app/logs/a.log.1", set()) == "/app/logs/a-2.log.1"
    assert free_path("/srv/.env", set()) == "/srv/.env-2"
    moved = {"/app/data/a.log": "/app/data/a-2.log", "/app/data/a-2.log": "/app/data/a-3.log"}
    text = "cat /app/data/a.log /app/data/a.log.1 /app/data/a-2.log; ls /app/data/a.logs x/app/data/a.log"
    assert rewrite_paths(text, moved) == (
        "cat /app/data/a-2.log /app/data/a.log.1 /app/data/a-3.log; ls /app/data/a.logs x/app/data/a.log"
    )


def test_without_a_second_parent_combine_is_not_offered(tmp_path: Path) -> None:
    model = SchemaModel([json.dumps({**COMBINE_IDEA, "operator": "filter"})])
    ep = _episode(tmp_path, model, _worked(), None)
    assert ep.ask_idea()
    prompt = model.calls[0][-1].content
    assert "combine" not in prompt and "SECOND" not in prompt
    assert "combine" not in _enum(model.formats[0]) and "filter" in _enum(model.formats[0])


def test_a_combine_reply_without_a_second_parent_becomes_a_new_question(tmp_path: Path) -> None:
    ep = _episode(tmp_path, SchemaModel([json.dumps(COMBINE_IDEA)]), _worked(), None)
    assert ep.ask_idea() and ep.log.idea is not None
    assert ep.log.idea.operator == "new_question" and ep.combined is None and not ep.files.added


def test_the_idea_prompt_shows_the_second_parent_and_offers_combine(tmp_path: Path) -> None:
    first = _parent(make_parent(tmp_path, "first"))
    model = SchemaModel([json.dumps(COMBINE_IDEA)])
    ep = _episode(tmp_path, model, first, _worked())
    assert ep.ask_idea()
    prompt = model.calls[0][-1].content
    assert "SECOND TASK (only for the operator combine" in prompt
    assert "input file /app/data/access-2.log (first lines):\n10.0.0.1 GET /index.html 200" in prompt
    assert "sort -n > /app/errors.txt" in prompt and "- combine: combine this task" in prompt
    assert _enum(model.formats[0])[-1] == "combine"
    # The child holds both parents' inputs; the prompts after the idea show the second as combined.
    assert set(ep.inputs) == {"/app/data/access.log", "/app/data/access-2.log"}
    assert ep.inputs["/app/data/access-2.log"].startswith("10.0.0.1 GET")
    assert "/app/data/access-2.log" in ep.input_heads()
    assert ep.parent_block.count("SECOND PARENT TASK") == 1
    assert ep.combined is not None
    assert ep.parent_solutions() == [("first", first.solve_sh), ("worked-example", ep.combined.second.solve_sh)]
    assert ep.log.second_parent == "worked-example"
    assert ep.log.renamed == {"/app/data/access.log": "/app/data/access-2.log"}
    draft = ep.draft()
    assert (draft / "environment" / "combine-worked-example" / "data" / "access.log").is_file()
    assert (draft / "environment" / "data" / "access.log").read_text().startswith("10.0.0.7")
    assert (
        "COPY combine-worked-example/data/access.log /app/data/access-2.log"
        in (draft / "environment" / "Dockerfile").read_text()
    )
    lineage = tomllib.loads((draft / "task.toml").read_text())["metadata"]["lineage"]
    assert lineage == {"parent": "first", "second_parent": "worked-example", "operator": "combine"}


def test_another_operator_leaves_the_second_parent_out_of_the_child(tmp_path: Path) -> None:
    ep = _episode(tmp_path, SchemaModel([json.dumps({**COMBINE_IDEA, "operator": "filter"})]), _worked(), _worked())
    assert ep.ask_idea()
    assert ep.combined is None and "SECOND" not in ep.parent_block and list(ep.inputs) == ["/app/data/access.log"]
    assert len(ep.parent_solutions()) == 1 and ep.log.second_parent is None
    lineage = tomllib.loads((ep.draft() / "task.toml").read_text())["metadata"]["lineage"]
    assert lineage == {"parent": "worked-example", "operator": "filter"}


def test_new_lines_go_to_the_second_parents_input_when_the_first_has_none(tmp_path: Path) -> None:
    first = _parent(make_parent(tmp_path, "bare", files={}, copy="RUN mkdir -p /srv/x"))
    ep = _episode(tmp_path, SchemaModel([]), first, _worked())
    ep.choose(Idea.model_validate(COMBINE_IDEA))
    ep.extend_input(["10.0.0.5 GET /z 404"])
    # No collision: the second parent's file keeps its path; the extended copy is written over the added one.
    assert ep.main_input == "/app/data/access.log" and ep.inputs["/app/data/access.log"].endswith("/z 404")
    added = ep.draft() / "environment" / "combine-worked-example" / "data" / "access.log"
    assert added.read_text().endswith("10.0.0.5 GET /z 404\n")


def test_the_one_shot_arm_is_offered_combine_under_the_same_conditions(tmp_path: Path) -> None:
    shot = {**COMBINE_IDEA, "data": "", "instruction": "Count the 404s of both logs.", "solve_sh": "true"}
    del shot["new_data"]
    for second, offered in ((None, False), (_worked(), True)):
        model = SchemaModel([json.dumps(shot)])
        ctx = StagedContext(domain=domain_context("terminal"), parent=_worked(), second=second)
        d = tmp_path / str(offered)
        result = propose_oneshot_recorded(
            model, FakeBackend(), ctx, episode_dir=d / "ep", candidate_dir=d / "cand", task_id="p-000"
        )
        assert result.exit_reason == "answered"
        assert ("combine" in _enum(model.formats[0])) is offered
        log = json.loads((d / "ep" / "staged.json").read_text())
        assert log["idea"]["operator"] == ("combine" if offered else "new_question")
        assert log["second_parent"] == ("worked-example" if offered else None)


AUDIT = "List the world-writable regular files under /srv/data, sorted, in /app/world_writable.txt."
AUDIT_SOLVE = "#!/bin/bash\nfind /srv/data -type f -perm -o+w | sort > /app/world_writable.txt\n"


def test_an_idea_about_the_second_task_makes_it_the_parent(tmp_path: Path) -> None:
    """v8's A1 #1: a file-permission parent, the access-log task shown second; the model named `filter` with a
    change about status codes, and the child was built on the parent without logs (its solution could only fail)."""
    first = _parent(make_parent(tmp_path, "audit", files={}, copy="RUN mkdir -p /srv/data", instruction=AUDIT,
                                solve=AUDIT_SOLVE))  # fmt: skip
    idea = {**COMBINE_IDEA, "operator": "filter", "change": "select the requests whose status code is 404"}
    ep = _episode(tmp_path, SchemaModel([json.dumps(idea)]), first, _worked())
    assert ep.ask_idea()
    assert ep.ctx.parent.name == "worked-example" and ep.log.parent == "worked-example"
    assert ep.combined is None and list(ep.inputs) == ["/app/data/access.log"]
    assert ep.parent_solutions() == [("worked-example", ep.ctx.parent.solve_sh)]
    assert "world-writable" not in ep.parent_block and "one request per line" in ep.parent_block
    lineage = tomllib.loads((ep.draft() / "task.toml").read_text())["metadata"]["lineage"]
    assert lineage == {"parent": "worked-example", "operator": "filter"}


def test_the_idea_prompt_says_when_the_parent_has_no_lines_to_filter(tmp_path: Path) -> None:
    """v13 #13: a text filter ("lines that contain admin") on the file-permission parent, with no second task."""
    first = _parent(make_parent(tmp_path, "audit", files={}, copy="RUN mkdir -p /srv/data", instruction=AUDIT,
                                solve=AUDIT_SOLVE))  # fmt: skip
    idea = {**COMBINE_IDEA, "operator": "filter", "change": "list the world-writable files owned by root"}
    for second, combine in ((None, False), (_worked(), True)):
        model = SchemaModel([json.dumps(idea)])
        assert _episode(tmp_path, model, first, second).ask_idea()
        prompt = model.calls[0][-1].content
        assert "The parent has no input text file" in prompt and "no lines to filter" in prompt
        assert ("unless you combine it with the second task" in prompt) is combine
    model = SchemaModel([json.dumps(idea)])
    assert _episode(tmp_path, model, _worked(), None).ask_idea()
    assert "no input text file" not in model.calls[0][-1].content


def test_an_idea_about_the_parent_keeps_it(tmp_path: Path) -> None:
    first = _parent(make_parent(tmp_path, "audit", files={}, copy="RUN mkdir -p /srv/data", instruction=AUDIT,
                                solve=AUDIT_SOLVE))  # fmt: skip
    idea = {**COMBINE_IDEA, "operator": "filter", "change": "list the world-writable files owned by root"}
    ep = _episode(tmp_path, SchemaModel([json.dumps(idea)]), first, _worked())
    assert ep.ask_idea()
    assert ep.ctx.parent.name == "audit" and ep.log.parent == "audit" and ep.ctx.second is not None


def test_a_close_call_keeps_the_parent(tmp_path: Path) -> None:
    """The idea shares words with both tasks (the worked example's log and the second parent's): no swap."""
    second = _parent(make_parent(tmp_path, "second", instruction="Count the requests with status 404 per IP."))
    idea = {**COMBINE_IDEA, "operator": "filter", "change": "Count the requests that ended with status 404"}
    ep = _episode(tmp_path, SchemaModel([json.dumps(idea)]), _worked(), second)
    assert ep.ask_idea()
    assert ep.ctx.parent.name == "worked-example"


def test_one_shared_word_is_enough_when_only_the_second_task_has_inputs(tmp_path: Path) -> None:
    """v8's A1 #4: "lines that start with 'GET /'" on the file-permission parent, which has no input file."""
    first = _parent(make_parent(tmp_path, "audit", files={}, copy="RUN mkdir -p /srv/data", instruction=AUDIT,
                                solve=AUDIT_SOLVE))  # fmt: skip
    idea = {
        **COMBINE_IDEA,
        "operator": "filter",
        "change": "Select all lines from the input files that start with 'GET /'",
    }
    ep = _episode(tmp_path, SchemaModel([json.dumps(idea)]), first, _worked())
    assert ep.ask_idea()
    assert ep.ctx.parent.name == "worked-example"
    # The same single word does not move an idea off a parent that has inputs of its own.
    with_inputs = _parent(make_parent(tmp_path, "ips"))
    ep = _episode(
        tmp_path, SchemaModel([json.dumps({**idea, "change": "keep the lines with GET"})]), with_inputs, _worked()
    )
    assert ep.ask_idea()
    assert ep.ctx.parent.name == "ips"


@pytest.mark.parametrize(
    "change",
    [  # the ideas of the ad011ff demo series' runs 2-4, each asked on the config starter with the passwd one second
        "Write /app/result.txt: the names of the users whose shell is /bin/bash, one per line, sorted by name.",
        "Filter lines where the shell is not /bin/bash.",
        "Filter the lines of /app/data/passwd that only contain users whose shell is /bin/bash, and sort them.",
    ],
)
def test_the_shebang_of_every_solve_sh_does_not_tie_an_idea_to_its_parent(tmp_path: Path, change: str) -> None:
    starters = pack_dir("terminal") / STARTERS
    first, second = _parent(starters / "app-config"), _parent(starters / "passwd-shells")
    assert first.solve_sh.startswith("#!/bin/bash")
    ep = _episode(tmp_path, SchemaModel([json.dumps({**COMBINE_IDEA, "operator": "filter", "change": change})]),
                  first, second)  # fmt: skip
    assert ep.ask_idea()
    assert ep.ctx.parent.name == "passwd-shells" and list(ep.inputs) == ["/app/data/passwd"]


@pytest.mark.parametrize(
    ("change", "parent", "second", "about"),
    [  # recorded ideas whose quoted text only the second task's input holds (66937ae demo run 2; ad011ff rounds)
        ("Filter out lines that start with the '#' character.", "worked-example", "app-config", "app-config"),
        ("select only the lines where the username is 'alice'", "worked-example", "passwd-shells", "passwd-shells"),
        ("Keep only lines where the status code is 400 and the method is 'GET'", "passwd-shells", "worked-example",
         "worked-example"),
        # a quoted text that both inputs hold, or the parent's input alone, decides nothing or keeps the parent
        ("select only lines containing the word 'debug'", "app-config", "passwd-shells", "app-config"),
        ("Select only the lines where the password is 'root' and the port is '8080'.", "passwd-shells", "app-config",
         "passwd-shells"),
        # a quoted path or blank decides nothing here, though only the second task has inputs to hold a blank
        ("List the permissions of the files named ' ' or '/nowhere'.", "audit-file-permissions", "worked-example",
         "audit-file-permissions"),
    ],
)  # fmt: skip
def test_a_quoted_text_that_only_the_second_task_s_input_holds_makes_it_the_parent(
    tmp_path: Path, change: str, parent: str, second: str, about: str
) -> None:
    def load(name: str) -> Parent:
        if name == "worked-example":
            return _worked()
        examples = Path(__file__).resolve().parents[3] / "examples" / "terminal"
        return _parent(examples / name if (examples / name).is_dir() else pack_dir("terminal") / STARTERS / name)

    first, other = load(parent), load(second)
    ep = _episode(tmp_path, SchemaModel([json.dumps({**COMBINE_IDEA, "operator": "filter", "change": change})]),
                  first, other)  # fmt: skip
    assert ep.ask_idea()
    assert ep.ctx.parent.name == about


def test_a_comparison_word_the_parent_also_uses_does_not_keep_it(tmp_path: Path) -> None:
    """v11's A1 #7: "status code greater than 400" on the real file-permission example ("larger than 1 MiB"),
    the access-log example shown second; "than" kept the idea on the parent, whose solution could only fail."""
    examples = Path(__file__).resolve().parents[3] / "examples" / "terminal"
    first, second = _parent(examples / "audit-file-permissions"), _parent(examples / "log-error-summary")
    change = "Select only the lines where the status code is greater than 400."
    ep = _episode(tmp_path, SchemaModel([json.dumps({**COMBINE_IDEA, "operator": "filter", "change": change})]),
                  first, second)  # fmt: skip
    assert ep.ask_idea()
    assert ep.ctx.parent.name == "log-error-summary"


@pytest.mark.parametrize(
    ("change", "parent"),
    [
        # a recorded demo run: the log paths (and their digits, "app", "1", "2") kept it on the permission task
        (
            "Select only the first line of each status code from /app/logs/access.log, /app/logs/access.log.1, "
            "and /app/logs/access.log.2.gz.",
            "log-error-summary",
        ),
        ("List the world-writable files under /srv/data owned by alice.", "audit-file-permissions"),
        # paths both tasks show (or neither) leave it to the other words
        ("Write the count of lines to /app/count.txt", "audit-file-permissions"),
    ],
)
def test_the_paths_an_idea_names_decide_which_task_it_is_about(tmp_path: Path, change: str, parent: str) -> None:
    examples = Path(__file__).resolve().parents[3] / "examples" / "terminal"
    first, second = _parent(examples / "audit-file-permissions"), _parent(examples / "log-error-summary")
    ep = _episode(tmp_path, SchemaModel([json.dumps({**COMBINE_IDEA, "operator": "filter", "change": change})]),
                  first, second)  # fmt: skip
    assert ep.ask_idea()
    assert ep.ctx.parent.name == parent


def test_a_retry_that_resends_the_failed_script_takes_a_fresh_sample(tmp_path: Path) -> None:
    # v13-v18: 13 of 43 solution replies after the first were the script before them, unchanged
    ep = _episode(tmp_path, ScriptedModel([]), _worked(), None)
    failed = "grep '^404' /app/data/access.log > /app/result.txt\n"
    for attempt, replies, calls_expected in (
        (
            2,
            [failed.strip(), "awk '$4 == 404' /app/data/access.log > /app/result.txt"],
            [(failed, "it failed"), ("", "")],
        ),
        (3, [failed], [("", ""), ("", "")]),  # a fresh sample that is the failed script again: one more
        (2, ["grep ' 404$' /app/data/access.log > /app/result.txt"], [(failed, "it failed")]),  # changed: kept
    ):
        ep.files.solve_sh, calls = failed, []
        answers = iter([*replies, "awk '$4 == 404' /app/data/access.log > /app/result.txt"])

        def ask(previous: str = "", problem: str = "", calls: list = calls, answers=answers) -> None:  # type: ignore[no-untyped-def]
            calls.append((previous, problem))
            ep.files.solve_sh = next(answers)

        ep.retry(ask, attempt, "it failed")
        assert calls == calls_expected
        assert ep.files.solve_sh.strip() != failed.strip()
