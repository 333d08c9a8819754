"""The data stage without Docker: which of the model's lines are appended to the main input file."""

from __future__ import annotations

from pathlib import Path

from autoenvscaling.agent.trajectory import read_trajectory
from autoenvscaling.llm.scripted import ScriptedModel
from autoenvscaling.roles.proposer.domain import domain_context
from autoenvscaling.roles.proposer.staged.config import StagedConfig
from autoenvscaling.roles.proposer.staged.episode import Episode
from autoenvscaling.roles.proposer.staged.parents import load_parent, worked_example
from autoenvscaling.roles.proposer.staged.spec import Idea
from autoenvscaling.roles.proposer.staged.state import StagedContext
from autoenvscaling.roles.proposer.staged.text import appended_line, new_lines
from autoenvscaling.sandbox.fake import FakeBackend

LOG = "10.0.0.1 GET /index.html 200\n10.0.0.2 GET /missing 404\n10.0.0.1 POST /login 500\n10.0.0.3 GET /missing 404\n"
PASSWD = "root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000:Alice:/home/alice:/bin/bash\n"


def _episode(tmp: Path, replies: list[str], change: str, log: str = LOG) -> Episode:
    parent = load_parent(worked_example(domain_context("terminal")))  # type: ignore[arg-type]
    assert parent is not None and parent.data == {"/app/data/access.log": LOG}
    parent.data["/app/data/access.log"] = log
    ctx = StagedContext(domain=domain_context("terminal"), parent=parent)
    ep = Episode(ScriptedModel(replies), FakeBackend(), ctx, StagedConfig(), tmp / "ep", "staged-000", "staged")
    idea = {"operator": "filter", "change": change, "output_file": "/app/out.txt", "compare": "exact"}
    ep.choose(Idea.model_validate({**idea, "new_data": True}))
    return ep


def test_lines_the_file_holds_and_repeats_among_the_new_ones_are_left_out() -> None:
    reply = ["alice:x:1000:1000:Alice:/home/alice:/bin/bash", "bob:x:1001:1001:Bob:/home/bob:/bin/sh"] * 2
    assert new_lines(reply, PASSWD, "the users whose shell is /bin/bash") == ["bob:x:1001:1001:Bob:/home/bob:/bin/sh"]
    # Trailing blanks do not make a copy new; every line of a copy of the file goes.
    assert new_lines(["root:x:0:0:root:/root:/bin/bash  "], PASSWD, "root's line") == []
    assert new_lines(PASSWD.splitlines(), PASSWD, "the users with a home") == []


def test_comments_that_announce_new_lines_are_left_out_even_of_an_idea_about_repeats() -> None:
    reply = ["# new line 1", "new_key1 = v", "# Add new lines to /app/data/app.conf", "// added case", "# a new line"]
    for change in ("the keys of the settings", "the keys that appear more than once"):
        assert new_lines(reply, "# service\nport = 80\n", change) == ["new_key1 = v"]
    # A comment that announces nothing stays, and so does a setting named new.
    kept = ["# logging", "# another service", "new = 1", "#newline"]
    assert new_lines(kept, "# service\n", "the comment lines") == kept


def test_an_idea_about_repeats_keeps_the_copies() -> None:
    copies = LOG.splitlines()[1:2] * 3
    for change in (
        "each request once",
        "the unique paths",
        "the lines that appear more than once",
        "count the 404 requests",
        "how many times each IP occurs",
        "the distinct statuses",
    ):
        assert new_lines(copies, LOG, change) == copies, change


def test_a_data_reply_that_copies_the_file_from_its_top_appends_only_its_new_lines(tmp_path: Path) -> None:
    reply = "```\n" + LOG + "10.0.0.4 GET /admin 403\n```"  # the file again, then one new line
    ep = _episode(tmp_path, [reply], "the requests that were forbidden (status 403)")
    ep.ask_data()
    assert ep.inputs["/app/data/access.log"] == LOG + "10.0.0.4 GET /admin 403"
    assert ep.added_lines() == ["10.0.0.4 GET /admin 403"]
    steps = read_trajectory(ep.episode_dir / "trajectory.json").steps
    notes = [s.message for s in steps if (s.extra or {}).get("harness")]
    assert "4 of the 5 lines left out: lines of /app/data/access.log, or comments" in notes


def test_a_data_reply_of_copies_only_leaves_the_file_as_the_parent_holds_it(tmp_path: Path) -> None:
    first = "```\n10.0.0.9 GET /x 500\n```"
    again = "```\n10.0.0.1 POST /login 500\n10.0.0.1 POST /login 500\n```"  # a case the file holds, twice
    ep = _episode(tmp_path, [first, again], "the requests of status 500")
    ep.ask_data()
    assert ep.added_lines() == ["10.0.0.9 GET /x 500"]
    ep.ask_data("output-empty")  # asked again: the new reply replaces the lines asked before
    assert ep.added_lines() == [] and ep.inputs["/app/data/access.log"] == LOG


def test_a_data_reply_for_an_idea_about_repeats_is_appended_whole(tmp_path: Path) -> None:
    reply = "```\n10.0.0.2 GET /missing 404\n10.0.0.2 GET /missing 404\n```"
    ep = _episode(tmp_path, [reply], "the paths requested more than once, with their counts")
    ep.ask_data()
    assert ep.added_lines() == ["10.0.0.2 GET /missing 404"] * 2


def test_a_shell_command_that_appends_a_line_is_read_as_that_line() -> None:
    user = "new_user:x:1008:1008:New User:/home/new_user:/bin/bash"
    assert appended_line(f'echo "{user}" >> /app/data/passwd') == user
    assert appended_line(f"  echo '{user}' >>/app/data/passwd ") == user
    assert appended_line(f"echo -e {user} >> passwd") == user
    assert appended_line("printf 'port = 9090\\n' >> /app/data/app.conf") == "port = 9090"
    for line in (user, "# echo lines", "echo hello", 'echo "a" | tee x', "cat x >> y", 'grep "a" >> out'):
        assert appended_line(line) is None, line


def test_a_data_reply_of_echo_commands_appends_their_lines(tmp_path: Path) -> None:
    reply = (
        "```bash\n# Append new lines to /app/data/access.log\n"
        'echo "10.0.0.4 GET /admin 403" >> /app/data/access.log\n'
        "echo '10.0.0.2 GET /missing 404' >> /app/data/access.log\n"  # a line the file holds
        "10.0.0.5 GET /secret 403\n```"
    )
    ep = _episode(tmp_path, [reply], "the requests that were forbidden (status 403)")
    ep.ask_data()
    assert ep.added_lines() == ["10.0.0.4 GET /admin 403", "10.0.0.5 GET /secret 403"]
    steps = read_trajectory(ep.episode_dir / "trajectory.json").steps
    notes = [s.message for s in steps if (s.extra or {}).get("harness")]
    assert "2 shell commands that append a line read as that line" in notes


def test_echo_commands_stay_as_they_are_in_a_file_that_holds_such_commands(tmp_path: Path) -> None:
    reply = '```\necho "done" >> /var/log/setup.log\n```'
    ep = _episode(tmp_path, [reply], "the commands that write to a log", log='echo "start" >> /var/log/setup.log\n')
    ep.ask_data()
    assert ep.added_lines() == ['echo "done" >> /var/log/setup.log']
