"""The staged proposer's pure parts: reply parsing, output paths, the generated tests' comparison, parents."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from autoenvscaling.roles.proposer.domain import domain_context
from autoenvscaling.roles.proposer.novelty import grading_text
from autoenvscaling.roles.proposer.staged.calls import fenced_or_plain, parse_json, plain_markdown, prose_of
from autoenvscaling.roles.proposer.staged.giveaway import (
    answer_in_instruction,
    quoted_output_lines,
    restated_field,
    solution_in_instruction,
    without_quoted_output,
)
from autoenvscaling.roles.proposer.staged.grading import matches
from autoenvscaling.roles.proposer.staged.parents import (
    copied_files,
    load_parent,
    pack_parents,
    parent_candidates,
    solution_lines,
    worked_example,
)
from autoenvscaling.roles.proposer.staged.record import (
    OUTPUT_BINARY,
    OUTPUT_COPIES_INPUT,
    OUTPUT_EMPTY,
    OUTPUT_FILE_PREFIX,
    OUTPUT_IN_IMAGE,
    OUTPUT_MISSING,
    OUTPUT_OVERWRITTEN,
    OUTPUT_TOO_LARGE,
    OUTPUT_WITHOUT_DATA,
    SOLUTION_FAILED,
    SolutionRun,
    data_free,
    describe_run,
    file_prefix,
    header_only,
    mechanical_problem,
    sha256_text,
)
from autoenvscaling.roles.proposer.staged.render import is_recorded, write_draft
from autoenvscaling.roles.proposer.staged.spec import (
    Decision,
    DraftFiles,
    Expectation,
    Idea,
    idea_schema,
    safe_output_path,
)
from autoenvscaling.roles.proposer.staged.text import (
    findings_from_digest,
    input_order_source,
    looks_like_prose,
    order_sentence,
    with_format_hint,
    with_order_hint,
)


def test_fenced_or_plain_takes_the_first_block_and_survives_an_unclosed_fence() -> None:
    assert fenced_or_plain("Here:\n```bash\necho hi > /app/x\n```\nand ```more```") == "echo hi > /app/x"
    assert fenced_or_plain("```\na,b\n1,2") == "a,b\n1,2"  # cut off by max_tokens
    assert fenced_or_plain("instruction.md:\nSort /app/data/x.") == "Sort /app/data/x."


def test_parse_json_skips_objects_that_do_not_validate() -> None:
    text = 'noise {"x": 1} then {"decision": "fix_data", "reason": "too few lines"}'
    assert parse_json(text, Decision) == Decision(decision="fix_data", reason="too few lines")
    assert parse_json("no json here", Decision) is None


@pytest.mark.parametrize(
    ("given", "want"),
    [
        ("/app/result.txt", "/app/result.txt"),
        ("result.txt", "/app/result.txt"),
        ("/tmp/out.txt", "/app/out.txt"),
        ("`/app/a-b_c.csv`", "/app/a-b_c.csv"),
        ("/app/../../etc/passwd", "/app/passwd"),
        ("/app/data", None),
        ("/app/", None),
        ("/app/.hidden", None),
    ],
)
def test_outputs_are_plain_files_directly_under_app(given: str, want: str | None) -> None:
    assert safe_output_path(given) == want


def test_idea_schema_constrains_every_choice() -> None:
    schema = idea_schema(3)
    assert schema["properties"]["operator"]["enum"][0] == "filter"
    assert schema["properties"]["finding"]["enum"] == [-1, 0, 1, 2]
    assert "finding" not in idea_schema(0)["properties"]
    assert set(schema["required"]) == set(schema["properties"])


@pytest.mark.parametrize(
    ("got", "want", "compare", "ok"),
    [
        ("404 2\n500 1\n", "404 2\n500 1", "exact", True),
        ("404 2  \n500 1\n\n", "404 2\n500 1\n", "exact", True),
        ("404\t2\n 500   1\n", "404 2\n500 1\n", "exact", True),
        ("500 1\n404 2\n", "404 2\n500 1\n", "exact", False),
        ("500 1\n404 2\n", "404 2\n500 1\n", "sorted_lines", True),
        ("total 3.0000001\n", "total 3\n", "numeric", True),
        ("total 3.1\n", "total 3\n", "numeric", False),
        ("sum 3\n", "total 3\n", "numeric", False),
        ("200 3\n404 1.0\n", "200 3\n404 1\n", "numeric", True),
        ("200 3 404 1\n", "200 3\n404 1\n", "numeric", False),
        ("200\n3\n404\n1\n", "200 3\n404 1\n", "numeric", False),
        ("", "x\n", "exact", False),
        ("host\nport\n", "host\n\nport\n", "exact", True),  # an empty line counts nowhere
        ("\nhost\n \nport\n", "host\nport\n", "numeric", True),
        ("host\n\n", "host\nport\n", "sorted_lines", False),
        ("\n\n", "x\n", "sorted_lines", False),
    ],
)
def test_generated_tests_compare_as_declared(got: str, want: str, compare: str, ok: bool) -> None:
    assert matches(got, want, compare) is ok


def _run(**kw: object) -> SolutionRun:
    base: dict[str, object] = {"exit_code": 0, "outputs": {"/app/out.txt": "3\n"}, "sizes": {"/app/out.txt": 2}}
    return SolutionRun.model_validate(base | kw)


@pytest.mark.parametrize(
    ("run", "check"),
    [
        (_run(exit_code=2, stderr_tail="awk: syntax error"), SOLUTION_FAILED),
        (_run(timed_out=True, exit_code=-1), SOLUTION_FAILED),
        (_run(outputs={"/app/out.txt": None}), OUTPUT_MISSING),
        (_run(outputs={"/app/out.txt": " \n"}), OUTPUT_EMPTY),
        (_run(sizes={"/app/out.txt": 10**7}), OUTPUT_TOO_LARGE),
        (_run(outputs={"/app/out.txt": "404\n\x1f\ufffd\x08\ufffdK\n"}), OUTPUT_BINARY),  # a .gz read as text
        (_run(outputs={"/app/out.txt": "a\tb\r\n\x0cc d\n"}), None),  # tabs, CRLF and a form feed are text
        (_run(outputs={"/app/out.txt": "a\nb\n"}), OUTPUT_COPIES_INPUT),
        (_run(preexisting=["/app/out.txt"]), OUTPUT_IN_IMAGE),
        (_run(image_hashes={sha256_text("3\n")}), OUTPUT_IN_IMAGE),
        (_run(), None),
    ],
)
def test_each_guard_names_its_check(run: SolutionRun, check: str | None) -> None:
    problem = mechanical_problem(run, {"in.txt": "a\nb"})
    assert (problem[0] if problem else None) == check


@pytest.mark.parametrize(
    ("text", "check"),
    [
        ("a 200\nb 404\nc 500\n", OUTPUT_COPIES_INPUT),  # cat log log.1
        ("c 500\na 200\nb 404\n", OUTPUT_COPIES_INPUT),  # cat log.1 log
        ("b 404\nc 500\n", None),  # a filter that kept the 4xx and 5xx lines
        ("a 200\nc 500\nb 404\n", None),  # the lines reordered: not the inputs as they are
    ],
)
def test_inputs_joined_as_they_are_are_a_copy(text: str, check: str | None) -> None:
    run = _run(outputs={"/app/out.txt": text}, sizes={"/app/out.txt": len(text)})
    problem = mechanical_problem(run, {"/app/log": "a 200\nb 404\n", "/app/log.1": "c 500\n"})
    assert (problem[0] if problem else None) == check
    if problem:
        assert "joined" in problem[1]


CUT_LOG = {
    "/app/log": '10.0.0.1 - - [05/Mar/2024:00:13:50] "GET /a HTTP/1.1" 404 512\n'
    '10.0.0.2 - - [05/Mar/2024:00:14:02] "PUT /b HTTP/1.1" 500 12\n'
}


@pytest.mark.parametrize(
    ("text", "flagged"),
    [
        # yield series v12 #5: `grep -oE '^... "[^"]*" [4-9][0-9]'`, every line ends inside the status code
        (
            '10.0.0.1 - - [05/Mar/2024:00:13:50] "GET /a HTTP/1.1" 40\n'
            '10.0.0.2 - - [05/Mar/2024:00:14:02] "PUT /b HTTP/1.1" 50\n',
            True,
        ),
        ('10.0.0.1 - - [05/Mar/2024:00:13:50] "GET /a HTTP/1.1" 404\n', False),  # ends where the field ends
        ("10.0.0.1\n10.0.0.2\n", False),  # a real extraction: the IPs
        ("10.0.0\n10.0.0\n", False),  # one field cut: too little to tell from a deliberate piece
        ('GET /a HTTP/1.1" 40\nsomething else entirely\n', True),  # one cut line of two
        ('GET /a HTTP/1.1" 40\nx y z\nsomething else entirely\n', False),  # one of three
    ],
)
def test_lines_cut_inside_a_field_are_found(text: str, flagged: bool) -> None:
    from autoenvscaling.roles.proposer.staged.record import OUTPUT_CUTS_FIELDS, cut_field

    piece = cut_field(text, CUT_LOG)
    assert (piece is not None) == flagged
    problem = mechanical_problem(_run(outputs={"/app/out.txt": text}), CUT_LOG)
    assert (problem[0] if problem else None) == (OUTPUT_CUTS_FIELDS if flagged else None)
    if piece:
        assert piece[1] in CUT_LOG["/app/log"] and piece[0] in piece[1]


@pytest.mark.parametrize(
    ("text", "flagged"),
    [
        ("+0000]\n+0000]\n+0000]\nto\n+0000]\n", True),  # v14 #2: the time zone, the same on every log line
        ("10.0.0.1\n10.0.0.1\n10.0.0.1\n", False),  # one IP, but not every input line's
        ("+0000]\nto\nx\n", False),  # one line of three
        ("GET\nGET\n", False),  # two lines: too few to tell
    ],
)
def test_a_field_every_input_line_holds_is_no_answer(text: str, flagged: bool) -> None:
    from autoenvscaling.roles.proposer.staged.record import OUTPUT_CONSTANT_FIELD

    log = "".join(f'10.0.0.{i % 3} - - [05/Mar/2024:00:1{i}:50 +0000] "GET /x HTTP/1.1" 200 1\n' for i in range(9))
    log += '10.0.0.1 - - [05/Mar/2024:00:19:50 +0000] "GET /y HTTP/1.1" 404 1\n'
    problem = mechanical_problem(_run(outputs={"/app/out.txt": text}), {"/app/log": log}, "awk '{print $5}' /app/log")
    assert (problem[0] if problem else None) == (OUTPUT_CONSTANT_FIELD if flagged else None)


@pytest.mark.parametrize(
    ("text", "solve", "flagged"),
    [
        # yield series v13 #10: uniq -c over whole log lines, then only the IP printed: every count is 1
        (
            "10.0.0.112 1\n10.0.0.112 1\n10.0.0.112 1\n10.0.0.19 1\n",
            "grep x /a | sort | uniq -c | awk '{print $2, $1}'",
            True,
        ),
        ("404 3\n500 2\n", "awk '{print $4}' /a | sort | uniq -c", False),
        ("10.0.0.1\n10.0.0.1\n10.0.0.1\n", "awk '$4 == 404 {print $1}' /a", False),  # no count: repeats are data
        ("a 1\na 1\nb 2\n", "sort /a | uniq --count", False),  # twice: not enough to tell
        # v16 #15: "the status codes with their counts", a 1 printed per line and never summed
        ("404 1\n500 1\n404 1\n404 1\n500 1\n404 1\n", "awk '$4 >= 400 {print $4, 1}' /a", True),
        ("404 1\n404 1\n404 1\n500 2\n", "awk '{print $4, $5}' /a", False),  # a field that is not 1 throughout
        ("GET 1.1\nGET 1.1\nGET 1.1\n", "awk '{print $2, $3}' /a", False),  # no count, and no field of 1
    ],
)
def test_a_count_that_lists_one_line_three_times_is_found(text: str, solve: str, flagged: bool) -> None:
    from autoenvscaling.roles.proposer.staged.record import OUTPUT_REPEATS_COUNTS

    problem = mechanical_problem(_run(outputs={"/app/out.txt": text}), {"/a": "x"}, solve)
    assert (problem[0] if problem else None) == (OUTPUT_REPEATS_COUNTS if flagged else None)


@pytest.mark.parametrize(
    ("text", "prefix"),
    [
        ("/app/logs/a.log:1.2.3.4 GET 500\n/app/logs/a.log.1:1.2.3.5 GET 500\n", "/app/logs/a.log"),
        ("      2 logs/a.log.1:1.2.3.4 GET\n      1 logs/a.log.1:1.2.3.5 GET\n", "logs/a.log.1"),  # uniq -c
        ("1.2.3.4 GET 500\n/app/logs/a.log:1.2.3.5 GET 500\n9.9.9.9 x\n", None),  # one line of three
        ("1.2.3.9 GET 500\n", None),
        ("data: 3\nmeta: 4\n", None),  # a word ending in an input's name is no path
    ],
)
def test_lines_that_start_with_an_input_files_name_are_found(text: str, prefix: str | None) -> None:
    inputs = {"/app/logs/a.log": "1.2.3.4 GET 500\n", "/app/logs/a.log.1": "1.2.3.5 GET 500\n", "/app/a": "x"}
    assert file_prefix(text, inputs) == prefix
    run = _run(outputs={"/app/out.txt": text})
    problem = mechanical_problem(run, inputs)
    assert (problem[0] if problem else None) == (OUTPUT_FILE_PREFIX if prefix else None)
    assert problem is None or "grep -h" in problem[1]


@pytest.mark.parametrize(
    ("text", "flagged"),
    [
        ("total \n", True),  # awk's END line of a rule that matched nothing
        ("-\n-\n-\n", True),  # a field that is "-" on every line: no word at all
        ("0\n", True),
        ("total 7\n", False),  # a count came from the data
        ("10.0.0.2 GET /missing 404\n", False),
        ("GET\nPUT\n", False),  # words of the input the script does not name
    ],
)
def test_an_output_made_of_the_scripts_own_words_is_found(text: str, flagged: bool) -> None:
    solve_sh = (
        'awk \'$3 >= 400 && $2 == "GET" {n++; print $3} END {print "total", n}\' /app/data/access.log > /app/out.txt'
    )
    assert data_free(text, solve_sh) is flagged
    problem = mechanical_problem(_run(outputs={"/app/out.txt": text}), {"/app/data/access.log": "x"}, solve_sh)
    assert (problem[0] if problem else None) == (OUTPUT_WITHOUT_DATA if flagged else None)
    assert mechanical_problem(_run(outputs={"/app/out.txt": text}), {"/app/data/access.log": "x"}) is None


SALES = "date,region,product,units\n2026-01-03,north,widget,4\n2026-01-04,south,gadget,12\n"


@pytest.mark.parametrize(
    ("text", "solve_sh", "flagged"),
    [
        ("date,region,product,units\n", "awk -F, '$4 > 10' {i} > /app/out.txt", True),  # no row above 10
        ("date,region,product,units\n\n", "awk -F, '$4 > 20' {i} > /app/out.txt", True),
        ("date,region,product,units\n2026-01-04,south,gadget,12\n", "awk -F, '$4 > 10' {i} > /app/out.txt", False),
        ("2026-01-04,south,gadget,12\n", "awk -F, 'NR > 1 && $4 > 10' {i} > /app/out.txt", False),
        ("date,region,product,units\n", "head -1 {i} > /app/out.txt", False),  # the header asked for
        ("date,region,product,units\n", "awk -F, 'NR==1' {i} > /app/out.txt", False),
    ],
)
def test_an_output_that_is_an_inputs_header_alone_is_found(text: str, solve_sh: str, flagged: bool) -> None:
    inputs = {"/app/data/sales.csv": SALES}
    solve_sh = solve_sh.format(i="/app/data/sales.csv")
    assert (header_only(text, inputs, solve_sh) == "/app/data/sales.csv") is flagged
    problem = mechanical_problem(_run(outputs={"/app/out.txt": text}), inputs, solve_sh)
    assert (problem[0] if problem else None) == (OUTPUT_WITHOUT_DATA if flagged else None)
    if flagged:
        assert problem is not None and "only the header line of /app/data/sales.csv" in problem[1]


def test_a_first_line_that_is_no_header_is_not_flagged() -> None:
    log = "10.0.0.1 GET /index.html 200\n10.0.0.2 GET /missing 404\n"  # a first line with digits: a row
    assert header_only("10.0.0.1 GET /index.html 200\n", {"/app/data/access.log": log}, "grep 200 x") is None
    conf = "# service\nhost = 0.0.0.0\nport = 8080\n"  # a first line without columns
    assert header_only("# service\n", {"/app/data/app.conf": conf}, "grep -m1 '#' x") is None
    names = "name,role\nalice,admin\n"  # no row with digits: nothing tells a header from a row
    assert header_only("name,role\n", {"/app/data/users.csv": names}, "grep name x") is None


def test_a_pipeline_that_read_a_missing_file_failed_even_when_it_exited_0() -> None:
    """v11's A1 #0: ``cat a /app/logs/access.log.1 | grep | sort`` exited 0 without the second file, and its
    instruction named that file: no blind solver could make the recorded output."""
    stderr = "cat: /app/logs/access.log.1: No such file or directory"
    problem = mechanical_problem(_run(stderr_tail=stderr, outputs={"/app/out.txt": "x 404\n"}), {})
    assert problem is not None and problem[0] == SOLUTION_FAILED and stderr in problem[1]
    assert mechanical_problem(_run(stderr_tail="sort: warning", outputs={"/app/out.txt": "x 404\n"}), {}) is None


@pytest.mark.parametrize(
    ("solve_sh", "flagged"),
    [
        # v11's A1 #4: the second find replaced the first one's lines
        ("find /srv -perm -o+w > /app/out.txt\nfind /srv -user backup > /app/out.txt\n", True),
        ("grep a x > '/app/out.txt'\ngrep b x >| /app/out.txt", True),
        ("find /srv -perm -o+w > /app/out.txt\nfind /srv -user backup >> /app/out.txt\n", False),
        ("# old: sort x > /app/out.txt\nsort -u x > /app/out.txt\n", False),
        ("if [ -s x ]; then sort x > /app/out.txt; else echo none > /app/out.txt; fi", False),
        ("sort x > /app/out.txt.tmp\nuniq /app/out.txt.tmp > /app/out.txt", False),
    ],
)
def test_an_output_written_twice_with_a_truncating_redirect_is_found(solve_sh: str, flagged: bool) -> None:
    problem = mechanical_problem(_run(outputs={"/app/out.txt": "/srv/a\n"}), {"/app/data/x": "y"}, solve_sh)
    assert (problem[0] if problem else None) == (OUTPUT_OVERWRITTEN if flagged else None)


def test_the_observation_shows_exit_errors_and_output_heads() -> None:
    run = _run(exit_code=1, stderr_tail="grep: /app/x: No such file", outputs={"/app/out.txt": None})
    text = describe_run(run)
    assert "exit code 1" in text and "No such file" in text and "/app/out.txt: MISSING" in text


def test_a_rendered_draft_is_a_recorded_harbor_task(tmp_path: Path) -> None:
    parent = worked_example(domain_context("terminal"))
    assert parent is not None
    files = DraftFiles(data={"data/access.log": "1 GET / 404"}, instruction="Count.", solve_sh="wc -l < x > /app/n.txt")
    exp = [Expectation(path="/app/n.txt", expected="1-n.txt", compare="numeric")]
    dest = write_draft(
        tmp_path / "t",
        parent=parent,
        files=files,
        name="count",
        description="Count.",
        category="terminal",
        outputs=["/app/n.txt"],
        expectations=exp,
        expected={"/app/n.txt": "1\n"},
    )
    assert is_recorded(dest) and not is_recorded(parent)
    assert (dest / "solution" / "solve.sh").read_text().startswith("#!/bin/bash\n")
    assert (dest / "environment" / "data" / "access.log").read_text() == "1 GET / 404\n"
    assert json.loads((dest / "tests" / "expectations.json").read_text())[0]["compare"] == "numeric"
    assert (dest / "tests" / "expected" / "1-n.txt").read_text() == "1\n"
    # Novelty compares the recorded outputs and the solution, not the comparison code every task shares.
    assert "def matches" not in grading_text(dest) and "wc -l" in grading_text(dest)


STARTERS = ["app-config", "passwd-shells", "sales-csv"]


def test_parents_come_from_the_pool_then_the_pack_then_the_examples(tmp_path: Path) -> None:
    domain = domain_context("terminal")
    pooled = worked_example(domain)
    assert pooled is not None
    names = [p.name for p in parent_candidates(domain, [tmp_path / "missing", pooled])]
    assert names[:2] == ["worked-example", "worked-example"]
    assert names[2:5] == STARTERS
    assert names[5:] == [e.name for e in domain.examples]
    parent = load_parent(pooled)
    assert parent is not None and parent.main_input == "/app/data/access.log"
    assert "404" in parent.inputs["/app/data/access.log"]
    assert parent.sources == {"/app/data/access.log": "data/access.log"}


def test_findings_say_what_failed_first() -> None:
    class D:
        def __init__(self, task: str, solved: bool) -> None:
            self.task, self.solved, self.commands, self.exit_reason = task, solved, 3, "max_turns"
            self.failed_commands: list[object] = []

    assert findings_from_digest([D("a", False), D("b", True)]) == ["failed a (max_turns)", "solved b in 3 commands"]


def test_an_idea_is_one_line() -> None:
    idea = Idea(operator="filter", change="Count\n  the 404s", output_file="/app/n.txt")
    assert idea.change == "Count the 404s" and idea.compare == "exact"


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("/app/data/access.log has one request per line. Write /app/errors.txt with one line per status.", True),
        ("Count the 404 requests in /app/data/access.log and write the number to /app/n.txt.", True),
        ("/app/data/access.log > /app/success_access.log", False),
        ("awk '{print $1}' /app/data/access.log | sort | uniq -c > /app/out.txt and more words here", False),
        ("#!/bin/bash\ngrep -c 404 /app/data/access.log > /app/n.txt # count the requests please now", False),
    ],
)
def test_an_instruction_must_read_as_prose(text: str, ok: bool) -> None:
    assert looks_like_prose(text) is ok


def test_inputs_are_the_files_the_dockerfile_copies(tmp_path: Path) -> None:
    env = tmp_path / "environment"
    (env / "logs").mkdir(parents=True)
    (env / "logs" / "a.log").write_text("x\n")
    (env / "seed.csv").write_text("k,v\n")
    dockerfile = (
        "FROM autoenv/terminal:latest\nWORKDIR /app\nCOPY logs/ /app/logs/\nCOPY seed.csv data/\nCOPY ../x /y\n"
    )
    assert copied_files(env, dockerfile) == {"/app/logs/a.log": "logs/a.log", "/app/data/seed.csv": "seed.csv"}
    # a file the image compresses is the .gz file (its text stays the source's): log-error-summary's rotation
    (env / "logs" / "a.log.1").write_text("y\n")
    gz = "FROM x\nWORKDIR /app\nCOPY logs/ /app/logs/\nRUN gzip -n /app/logs/a.log.1 && gzip -c logs/a.log > /tmp/z\n"
    assert copied_files(env, gz) == {"/app/logs/a.log": "logs/a.log", "/app/logs/a.log.1.gz": "logs/a.log.1"}
    kept = copied_files(env, "FROM x\nWORKDIR /app/logs\nCOPY logs/ /app/logs/\nRUN gzip -k a.log; gzip -d b.gz\n")
    assert kept == {
        "/app/logs/a.log": "logs/a.log",
        "/app/logs/a.log.gz": "logs/a.log",
        "/app/logs/a.log.1": "logs/a.log.1",
    }


@pytest.mark.parametrize(
    ("instruction", "leaks"),
    [
        ("Write the number of 404 lines to /app/n.txt.", False),
        ("Write 404 2 and 500 1 to /app/e.txt.", False),  # short lines: cannot tell a leak from a spec
        ("List the paths, e.g. /srv/data/a/report.txt and /srv/data/b/report.txt, in /app/p.txt.", True),
        ("Write exactly: total requests served today in /app/t.txt", True),
    ],
)
def test_an_instruction_must_not_hold_the_recorded_answer(instruction: str, leaks: bool) -> None:
    outputs = {
        "/app/p.txt": "/srv/data/a/report.txt\n/srv/data/b/report.txt\n/srv/data/c/report.txt\n",
        "/app/t.txt": "total requests served today\n",
        "/app/e.txt": "404 2\n500 1\n",
    }
    assert (answer_in_instruction(instruction, outputs) is not None) is leaks


def test_one_line_quoted_is_no_leak_however_often_the_output_repeats_it() -> None:
    # yield series v16 #17: `grep -o` of the quoted pattern; the answer is how many lines there are
    outputs = {"/app/errors.txt": "GET /admin HTTP/1.1\n" * 4}
    instruction = 'Save each occurrence of the string "GET /admin HTTP/1.1" in /app/logs/a.log to /app/errors.txt.'
    assert answer_in_instruction(instruction, outputs) is None
    assert quoted_output_lines(instruction, outputs) == {"/app/errors.txt": ["GET /admin HTTP/1.1"]}


ACCESS_LOG = (
    "10.0.0.1 GET /index.html 200\n10.0.0.2 GET /missing 404\n10.0.0.1 POST /login 500\n10.0.0.3 GET /missing 404\n"
)


@pytest.mark.parametrize(
    ("instruction", "field"),
    [
        # a flywheel round on e5c6de5: each line's status code, in order; the tests wanted those above 400
        (
            "Write the status codes above 400 to /app/r.txt.\n- The first line contains a status code (200).\n"
            "- The second line contains a status code (404).\n- The third line (500).\n- The fourth line (404).",
            4,
        ),
        ("Count the clients. The lines come from `10.0.0.1`, `10.0.0.2`, `10.0.0.1` and `10.0.0.3`.", 1),
        ("The paths requested are /index.html, /missing, /login, /missing.", 3),
        # not in the input's order, or not every line: the instruction names values, it does not restate the log
        ("Keep the lines with status 404 or 500 and drop those with 200.", None),
        ("Count the requests from 10.0.0.1, 10.0.0.2 and 10.0.0.3.", None),
        ("Write the status codes of /app/a.log (200, 404, 500) that are above 400 to /app/r.txt.", None),
    ],
)
def test_an_instruction_must_not_restate_the_input_line_by_line(instruction: str, field: int | None) -> None:
    found = restated_field(instruction, {"/app/a.log": ACCESS_LOG})
    assert (found is None) if field is None else (found is not None and f"field {field} of each line" in found)


def test_a_restated_field_needs_three_lines_and_two_values() -> None:
    instruction = "The codes are 200, 404, 500 and 404; the methods GET, GET, GET."
    assert restated_field(instruction, {"/app/a.log": "a 200\nb 404\n"}) is None  # two lines
    assert restated_field(instruction, {"/app/a.log": "GET 1\nGET 2\nGET 3\n"}) is None  # one value
    # a CSV's header row may go unsaid
    csv = "name,status\na,200\nb,404\nc,500\nd,404\n"
    assert "field 2 of each line of /app/a.csv" in (restated_field(instruction, {"/app/a.csv": csv}) or "")


@pytest.mark.parametrize(
    ("instruction", "cut"),
    [
        # an example block, from its heading on, with the fragment a token limit left after it
        (
            "Write the lines of /app/a.log whose path is /missing to /app/r.txt, in input order.\n\n**Example**\n"
            "**Input**\n`10.0.0.1 GET /index.html 200`\n`10.0.0.2 GET /missing 404`\n**Output**\n"
            "`10.0.0.2 GET /missing 404`\n`10.0.0.3 GET /missing 404`\n`10.0",
            "Write the lines of /app/a.log whose path is /missing to /app/r.txt, in input order.",
        ),
        # copied lines between two parts of the rule: the lines go, the prose after them stays
        (
            "Keep the lines of /app/a.log whose path is /missing, for instance\n10.0.0.2 GET /missing 404\n"
            "10.0.0.3 GET /missing 404\nand write them to /app/r.txt in the order of the input file.",
            "Keep the lines of /app/a.log whose path is /missing, for instance\n"
            "and write them to /app/r.txt in the order of the input file.",
        ),
        # the copies are the whole sentence: nothing is left
        ("Write 10.0.0.2 GET /missing 404 and 10.0.0.3 GET /missing 404 to /app/r.txt.", None),
    ],
)
def test_copied_output_lines_are_cut_when_prose_is_left(instruction: str, cut: str | None) -> None:
    outputs = {"/app/r.txt": "10.0.0.2 GET /missing 404\n10.0.0.3 GET /missing 404\n"}
    assert answer_in_instruction(instruction, outputs) is not None
    assert without_quoted_output(instruction, outputs) == cut


def test_a_format_example_is_one_line_of_a_longer_output() -> None:
    many = {"/app/e.txt": "404\n500\n404\n"}
    assert with_format_hint("Do it.", "/app/e.txt", many, "exact") == (
        "Do it.\n/app/e.txt holds 3 lines; the first reads, for example: `404`"
    )
    assert "holds 3 lines; one of them reads" in with_format_hint("Do it.", "/app/e.txt", many, "sorted_lines")
    # A shorter output gets the shape of its lines: the kinds of its values, none of the values.
    assert with_format_hint("Do it.", "/app/e.txt", {"/app/e.txt": "2\n"}, "exact") == (
        "Do it.\n/app/e.txt holds one line of the form `<number>`."
    )
    two = {"/app/e.txt": "200 2\n404  4\n"}
    assert with_format_hint("Do it.", "/app/e.txt", two, "exact") == (
        "Do it.\n/app/e.txt holds 2 lines, each of the form `<number> <number>`."
    )
    mixed = {"/app/e.txt": "total: 12\nmean 0.5 ms\n"}
    assert with_format_hint("Do it.", "/app/e.txt", mixed, "exact").endswith(
        "of the forms `<word> <number>` and `<word> <decimal> <word>`."
    )
    assert with_format_hint("Do it.", "/app/e.txt", {"/app/e.txt": ""}, "exact") == "Do it."


def test_a_format_example_that_gives_the_output_away_becomes_a_shape() -> None:
    # The addresses 10.0.0.1 to 10.0.0.8: the first line and the count let a solver write them unread (2242af9).
    counted = {"/app/e.txt": "".join(f"10.0.0.{i}\n" for i in range(1, 9))}
    assert with_format_hint("Do it.", "/app/e.txt", counted, "exact") == (
        "Do it.\n/app/e.txt holds 8 lines, each of the form `<number>.<number>.<number>.<number>`."
    )
    same = {"/app/e.txt": "ok\nok\nok\n"}  # one line n times
    assert with_format_hint("Do it.", "/app/e.txt", same, "exact") == (
        "Do it.\n/app/e.txt holds 3 lines, each of the form `<word>`."
    )
    mixed = {"/app/e.txt": "1\n2\n3\nx 4\n"}  # a line that does not count on: the first line gives nothing away
    assert with_format_hint("Do it.", "/app/e.txt", mixed, "exact") == (
        "Do it.\n/app/e.txt holds 4 lines; the first reads, for example: `1`"
    )
    assert with_format_hint("Do it.", "/app/e.txt", {"/app/e.txt": "1\n2\n3\n"}, "exact") == (
        "Do it.\n/app/e.txt holds 3 lines, each of the form `<number>`."
    )


def test_a_line_shape_keeps_punctuation_and_hides_every_value() -> None:
    from autoenvscaling.roles.proposer.staged.text import line_shape

    assert (
        line_shape("10.0.0.1 | -3 | 1e5 | GET") == "<number>.<number>.<number>.<number> | <number> | <decimal> | <word>"
    )
    assert line_shape("2024-01-02 12:30 v1.2 /a/b") == "<number>-<number>-<number> <number>:<number> <word> <word>"


def test_script_references_are_the_inputs_words_and_thresholds_a_solver_must_be_told() -> None:
    from autoenvscaling.roles.proposer.staged.references import script_references, unnamed_references, with_references

    script = (
        "#!/bin/bash\n# read /etc/ignored\nmkdir -p /app/out\n"
        "find /srv/data -type f | while read f; do\n"
        '  [ "$(stat -c \'%U\' "$f")" == "backup" ] && echo "$f" >> /app/out.txt\ndone\n'
        "awk 'NR > 1 && $4 >= 400' /app/data/access.log | grep -v 'run' > /dev/null 2>&1 | tee -a /tmp/x\n"
    )
    assert script_references(script, "/app/out.txt") == ["/srv/data", "/app/data/access.log", "backup", "run", "400"]
    told = "Under /srv/data, list the files owned by backup; use /app/data/access.log with status 4000."
    assert unnamed_references(told, script, "/app/out.txt") == ["run", "400"]  # 4000 is not 400
    # a value inside a path names nothing (v13 #18: the rule was only in /app/status_over_400.txt's name)
    over = "awk '$4 > 400' /app/data/access.log > /app/status_over_400.txt"
    assert unnamed_references("Read /app/data/access.log, write /app/status_over_400.txt.", over, "/x") == ["400"]
    assert unnamed_references("Keep status over 400 of /app/data/access.log.", over, "/x") == []
    # a quoted number is a value too (a flywheel round on 92d3dfb: `grep '500'`, and 500 only in the output's name)
    grep = "grep '500' /app/data/access.log > /app/error_500.txt\nawk '$1 == \"10.0.0.1\"' /app/a.log > /app/b"
    assert script_references(grep, "/app/error_500.txt") == ["/app/data/access.log", "/app/a.log", "500", "10.0.0.1"]
    told = "Keep the lines of /app/data/access.log that hold 500, and those of /app/a.log from 10.0.0.1."
    assert unnamed_references("Copy /app/data/access.log to /app/error_500.txt.", grep, "/x") == [
        "/app/a.log",
        "500",
        "10.0.0.1",
    ]
    assert unnamed_references(told, grep, "/x") == []
    # each word of a quoted alternation is a value (a flywheel round on 4bb2b04: `grep -E '404|500'`, and only 404
    # in the instruction), basic-regex `\|` too; a value in a bare file name names nothing, as in a path
    either = "grep -E '404|500' /app/a.log > /app/r\ngrep 'GET\\|PUT' /app/a.log >> /app/r"
    assert script_references(either, "/app/r") == ["/app/a.log", "404", "500", "GET", "PUT"]
    assert unnamed_references("Keep the 404 lines of /app/a.log, GET or PUT.", either, "/app/r") == ["500"]
    named = "Write the lines of /app/a.log to errors_404.txt or errors_500.log, GET and PUT alike."
    assert unnamed_references(named, either, "/app/r") == ["404", "500"]
    assert unnamed_references("Keep status 404 or 500 (GET, PUT) of /app/a.log.", either, "/app/r") == []
    assert with_references("Do it.", ["/srv/data", "run"]) == (
        "Do it.\nThe input is in /srv/data. The rule uses these values: `run`."
    )
    assert with_references("Do it.", []) == "Do it."
    # a file the script writes is no input where it is read back either
    # v14 P1 #0 was told "The inputs are in /index/d, ...": a sed program is no path; what it matches is a value
    assert script_references("sed '/index/d' /app/a.log > /app/r", "/app/r") == ["/app/a.log", "index"]
    assert script_references("sed -n '/GET/p; /PUT/p' /app/a.log > /app/r", "/app/r") == ["/app/a.log", "GET", "PUT"]
    joined = "cat /app/logs/a.log /app/logs/b.log > /app/logs/combined.log\ngrep 500 /app/logs/combined.log > /app/r"
    assert script_references(joined, "/app/r") == ["/app/logs/a.log", "/app/logs/b.log"]


def test_the_input_hint_shows_the_first_line_of_each_input_the_script_reads() -> None:
    from autoenvscaling.roles.proposer.staged.text import with_input_hint

    inputs = {"/app/a.log": "x 1\ny 2\n", "/app/b.log": "p\nq\n", "/app/one.txt": "only\n"}
    hinted = with_input_hint("Sum it.", inputs, "grep -v '^#' /app/a.log /app/one.txt > /app/r")
    assert hinted == "Sum it.\nA line of /app/a.log looks like: `x 1`"  # b.log is not read, one.txt has 1 line
    assert with_input_hint("Lines like x 1 are in /app/a.log.", inputs, "cat /app/a.log") == (
        "Lines like x 1 are in /app/a.log."
    )
    packed = with_input_hint("Sum it.", {"/app/a.log.gz": "x 1\ny 2\n"}, "zcat /app/a.log.gz > /app/r")
    assert packed == "Sum it.\nA line of /app/a.log.gz, once decompressed, looks like: `x 1`"


def test_the_input_hint_says_which_value_each_field_the_scripts_awk_reads_holds() -> None:
    from autoenvscaling.roles.proposer.staged.text import awk_fields, with_input_hint

    inputs = {"/app/a.log": "10.0.0.1 GET /index.html 200\n10.0.0.2 GET /missing 404\n", "/app/b.log": "p q\nr s\n"}
    # yield series v12 #9: told "the status code" of such a line, the blind solver compared $3 three times
    hinted = with_input_hint("Keep the errors.", inputs, "awk '$4 >= 400' /app/a.log /app/b.log > /app/r")
    assert hinted.splitlines()[1:] == [
        "A line of /app/a.log looks like: `10.0.0.1 GET /index.html 200`; "
        "split at blanks, its field 4 (the last) is `200`.",
        "A line of /app/b.log looks like: `p q`",  # the note follows the first input's line only
    ]
    assert awk_fields("awk '{print $1, $(NF); n += $2} END {print n}' /app/a.log", "/app/a.log") == ["1", "NF", "2"]
    assert "field 1 is `10.0.0.1`" in with_input_hint("x", inputs, "awk '{print $1}' /app/a.log > /app/r")
    for own_separator in ("awk -F: '{print $1}' /app/a.log", "awk 'BEGIN {FS=\",\"} {print $2}' /app/a.log"):
        assert awk_fields(own_separator, "/app/a.log") == []
    assert awk_fields("cut -d' ' -f1 /app/a.log; echo $1", "/app/a.log") == []  # a shell's $1 is no field
    # `make demo` run 5: the awks of a pipeline read grep's and uniq's lines, not the log's
    piped = "zgrep -v 502 /app/a.log | awk '{print $(NF)}' | sort | uniq -c | awk '{print $2, $1}' > /app/r"
    assert awk_fields(piped, "/app/a.log") == []
    assert with_input_hint("x", inputs, piped) == "x\nA line of /app/a.log looks like: `10.0.0.1 GET /index.html 200`"


@pytest.mark.parametrize(
    ("script", "answer", "shown"),
    [
        # a flywheel round's accepted environment: its example line was the whole answer
        ("awk '$4 <= 400' /app/a.log > /app/r", "10.0.0.1 GET /index.html 200\n", "its field 4 (the last) is `404`."),
        # a candidate (on 265fe3a) printed field 1 of the one matching line, and the field note named it
        ("awk '/GET/ && $4 == \"200\" {print $1}' /app/a.log > /app/r", "10.0.0.1\n",
         "its field 4 (the last) is `404`, field 1 is `10.0.0.2`."),
    ],
)  # fmt: skip
def test_the_input_hint_never_shows_the_answer(script: str, answer: str, shown: str) -> None:
    """Where the output is one line, or one field value, of the first input line, the next line is shown
    (``hackable:instruction-answer``); where every line would give it away, none is; one line of several is no
    answer."""
    from autoenvscaling.roles.proposer.staged.text import with_input_hint

    log = "10.0.0.1 GET /index.html 200\n10.0.0.2 GET /missing 404\n10.0.0.3 POST /login 500\n"
    hinted = with_input_hint("Keep.", {"/app/a.log": log}, script, answer)
    assert (
        hinted.splitlines()[1]
        == f"A line of /app/a.log looks like: `10.0.0.2 GET /missing 404`; split at blanks, {shown}"
    )
    several = answer + ("10.0.0.3\n" if answer == "10.0.0.1\n" else "10.0.0.2 GET /missing 404\n")
    assert "`10.0.0.1 GET /index.html 200`" in with_input_hint("Keep.", {"/app/a.log": log}, script, several)
    every = {"/app/a.log": "10.0.0.1 GET /index.html 200\n10.0.0.1 GET /index.html 200\n"}
    assert with_input_hint("Keep.", every, script, answer) == "Keep."


def test_a_hint_that_would_put_a_whole_output_into_the_instruction_is_left_out() -> None:
    from autoenvscaling.roles.proposer.staged.giveaway import with_hints

    outputs = {"/app/r.txt": "ERROR disk full\n"}
    hints = [
        ("order", lambda t: t + "\nKeep the input's order."),
        ("example", lambda t: t + "\nIt reads: `ERROR disk full`"),
        ("format", lambda t: t + "\n/app/r.txt holds one line."),
    ]
    text, left_out = with_hints("Keep the error lines.", hints, outputs)
    assert left_out == ["example"]
    assert text == "Keep the error lines.\nKeep the input's order.\n/app/r.txt holds one line."
    # An instruction that already gave the answer away is not the hints' doing (the guards before them judge it).
    given = "Write `ERROR disk full`."
    assert with_hints(given, hints, outputs) == (
        given + "\nKeep the input's order.\nIt reads: `ERROR disk full`\n/app/r.txt holds one line.",
        [],
    )


def test_a_count_that_lets_a_shown_field_start_the_output_is_left_out() -> None:
    from autoenvscaling.roles.proposer.staged.giveaway import with_hints

    # The addresses 10.0.0.1 to 10.0.0.3 in first-seen order (2242af9): the input hint's example line shows the
    # first, so a count would let a solver count on from it; the format hint goes, the input hint stays.
    outputs = {"/app/ips.txt": "10.0.0.1\n10.0.0.2\n10.0.0.3\n"}
    hints = [
        ("input", lambda t: t + "\nA line of /app/access.log looks like: `10.0.0.1 GET / 200`"),
        ("format", lambda t: with_format_hint(t, "/app/ips.txt", outputs, "exact")),
    ]
    text, left_out = with_hints("List each address once, in first-seen order.", hints, outputs)
    assert left_out == ["format"]
    assert text.endswith("looks like: `10.0.0.1 GET / 200`")


def test_each_starter_reads_its_own_kind_of_input_with_a_one_line_solution() -> None:
    domain = domain_context("terminal")
    starters = [p for p in parent_candidates(domain) if p.name in STARTERS]
    assert [p.name for p in starters] == STARTERS
    inputs = {p.name: p.main_input for p in starters}
    assert inputs == {
        "app-config": "/app/data/app.conf",
        "passwd-shells": "/app/data/passwd",
        "sales-csv": "/app/data/sales.csv",
    }
    for parent in starters:
        assert solution_lines(parent) == 1, parent.name
        out = re.search(r"> (/app/\S+)$", parent.solve_sh)
        assert out is not None and out.group(1) in parent.instruction, parent.name  # the instruction names it
        assert all(path in parent.instruction for path in parent.data), parent.name


def test_a_pack_without_starters_offers_its_worked_example_alone() -> None:
    assert [p.name for p in pack_parents(domain_context("swe"))] == []
    assert [p.name for p in pack_parents(domain_context("terminal"))] == ["worked-example", *STARTERS]


def test_parents_with_long_solutions_are_left_out_unless_none_would_remain() -> None:
    from autoenvscaling.roles.proposer.domain import domain_context
    from autoenvscaling.roles.proposer.staged.parents import parent_candidates, solution_lines

    domain = domain_context("terminal")
    every = parent_candidates(domain)
    short = parent_candidates(domain, max_solution_lines=12)
    assert "ini-to-json" in [p.name for p in every] and "ini-to-json" not in [p.name for p in short]
    assert all(solution_lines(p) <= 12 for p in short) and short[0].name == "worked-example"
    assert [p.name for p in parent_candidates(domain, max_solution_lines=0)] == [p.name for p in every]


def test_an_instruction_is_plain_prose_without_headings_and_bold_marks() -> None:
    # yield series v22 A1 #0: the model's markdown, bold labels and all, stood in the instruction
    reply = (
        "**Task: Select the lines of /app/data/access.log with status 404.**\n\n**Instruction:**\n"
        "**Write them to `/app/out.txt`**, in input order.\n### Output\nOne line per request."
    )
    assert prose_of(reply) == (
        "Task: Select the lines of /app/data/access.log with status 404.\n\n"
        "Write them to `/app/out.txt`, in input order.\nOutput\nOne line per request."
    )
    # code spans keep their marks; a lone or spaced ** is no emphasis
    assert (
        plain_markdown("Match `**/*.log` and `a__b__c`, a ** b, 2**3.")
        == "Match `**/*.log` and `a__b__c`, a ** b, 2**3."
    )
    assert plain_markdown("## **Note**: keep #3, # signs and /app/pkg/__init__.py") == (
        "Note: keep #3, # signs and /app/pkg/__init__.py"
    )


def test_an_instructions_prose_leaves_its_code_blocks_out() -> None:
    reply = "To select the files, run the command:\n```bash\nfind /srv/data -type f -perm -o+w\n```\nThat is all."
    assert prose_of(reply) == "To select the files.\n\nThat is all."
    given = "Select lines of /app/a.log into /app/b.txt, you can use the following shell command:\n```sh\nx\n```"
    assert prose_of(given) == "Select lines of /app/a.log into /app/b.txt."
    assert prose_of("```\nCount the lines of /app/a.txt.\n```") == "Count the lines of /app/a.txt."
    assert prose_of("Instruction:\nCount the lines.") == "Count the lines."
    assert (
        prose_of("NEW TASK: Select the PUT lines.\n\nInput: /app/a.log") == "Select the PUT lines.\n\nInput: /app/a.log"
    )
    assert prose_of("**New task:**\nSelect the PUT lines.") == "Select the PUT lines."
    assert prose_of("Task: Select the PUT lines.") == "Task: Select the PUT lines."
    quoted = 'The instruction is:\n"Filter out lines with status 404 from `/app/a.log` into `/app/b.txt`."\nIn order.'
    assert prose_of(quoted) == "Filter out lines with status 404 from `/app/a.log` into `/app/b.txt`.\nIn order."
    assert prose_of('Say "yes" when done.') == 'Say "yes" when done.'  # quotes inside a line stay
    # yield series v15 A1 #0: a reply cut inside its example script left a heading and its lead-in behind
    cut = (
        "Count each status of /app/data/access.log.\n\n### Rules\n\n1. **Output Format**: `404 3`.\n\n"
        "### Example Solution\n\nHere is a sample `solve.sh` script that accomplishes the task:\n\n```bash\n"
        "#!/bin/bash\ngrep -i"
    )
    assert prose_of(cut) == "Count each status of /app/data/access.log.\n\nRules\n\n1. Output Format: `404 3`."
    assert prose_of("Write /app/b.txt. Its lines look like:") == "Write /app/b.txt. Its lines look like:"  # no code
    # the accepted instruction of a recorded `make demo` run (2026-12-04) ended on this pointer
    demo = (
        "To select the lines with status 200 from `/app/data/access.log` and write them to `/app/result.txt`, the "
        "person must execute the following commands in sequence:\n```bash\ngrep 200 /app/data/access.log\n```"
    )
    assert prose_of(demo) == (
        "To select the lines with status 200 from `/app/data/access.log` and write them to `/app/result.txt`."
    )
    assert prose_of("Run the script below:\n```\nx\n```") == "."  # nothing but a pointer: the prose check refuses it
    # lead-ins over blocks that are left out, inside the text (a recorded `make demo` run and yield series v20 #2)
    contents = "To produce the file `/app/e.txt` with the following contents:\n```\n404 4\n```\nRead /app/a.log."
    assert prose_of(contents) == "To produce the file `/app/e.txt`.\n\nRead /app/a.log."
    shown = "Count each status of /app/a.log.\n\nThe output of this command will be:\n```\n404 4\n```\nIn order."
    assert prose_of(shown) == "Count each status of /app/a.log.\n\nIn order."
    script = "Keep the 404 lines of `/app/a.log`, using the script:\n```bash\ngrep 404\n```\n\nIn input order."
    assert prose_of(script) == "Keep the 404 lines of `/app/a.log`.\n\nIn input order."


SOLVE = (
    "#!/bin/bash\nset -euo pipefail\nfind /srv/data -type f ! -user backup | sort > /app/out.txt\n"
    "awk '$4 >= 400' /app/data/a.log > /app/b.txt\n"
)


@pytest.mark.parametrize(
    ("instruction", "given"),
    [
        ("List the files: run find /srv/data -type f ! -user backup and save it to /app/out.txt.", True),
        ("List the files; the command is `find   /srv/data -type f ! -user backup`.", True),
        ("List the regular files under /srv/data not owned by backup, one path per line, into /app/out.txt.", False),
        ("Use set -euo pipefail and sort the lines.", False),  # the script's set line is no command of the rule
        ("Keep the lines of /app/data/a.log where `$4 >= 400`.", True),  # the awk program, quoted from the script
        ("Keep the lines of /app/data/a.log whose status is 400 or more.", False),
        # the workshop's own words (yield series v15 A1 #1)
        ("Keep the lines of /app/data/a.log that the solve.sh script selects.", True),
        ("Combine the two tasks by chaining the first one's output into the second one's input.", True),
    ],
)
def test_an_instruction_must_not_hold_the_solutions_command(instruction: str, given: bool) -> None:
    assert (solution_in_instruction(instruction, SOLVE) is not None) is given


@pytest.mark.parametrize(
    ("script", "sentence"),
    [
        (
            "awk '{c[$4]++} END {for (s in c) print s, c[s]}' /app/data/a.log | sort -nr > /app/o.txt",
            "sorted by the number at the start of each line, largest first.",
        ),
        (
            "cut -d, -f2 /app/d.csv | sort | uniq -c | sort -t ',' -k2,2n > /app/o.txt",
            "sorted by their second field (fields separated by `,`), as numbers, smallest first.",
        ),
        ("sort -u /app/data/names.txt > /app/o.txt", "sorted by the whole line, in byte order"),
        ("sort -r -k 3 /app/data/names.txt > /app/o.txt", "sorted by their third field (fields separated by spaces),"),
        ("grep x /app/data/a.log > /app/o.txt", None),
        ("sort /app/data/a > /tmp/s\ngrep x /tmp/s > /app/o.txt", None),  # the writing line does not sort
    ],
)
def test_the_order_of_a_sorted_output_is_said_in_words(script: str, sentence: str | None) -> None:
    got = order_sentence(script, "/app/o.txt")
    assert (got is None) if sentence is None else (got is not None and sentence in got), got
    if sentence and "-u" in script:
        assert got is not None and got.endswith("Each distinct line appears once.")
    assert with_order_hint("Do it.", script, "/app/o.txt", "sorted_lines") == "Do it."  # order is not graded


def test_a_filters_output_that_keeps_the_input_order_says_so() -> None:
    log = "1 GET / 200\n2 GET /x 404\n3 POST /y 500\n4 GET /z 404\n"
    inputs = {"/app/data/other.txt": "a\n", "/app/data/access.log": log}
    script = "awk '$4 >= 400' /app/data/access.log > /app/o.txt"
    kept = "2 GET /x 404\n3 POST /y 500\n4 GET /z 404\n"
    assert input_order_source(kept, inputs) == "/app/data/access.log"
    hinted = with_order_hint("Keep the errors.", script, "/app/o.txt", "exact", kept, inputs)
    assert hinted == "Keep the errors.\nThe lines of /app/o.txt keep the order they have in /app/data/access.log."
    assert input_order_source("4 GET /z 404\n2 GET /x 404\n", inputs) is None  # another order
    assert input_order_source("2 GET /x 404\n", inputs) is None  # one line has no order to tell
    assert input_order_source("2 GET\n4 GET\n", inputs) is None  # not the input's lines
    assert with_order_hint("Keep.", script, "/app/o.txt", "sorted_lines", kept, inputs) == "Keep."
    sorted_script = "awk '$4 >= 400' /app/data/access.log | sort -r > /app/o.txt"  # sort's own sentence wins
    assert "sorted by the whole line" in with_order_hint("Keep.", sorted_script, "/app/o.txt", "exact", kept, inputs)


def test_an_awk_pattern_is_no_input_path_and_what_it_matches_is_a_value() -> None:
    from autoenvscaling.roles.proposer.staged.references import script_references, unnamed_references

    script = "awk '/400/ {print $1}' /app/logs/access.log | grep -v '/ERROR/' > /app/errors.txt\nls /srv/data/\n"
    assert script_references(script, "/app/errors.txt") == ["/app/logs/access.log", "/srv/data", "400", "ERROR"]
    # one that a condition goes on from: a flywheel round on 14df066 told its solver "The rule uses these values:
    # `/GET`" of `awk '/GET/ && $4 == 200'`
    for program, values in [
        ("/GET/ && $4 == 200", ["GET", "200"]),
        ("$1 ~ /10.0.0.1/ || /^POST|PUT$/", ["10.0.0.1", "POST", "PUT"]),
        ("($3 ~ /admin/) {print}", ["admin"]),
        ("/GET/ && /HTTP\\/1\\.1/", ["GET"]),  # an escaped slash stays in the address, and no plain word is in it
    ]:
        refs = script_references(f"awk '{program}' /app/a.log > /app/r", "/app/r")
        assert refs == ["/app/a.log", *values], program
    assert script_references("sed -n '/a1/,/b2/p' /app/a.log > /app/r", "/app/r") == ["/app/a.log", "a1", "b2"]
    # a pattern's `/.*` is neither a path nor a value (a flywheel round on f756e09: "The rule uses these values: `/.`")
    assert script_references('grep -E "^GET /.*HTTP/1.1$" /app/a.log > /app/r', "/app/r") == ["/app/a.log"]
    # a substitution and a path before && are no address
    assert script_references("sed 's/foo/bar/' /app/a.log > /app/r", "/app/r") == ["/app/a.log"]
    assert script_references("cd /srv/data/ && cat x.log > /app/r", "/app/r") == ["/srv/data"]
    told = "Keep the lines of /app/a.log with GET and status 200."
    assert unnamed_references(told, "awk '/GET/ && $4 == 200' /app/a.log > /app/r", "/app/r") == []


def test_a_path_inside_a_quoted_pattern_is_a_value_not_an_input() -> None:
    from autoenvscaling.roles.proposer.staged.references import pattern_paths, unnamed_references, with_references

    # yield series v12 #7: the instruction was completed with "The input is in /api/items."
    script = "grep -E '\\[[^]]+\\] \"PUT /api/items HTTP/1.1\" 200' /app/logs/access.log > /app/result.txt"
    assert pattern_paths(script) == {"/api/items"}
    missing = unnamed_references("Keep the lines of /app/logs/access.log with status 200.", script, "/app/result.txt")
    assert missing == ["/api/items"]
    assert with_references("Keep.", missing, script) == "Keep.\nThe rule uses these values: `/api/items`."
    assert with_references("Keep.", missing) == "Keep.\nThe input is in /api/items."  # without the script: a path
    assert pattern_paths("cat '/app/data/a.log' \"/srv/x/\" > /app/r") == set()  # a quoted path alone is a path
    # grep's pattern quoted alone is a value too: "The input is in /login." was wrong
    assert pattern_paths("grep -v '/login' /app/a.log > /app/r") == {"/login"}
    login = "grep -v '/login' /app/a.log > /app/r"
    missing = unnamed_references("Keep the lines of /app/a.log.", login, "/app/r")
    assert with_references("Keep.", missing, login) == "Keep.\nThe rule uses these values: `/login`."


def test_an_awk_field_count_is_no_value_to_name() -> None:
    from autoenvscaling.roles.proposer.staged.references import script_references, unnamed_references

    # demo runs on 66937ae and 8ee4ab2 told key tasks "The rule uses these values: `2`." of `NF == 2`
    keys = "awk -F' = ' '!/^#/ && NF == 2 {print $1}' /app/data/app.conf > /app/keys.txt"
    assert script_references(keys, "/app/keys.txt") == ["/app/data/app.conf"]
    told = "Write the key of every setting of /app/data/app.conf, one per line."
    assert unnamed_references(told, keys, "/app/keys.txt") == []
    # a number compared with a field is a value still, beside a field count or not
    both = "awk 'NF>=4 && $4 >= 400' /app/a.log > /app/r"
    assert script_references(both, "/app/r") == ["/app/a.log", "400"]


def test_a_system_path_the_rule_matches_is_a_value_to_name() -> None:
    from autoenvscaling.roles.proposer.staged.giveaway import without_commands
    from autoenvscaling.roles.proposer.staged.references import script_references, unnamed_references

    awk = 'awk -F: \'$7 == "/bin/bash" && $1 != "root" {print $1}\' /app/data/passwd | sort > /app/r'
    assert script_references(awk, "/app/r") == ["/bin/bash", "/app/data/passwd", "root"]
    assert script_references('grep -e "/bin/bash" /app/data/passwd > /app/r', "/app/r") == [
        "/bin/bash",
        "/app/data/passwd",
    ]
    assert unnamed_references("Keep the bash users of /app/data/passwd but root.", awk, "/app/r") == ["/bin/bash"]
    assert unnamed_references("Keep the users of /app/data/passwd whose shell is /bin/bash, but root.", awk, "/x") == []
    # a system path the script uses as a file is still none: the shebang, a sink, scratch space, a quoted file
    plain = '#!/bin/bash\ngrep x /app/a.log 2>/dev/null > /tmp/t\ncat "/usr/share/dict/words" /tmp/t > /app/r'
    assert script_references(plain, "/app/r") == ["/app/a.log"]
    # a demo run on fdf91cc: the cut of the how-talk took the rule's /bin/bash with it, and the rest was accepted
    solve = 'awk -F: \'$7 == "/bin/bash" && substr($1, 1, 1) == "a"\' /app/data/passwd | sort > /app/u.txt'
    text = (
        "**Instruction**:\n- Use the `awk` command to keep the lines of `/app/data/passwd` where the shell is "
        "`/bin/bash` and the name starts with 'a'.\n- Write them sorted to `/app/u.txt`.\n\n**Output**:\n"
        "- `/app/u.txt` holds the lines of `/app/data/passwd` that satisfy the condition, sorted."
    )
    cut = without_commands(text, solve)
    assert cut is not None and "/bin/bash" not in cut
    assert unnamed_references(cut, solve, "/app/u.txt") == ["/bin/bash"]  # so Episode._without_how refuses it
    assert unnamed_references(text, solve, "/app/u.txt") == []


def test_an_instruction_that_names_none_of_the_rules_values_states_no_rule() -> None:
    from autoenvscaling.roles.proposer.staged.references import unstated_rule

    # a demo run on fdf91cc: readers' `grep 'root'` under "the lines ... that satisfy the condition"
    root = "grep 'root' /app/data/passwd > /app/r.txt"
    vague = "Write the lines of /app/data/passwd that satisfy the condition to /app/r.txt."
    assert unstated_rule(vague, root, "/app/r.txt") == ["root"]
    assert unstated_rule("Write the lines of /app/data/passwd that mention root to /app/r.txt.", root, "/x") == []
    # one value of two named is a rule stated in part: the values hint completes it
    both = "awk '$2 == \"GET\" && $4 >= 400' /app/a.log > /app/r"
    assert unstated_rule("Keep the GET lines of /app/a.log.", both, "/app/r") == []
    assert unstated_rule("Keep the lines of /app/a.log that match.", both, "/app/r") == ["GET", "400"]
    # a value only inside a path names nothing (/app/errors_400.txt); a matched system path is a value
    assert unstated_rule("Write the lines of /app/a.log to /app/errors_400.txt.", "awk '$4 >= 400' /app/a.log", "") == [
        "400"
    ]
    shell = "awk -F: '$7 != \"/bin/bash\" {print $1}' /app/data/passwd > /app/u.txt"
    assert unstated_rule("If the condition is true, the first field is printed.", shell, "/app/u.txt") == ["/bin/bash"]
    assert unstated_rule("The names of the users whose shell is not /bin/bash.", shell, "/app/u.txt") == []
    # an anchored pattern's word is a value: bbdcf8a's "Please provide the correct script ..." of `'^home:'`
    home = "grep -E '^home:' /app/data/passwd > /app/h.txt"
    assert unstated_rule("Please provide the correct script and the exact output file.", home, "/app/h.txt") == ["home"]
    keys = "awk -F' = ' '{print $1}' /app/c.conf | grep -v '^key1$' | grep -v '^key2$' > /app/k.txt"
    assert unstated_rule("Write the key of every setting of /app/c.conf.", keys, "/app/k.txt") == ["key1", "key2"]
    # a rule without values (paths only, a count of every line) has nothing to state
    assert unstated_rule("Count the lines.", "wc -l < /app/a.log > /app/n.txt", "/app/n.txt") == []


LOG = "10.0.0.1 GET /index.html 200\n10.0.0.2 GET /missing 404\n10.0.0.1 POST /login 500\n10.0.0.3 GET /login 404\n"


@pytest.mark.parametrize(
    ("instruction", "output", "broken"),
    [
        # yield series v13 #0: the recorded lines of `grep 'GET /login'` held a 500
        ("Select lines where the status code is less than 500 and the path has login.", "login 500", "less than 500"),
        ("Keep the lines with status greater than or equal to 404.", "index 200", "greater than or equal to 404"),
        ("Keep the lines with status >= 404 in order", "index 200", ">= 404"),
        ("Keep the lines with status code above 399.", "missing 404\nlogin 500", None),
        ("Keep the lines with status less than 500 and the path has login.", "GET /login", None),
        ("Drop the lines with status less than 500.", "login 500", None),  # the complement: not read
        ("Keep the lines with status 404 or above 499.", "index 200", None),  # an alternative: not read
        ("Keep the requests of clients with at least 2 requests.", "index 200", None),  # a count: no such field
    ],
)
def test_a_filter_whose_lines_break_the_comparison_its_instruction_states_is_found(
    instruction: str, output: str, broken: str | None
) -> None:
    from autoenvscaling.roles.proposer.staged.claims import claim_violation

    lines = {"login 500": "10.0.0.1 POST /login 500", "index 200": "10.0.0.1 GET /index.html 200"}
    lines |= {"missing 404": "10.0.0.2 GET /missing 404", "GET /login": "10.0.0.3 GET /login 404"}
    text = "\n".join(lines[k] for k in output.split("\n")) + "\n"
    found = claim_violation(instruction, text, {"/app/data/access.log": LOG})
    assert (found is not None) == (broken is not None), found
    if broken:
        assert f'says "{broken}"' in found  # type: ignore[operator]
    # not a filter, and no column of values the inputs hold: nothing to compare
    assert claim_violation(instruction, "700 1\n", {"/app/data/access.log": LOG}) is None
    # no filter: counts per status code (v14 #4: "greater than 400", and the counts listed status 200)
    counts = "2 200\n1 404\n1 500\ntotal 4\n"
    found = claim_violation("Count the requests with status greater than 400.", counts, {"/app/data/access.log": LOG})
    assert found is not None and "`2 200`" in found
    assert claim_violation("Count the requests with status greater than 400.", "1 404\n1 500\ntotal 2\n",
                           {"/app/data/access.log": LOG}) is None  # fmt: skip
    assert claim_violation("Sizes above 100.", "250\n", {"/app/data/access.log": LOG}) is None  # 250: no input field


@pytest.mark.parametrize(
    ("instruction", "output", "broken"),
    [
        # yield series v13 #11: "by frequency in descending order" of a count sorted by status code
        ("Print each status and its frequency, sorted by frequency in descending order.", "200 126\n201 11\n204 3\n"
         "301 11\ntotal 151\n", True),
        ("Sort the status codes in ascending order.", "200 126\n201 11\n204 3\n301 11\ntotal 151\n", False),
        ("The counts come largest first.", "404 3\n500 2\n", False),  # the count column runs that way
        ("Sorted by count, not in descending order.", "200 1\n201 11\n", False),  # a negation: no claim read
        ("Sorted in descending order.", "GET x\nPOST y\n", False),  # no number column to compare
        ("Ascending or descending, as you like.", "2 1\n1 2\n", False),  # both directions named
        ("Keep the lines in increasing order.", "10.0.0.3 GET /b 500\n10.0.0.1 GET /a 404\n", False),  # a filter
    ],
)  # fmt: skip
def test_an_order_the_output_does_not_have_is_a_contradiction(instruction: str, output: str, broken: bool) -> None:
    from autoenvscaling.roles.proposer.staged.claims import contradiction
    from autoenvscaling.roles.proposer.staged.orders import order_violation

    inputs = {"/app/log": "10.0.0.1 GET /a 404\n10.0.0.3 GET /b 500\n"}
    found = order_violation(instruction, output, inputs)
    assert (found is not None) == broken
    assert contradiction(instruction, output, inputs) == found
    if found:
        assert '"descending"' in found and "`200 126` comes before `201 11`" in found


ERRORS = "10.0.0.2 GET /missing 404\n10.0.0.1 POST /login 500\n10.0.0.3 GET /login 404\n"  # LOG's status >= 400
OK_ONLY = "10.0.0.1 GET /index.html 200\n"
GETS = "10.0.0.2 GET /missing 404\n10.0.0.3 GET /login 404\n"


@pytest.mark.parametrize(
    ("instruction", "output", "plain"),
    [
        # yield series v16 #8: "filter out lines with status >= 400" for a script that keeps them
        ("filter out lines with status >= 400\nWrite the result to /app/e.txt.", ERRORS,
         "keep only lines with status >= 400\nWrite the result to /app/e.txt."),
        ("Filter out lines with status >= 400 from /app/data/access.log.", OK_ONLY,
         "Remove lines with status >= 400 from /app/data/access.log."),
        ("The script filters out the lines containing 'POST /login', then writes them.", "10.0.0.1 POST /login 500\n",
         "The script keeps only the lines containing 'POST /login', then writes them."),
        ("Filter out the lines holding 'GET'. Sort them.", "10.0.0.1 POST /login 500\n",
         "Remove the lines holding 'GET'. Sort them."),
        # yield series v15 P1 #0: "filter out lines that do not contain 'GET'" for `sed '/GET/d'`
        ("Filter out lines that do not contain 'GET'.", "10.0.0.1 POST /login 500\n",
         "Keep only lines that do not contain 'GET'."),
        ("Filter out lines that don't have 'GET'.", GETS, "Remove lines that don't have 'GET'."),
        ("Filter out lines with no 'GET' and not 'POST'.", GETS,  # one negation per clause: the first clause
         "Remove lines with no 'GET' and not 'POST'."),
        ("Filter out lines that are not without 'GET'.", ERRORS, None),  # a word of keeping or an alternative
        ("Filter out lines that do not not contain 'GET'.", ERRORS, None),  # two negations: not read
        ("Filter out lines with status > 300 and keep their order.", ERRORS, None),  # a word of keeping
        ("Filter out lines with status >= 404.", ERRORS + OK_ONLY, None),  # some lines have it, some do not
        ("Filter out lines from `/app/data/access.log`.", ERRORS, None),  # a path is no predicate
        # demo series ad011ff run 1: a request path an input line holds is a text, not a file
        ("- It filters out lines containing the path `/index.html`.", OK_ONLY,
         "- It keeps only lines containing the path `/index.html`."),
        ("Filter out the lines with `/login`.", OK_ONLY, "Remove the lines with `/login`."),
        # demo series 9c79f5b run 1: a title, in title case, of a grep that kept the lines it names
        ("Task: Filter Out Lines Containing 'GET'\n\nWrite them.", GETS,
         "Task: Keep only Lines Containing 'GET'\n\nWrite them."),
        ("# Filter Out Lines Containing 'POST'", GETS, "# Remove Lines Containing 'POST'"),
        # demo series d9a345e run 3: values a field equals, whose "or" is a list, not an alternative of the rule
        ("filter out lines where the status is 404 or 500", ERRORS, "keep only lines where the status is 404 or 500"),
        ("Filter out the requests whose status is 404, 500.", OK_ONLY, "Remove the requests whose status is 404, 500."),
        ("Filter out lines where the status is 404.", ERRORS, None),  # the 500 line holds no 404: not settled
        ("Filter out lines with status below 404 or 500.", ERRORS, None),  # a comparison's "or": an alternative
    ],
)  # fmt: skip
def test_a_filter_out_the_output_settles_is_made_plain(instruction: str, output: str, plain: str | None) -> None:
    from autoenvscaling.roles.proposer.staged.claims import with_direction

    assert with_direction(instruction, output, {"/app/data/access.log": LOG}) == (plain or instruction)


@pytest.mark.parametrize(
    ("instruction", "output", "broken"),
    [
        ("Remove the lines with status >= 400.", ERRORS, "the lines with status >= 400"),
        ("Exclude every request whose status is greater than 399; write the rest.", ERRORS,
         "every request whose status is greater than 399"),
        ("Drop the lines containing 'GET'.", "10.0.0.2 GET /missing 404\n", "the lines containing 'GET'"),
        ("Drop the lines containing `/login`.", "10.0.0.3 GET /login 404\n", "the lines containing `/login`"),
        ("Drop the lines read from `/app/data/access.log`.", "10.0.0.3 GET /login 404\n", None),  # a file
        ("Remove the lines that do not contain 'GET'.", "10.0.0.1 POST /login 500\n",
         "the lines that do not contain 'GET'"),
        ("Remove the lines with status >= 400.", OK_ONLY, None),  # removed, as it says
        ("Remove the lines that do not contain 'GET'.", "10.0.0.2 GET /missing 404\n", None),
        ("Remove duplicates, then list the lines with status >= 400.", ERRORS, None),  # another clause's claim
        ("Remove nothing but the lines with status below 400 or 500.", ERRORS, None),  # an alternative
        ("Remove the lines whose status is 404 or 500.", ERRORS, "the lines whose status is 404 or 500"),
        ("Remove the lines whose status is 404 or 500.", OK_ONLY, None),
    ],
)  # fmt: skip
def test_an_output_that_keeps_what_the_instruction_removes_is_a_contradiction(
    instruction: str, output: str, broken: str | None
) -> None:
    from autoenvscaling.roles.proposer.staged.claims import contradiction, removal_violation

    inputs = {"/app/data/access.log": LOG}
    found = removal_violation(instruction, output, inputs)
    assert (found is not None) == (broken is not None), found
    if broken:
        assert f'says to {instruction.split()[0].lower()} "{broken}", but every output line is one' in found  # type: ignore[operator]
        assert contradiction(instruction, output, inputs) == found


def test_a_filter_whose_fields_shift_is_checked_line_by_line() -> None:
    from autoenvscaling.roles.proposer.staged.claims import claim_violation

    # yield series v16 A1 #14: ">= 400", and `grep '... [400-999]'` kept every line; a path with a space shifts
    # the status field, so no column holds a 3-digit number on every line
    log = '1.1.1.1 "GET /a HTTP/1.1" 404 1558\n1.1.1.2 "GET /s?q=a b HTTP/1.1" 200 812\n'
    log += '1.1.1.3 "GET /b HTTP/1.1" 200 55\n'
    inputs = {"/app/a.log": log}
    found = claim_violation("Extract the lines with a status code greater than or equal to 400.", log, inputs)
    assert found is not None and '`1.1.1.3 "GET /b HTTP/1.1" 200 55` does not hold it' in found
    # 812 holds the claim on its line: a line is flagged only when none of its 3-digit numbers holds it
    kept = log.splitlines(keepends=True)
    assert claim_violation("Lines with status >= 400.", kept[0] + kept[1], inputs) is None


@pytest.mark.parametrize(
    ("instruction", "output", "broken"),
    [
        # yield series v16 A1 #11: "400 or 500" of `grep -E '400|500'`, which also kept a 200 line
        ("Filter lines where the status code is 400 or 500; count each.", "1 10.0.0.1 GET /index.html 200\n"
         "1 10.0.0.1 POST /login 500\n", "status code is 400 or 500"),
        ("Keep the requests with a status code of 404.", "10.0.0.2 GET /missing 404\n10.0.0.1 POST /login 500\n",
         "status code of 404"),
        ("Keep the lines with status codes 404, 500.", ERRORS, None),  # every line holds one
        # a demo run on a4556e2: "400, 500, or 600" was read as "400, 500" and a 600 line refused
        ("Select only lines where the status code is 404, 500, or 200.", LOG, None),
        ("Lines with status 404, 500, and 200 only.", LOG, None),
        ("Remove the lines with status code 404.", ERRORS, None),  # a removal: another check's
        ("Lines whose status code is not 404.", ERRORS, None),  # a negation
        ("Count the requests with status code 404.", "2\n", None),  # no filter: nothing to compare
    ],
)  # fmt: skip
def test_an_output_line_with_none_of_the_named_status_codes_is_a_contradiction(
    instruction: str, output: str, broken: str | None
) -> None:
    from autoenvscaling.roles.proposer.staged.claims import contradiction, value_violation

    inputs = {"/app/data/access.log": LOG}
    found = value_violation(instruction, output, inputs)
    if broken is None:
        assert found is None, found
        return
    assert found is not None and f'says "{broken}", but the output line' in found
    assert contradiction(instruction, output, inputs) == found


ADMIN = "10.0.0.1 GET /admin 404\n10.0.0.2 GET /admin 404\n10.0.0.1 POST /admin 500\n10.0.0.3 GET /admin 404\n"


@pytest.mark.parametrize(
    ("instruction", "output", "broken"),
    [
        # yield series v16 #9: "sorted by the IP address" of a grep that kept the log's order
        ("- The lines should be sorted by the IP address (from left to right).", ADMIN, "sorted"),
        ("Sort them by status code.", ADMIN, "sort"),  # 404 404 500 404; the paths (one value) tell nothing
        ("Sort the lines by IP.", "10.0.0.1 GET /a 404\n10.0.0.2 GET /b 500\n10.0.0.10 GET /c 200\n", None),  # versions
        ("Sort the lines by IP.", "10.0.0.9 b\n10.0.0.10 a\n10.0.0.2 c\n", "sort"),
        ("Sort by count, largest first.", "404 9\n200 5\n500 1\ntotal 15\n", None),  # a total line left out
        ("The lines keep the order they have in the log, not sorted.", ADMIN, None),  # no sort claimed
        ("Sort the lines.", "b\na\n", None),  # two lines: always in some order
    ],
)  # fmt: skip
def test_an_output_in_no_order_under_a_sort_claim_is_a_contradiction(
    instruction: str, output: str, broken: str | None
) -> None:
    from autoenvscaling.roles.proposer.staged.claims import contradiction
    from autoenvscaling.roles.proposer.staged.orders import sort_violation

    found = sort_violation(instruction, output)
    if broken is None:
        assert found is None, found
        return
    assert found is not None and f'says "{broken}", but no field of the output runs in order' in found
    assert contradiction(instruction, output, {}) == found
    assert contradiction(instruction, output, {}, "sorted_lines") is None  # any order passes such tests


def test_inputs_the_instruction_names_but_the_script_never_reads_are_found_and_noted() -> None:
    from autoenvscaling.roles.proposer.staged.text import unread_inputs, with_unread_note

    logs = ["/app/logs/access.log", "/app/logs/access.log.1", "/app/logs/access.log.2"]
    told = "Read /app/logs/access.log, /app/logs/access.log.1 and /app/logs/access.log.2. Write /app/r.txt."
    two = "cat /app/logs/access.log /app/logs/access.log.1 | grep ' 404 ' > /app/r.txt"
    assert unread_inputs(told, two, logs) == ["/app/logs/access.log.2"]
    assert with_unread_note("Do it.", ["/app/logs/access.log.2"], logs, two) == (
        "Do it.\n/app/logs/access.log.2 is not part of the task: use only /app/logs/access.log, /app/logs/access.log.1."
    )
    assert unread_inputs(told, "grep -c x /app/logs/access.log > /app/r.txt", logs) == logs[1:]
    for reads_all in ("cat /app/logs/access.log* > /app/r.txt", "cat /app/logs/* > /app/r", "find /app/logs -type f"):
        assert unread_inputs(told, reads_all, logs) == [], reads_all
    assert unread_inputs("Count the lines of /app/logs/access.log.", two, logs) == []  # .1 and .2 are not named
    assert with_unread_note("Do it.", [], logs, two) == "Do it."


def test_files_the_instruction_names_that_the_image_does_not_hold_are_found_and_noted() -> None:
    from autoenvscaling.roles.proposer.staged.text import phantom_paths, with_unread_note

    # yield series v13 #9: a .gz log named beside the one real log; the blind solver tried to decompress it
    told = (
        "Process `/app/data/access.log` and `/app/data/access.log.gz`, write /app/result.txt. The logs are in "
        "/app/data/. Count the requests to /login in /app/data/*.log (see /app/data/access.log.*)."
    )
    script = "grep -c /login /app/data/access.log > /app/tmp.txt; cat /app/tmp.txt > /app/result.txt"
    logs = ["/app/data/access.log"]
    assert phantom_paths(told, logs, "/app/result.txt", script) == ["/app/data/access.log.gz"]
    assert phantom_paths(told + " Keep /app/tmp.txt.", logs, "/app/result.txt", script) == ["/app/data/access.log.gz"]
    made = "FROM x\nWORKDIR /app\nRUN mkdir data && truncate -s 1K data/access.log.gz\n"  # a RUN line may make it
    assert phantom_paths(told, logs, "/app/result.txt", script, made) == []
    assert with_unread_note("Do it.", ["/app/data/access.log.gz"], logs, script) == (
        "Do it.\nThere is no /app/data/access.log.gz: use only /app/data/access.log."
    )
    both = with_unread_note("Do it.", ["/app/b", "/app/c"], ["/app/a", "/app/b"], "cat /app/a")
    assert both == "Do it.\n/app/b is not part of the task, and there is no /app/c: use only /app/a."


def test_a_preamble_before_the_instruction_is_dropped() -> None:
    reply = "Here's the instruction for a person who must produce this file:\n\n**Input:** /app/a.log\nCount it."
    assert prose_of(reply) == "Input: /app/a.log\nCount it."
    assert prose_of("Sure! Here is the task:\nCount /app/a.log.") == "Count /app/a.log."
    assert prose_of("Here is /app/a.log: count its lines.") == "Here is /app/a.log: count its lines."


def test_a_failed_script_is_told_which_files_do_not_exist_and_which_are_the_inputs() -> None:
    from types import SimpleNamespace

    from autoenvscaling.roles.proposer.staged import record as rec
    from autoenvscaling.roles.proposer.staged.repairs import explained

    # yield series v16 A1 #4: three scripts in a row read /app/data/file1.txt and file2.txt
    ep = SimpleNamespace(
        files=SimpleNamespace(solve_sh="cat /app/data/file1.txt /app/data/file2.txt | sort > /app/result.txt"),
        inputs={"/app/data/access.log": LOG},
        output="/app/result.txt",
    )
    stderr = "cat: /app/data/file1.txt: No such file or directory\ncat: /app/data/file2.txt: No such file or directory"
    told = explained(ep, (rec.SOLUTION_FAILED, f"solve.sh exited with 1: {stderr}"))  # type: ignore[arg-type]
    assert told.endswith(
        "\nThere is no /app/data/file1.txt, no /app/data/file2.txt: the input files are /app/data/access.log."
    )
    inputs_missing = explained(  # an input reported missing is no such note's business (a .gz read, say)
        ep,  # type: ignore[arg-type]
        (rec.SOLUTION_FAILED, "solve.sh exited with 1: cat: /app/data/access.log: No such file or directory"),
    )
    assert "There is no" not in inputs_missing
    # a grep that no input line matches is told first
    ep.files.solve_sh = "grep -i 'error' /app/data/access.log > /app/result.txt"
    said = explained(ep, (rec.SOLUTION_FAILED, "solve.sh exited with 1: (no output)"))  # type: ignore[arg-type]
    assert "No input line holds `error`" in said


def test_an_awk_test_on_the_wrong_field_is_told_which_field_and_the_lines_are_not_asked_again() -> None:
    from types import SimpleNamespace

    from autoenvscaling.roles.proposer.staged import record as rec
    from autoenvscaling.roles.proposer.staged.repairs import explained, redo_data

    # yield series v16 A1 #12: `$4 ~ /admin/` selected nothing, the model's (right) lines were asked for twice
    ep = SimpleNamespace(
        files=SimpleNamespace(solve_sh="awk '$4 ~ /admin/' /app/data/access.log > /app/a.txt"),
        inputs={"/app/data/access.log": LOG + "10.0.0.2 GET /admin 404\n"},
        output="/app/a.txt",
    )
    problem = (rec.OUTPUT_EMPTY, "/app/a.txt is empty")
    told = explained(ep, problem)  # type: ignore[arg-type]
    assert told.endswith("No input line passes `$4 ~ /admin/`, but field $3 does (`/admin`): count the fields of an "
                         "input line and test the field the rule is about.")  # fmt: skip
    assert redo_data(ep, problem, False) is False  # type: ignore[arg-type]


CONF = "# service\nport = 8080\n# new case\nport = 8080\n# new case\nport = 9000\nport = 1024\n"


@pytest.mark.parametrize(
    ("instruction", "output", "broken"),
    [
        # hackable-share round on ad011ff: accepted and calibrated learnable, though 8080 is in the file twice
        ("Read /app/data/app.conf and write /app/unique_ports.txt: the port numbers that appear exactly once in "
         "/app/data/app.conf.", "1024\n8080\n9000\n", "`8080` appears 2 times"),
        ("List the lines occurring only once in the input.", "# new case\nport = 9000\n", "`# new case` appears 2"),
        ("List the ports appearing exactly once in `/app/data/app.conf`.", "1024\n9000\n", None),  # as it says
        ("List each port once. Each distinct line appears once.", "1024\n8080\n9000\n", None),  # de-duplication
        ("List the ports that appear exactly once in /app/ports.txt.", "1024\n8080\n", None),  # the output's once
        ("List the ports that do not appear exactly once in /app/data/app.conf.", "8080\n", None),  # a negation
    ],
)  # fmt: skip
def test_a_value_said_to_appear_once_that_the_input_repeats_is_a_contradiction(
    instruction: str, output: str, broken: str | None
) -> None:
    from autoenvscaling.roles.proposer.staged.claims import contradiction, once_violation

    inputs = {"/app/data/app.conf": CONF}
    found = once_violation(instruction, output, inputs)
    assert (found is not None) == (broken is not None), found
    if broken:
        assert broken in found  # type: ignore[operator]
        assert contradiction(instruction, output, inputs) == found
