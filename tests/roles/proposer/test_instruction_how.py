"""An instruction says what the output holds, not how to make it: the solution's programs it names, the
sentences that say how cut from it, a reply cut at its token cap, and an input line it claims for the output."""

from __future__ import annotations

import pytest

from autoenvscaling.roles.proposer.staged.claims import contradiction, quote_violation
from autoenvscaling.roles.proposer.staged.giveaway import commands_named, without_commands, without_cut_tail

GREP = "#!/bin/bash\ngrep '500' /app/data/access.log > /app/report.txt\n"
PIPE = "#!/bin/bash\nzcat -f /app/logs/a.log /app/logs/b.gz | awk '{print $9}' | sort -n | uniq -c > /app/o.txt\n"


@pytest.mark.parametrize(
    ("instruction", "script", "named"),
    [
        ("Use the `grep` command to search for lines containing 500.", GREP, ["grep"]),
        ("Keep the lines whose status is 500, in input order.", GREP, []),
        ("Redirect the output to /app/report.txt.", GREP, ["redirect"]),
        ("With grep, keep the lines of /app/data/access.log.", "awk '$4 > 1' /app/x > /app/o", []),  # not its program
        ("Count each status; the counts are sorted by status, as numbers.", PIPE, []),  # "sorted" is a word
        ("Count each status with `sort -n` and `uniq -c`.", PIPE, ["sort", "uniq"]),
        ("Use the sort command, then count each status.", PIPE, ["sort"]),
        ("Read both logs (`-f` reads plain files too) and count each status.", PIPE, ["-f"]),
        ("The unique statuses, one per line, from /app/logs/a.log.", PIPE, []),  # "unique" is no `uniq`
        ("Read /app/logs/b.gz decompressed; zcat reads it.", PIPE, ["zcat"]),
        # v20 A1 #6 and #7: steps to follow, and the blind solver opened an editor
        (
            "Follow these steps:\n1. Open the file `/app/data/access.log` in a text editor.",
            GREP,
            ["follow these steps"],
        ),
        ("Keep the lines in the order they have in the file.", GREP, []),
        ("This script reads the logs and counts the matching lines.", GREP, ["this script"]),
        ("Write a script that keeps the lines of status 500.", GREP, []),
    ],
)
def test_the_solutions_programs_named_in_the_instruction(instruction: str, script: str, named: list[str]) -> None:
    assert commands_named(instruction, script) == named


# yield series v19 A1 #1, recorded and reproduced: the blind solver followed the recipe
RECIPE = (
    "To produce the file `/app/report.txt` containing only the lines where the status code is 500, from the input "
    "file `/app/data/access.log`, keep them in input order.\n\n"
    "### How to Solve\n"
    '- Use the `grep` command to search for lines containing the string "500".\n'
    "- Redirect the output to `/app/report.txt`.\n\n"
    "Each line of the output is a whole input line. Use grep for it."
)


def test_the_sentences_that_say_how_are_cut_and_their_empty_heading_with_them() -> None:
    assert without_commands(RECIPE, GREP) == (
        "To produce the file `/app/report.txt` containing only the lines where the status code is 500, from the "
        "input file `/app/data/access.log`, keep them in input order.\n\nEach line of the output is a whole input line."
    )
    assert without_commands("Keep the lines of status 500 in /app/report.txt, in order.", GREP) is None  # no how
    # nothing but how: no prose is left to stand
    assert without_commands("Use `grep` on /app/data/access.log. Redirect it to /app/report.txt.", GREP) is None


@pytest.mark.parametrize(
    ("reply", "kept"),
    [
        # v16 A1 #18 ended inside an explanation
        (
            "Keep the lines of status 400.\n**Explanation:**\n- The `awk` command is used.\n- The `($4 >=",
            "Keep the lines of status 400.\n**Explanation:**\n- The `awk` command is used.",
        ),
        # v13 A1 #12 ended on a list item's number
        (
            "Keep the lines with 404.\n### How\n1. Read the file.\n4",
            "Keep the lines with 404.\n### How\n1. Read the file.",
        ),
        ("Keep the lines with 404. They keep their order and the", "Keep the lines with 404."),
        ("Keep the lines with 404.\nDo it as follows:\n```bash\ngrep 404 /app/x", "Keep the lines with 404."),
        ("Keep the lines with 404.", "Keep the lines with 404."),
    ],
)
def test_a_reply_cut_at_its_cap_loses_its_unfinished_end(reply: str, kept: str) -> None:
    assert without_cut_tail(reply) == kept


LOG = "10.0.0.1 GET /index.html 200\n10.0.0.2 GET /missing 404\n10.0.0.1 POST /login 500\n"


@pytest.mark.parametrize(
    ("instruction", "broken"),
    [
        # v19 A1 #1: the output of `grep 500` is the login line alone
        (
            "The output file will start with the first line of the input file, which is "
            "`10.0.0.1 GET /index.html 200`.",
            True,
        ),
        ("The output starts with `10.0.0.1 POST /login 500`.", False),  # it does
        ("Each line of the output looks like `10.0.0.1 GET /index.html 200`.", False),  # a format, not a line of it
        ("The output does not contain `10.0.0.1 GET /index.html 200`.", False),  # a negation
        ("Remove `10.0.0.2 GET /missing 404` from the result.", False),  # a removal
        ("The input starts with `10.0.0.1 GET /index.html 200`.", False),  # about the input
    ],
)
def test_an_input_line_the_instruction_claims_for_the_output(instruction: str, broken: bool) -> None:
    inputs = {"/app/data/access.log": LOG}
    found = quote_violation(instruction, "10.0.0.1 POST /login 500\n", inputs)
    assert (found is not None) is broken, found
    assert contradiction(instruction, "10.0.0.1 POST /login 500\n", inputs) == found
    if broken:
        assert "`10.0.0.1 GET /index.html 200`" in str(found)


LOGIN_LOG = LOG + "10.0.0.3 GET /login 500\n10.0.0.4 get /Admin 200\n"


@pytest.mark.parametrize(
    ("instruction", "output", "broken"),
    [
        # a flywheel round on 265fe3a: `grep "GET /login"`, and the POST /login line has the word too
        ("Select lines where the request path contains the word 'login'", "10.0.0.3 GET /login 500\n", "lacks"),
        ("Keep only the lines containing 'login'.", "10.0.0.1 POST /login 500\n10.0.0.3 GET /login 500\n", None),
        ("Keep only lines containing the word 'admin'.", "10.0.0.4 get /Admin 200\n", None),  # grep -i: case aside
        ("Keep only the lines that contain 'GET'.", LOG + "10.0.0.3 GET /login 500\n", "does not hold"),
        # more than one condition, a negation, a removal, a number: not the plain rule this reads
        ("Select lines containing 'GET' whose status is 500.", "10.0.0.3 GET /login 500\n", None),
        ("Keep the lines with 'login' that use GET or POST.", "10.0.0.3 GET /login 500\n", None),
        ("Keep the lines that do not contain 'login'.", "10.0.0.2 GET /missing 404\n", None),
        ("Select the lines containing 'login' from the first 3 lines.", "10.0.0.1 POST /login 500\n", None),
        ("Keep only lines containing 'GET' and 'login'.", "10.0.0.3 GET /login 500\n", None),  # two quoted texts
        ("Count the lines containing 'login'.", "2\n", None),  # no filter: the output is no input line
    ],
)  # fmt: skip
def test_the_lines_holding_the_one_text_the_instruction_keeps(
    instruction: str, output: str, broken: str | None
) -> None:
    from autoenvscaling.roles.proposer.staged.claims import keep_violation

    inputs = {"/app/data/access.log": LOGIN_LOG}
    found = keep_violation(instruction, output, inputs)
    assert (found is None) is (broken is None), found
    if broken is not None:
        assert broken in str(found) and contradiction(instruction, output, inputs) == found


GAP_LOG = LOG + "10.0.0.3 GET /missing 404\n10.0.0.4 GET /admin 403\n"
ERRORS = "10.0.0.2 GET /missing 404\n10.0.0.3 GET /missing 404\n10.0.0.4 GET /admin 403\n"  # grep -E '40[0-9]'


@pytest.mark.parametrize(
    ("instruction", "output", "lacks"),
    [
        # the hackable-share runs: "greater than 400" of a `grep -E '40[0-9]'`, the 500 line left out
        ("Select lines where the status code is greater than 400.", ERRORS, "10.0.0.1 POST /login 500"),
        ("Keep the requests with a status code less than 500.", "10.0.0.1 GET /index.html 200\n",
         "10.0.0.2 GET /missing 404"),
        # a hint's words are no second condition: the input hint's GET is in every kept line, not in the 500 one
        ("Select lines with status above 400.\nA line of /app/data/access.log looks like: "
         "`10.0.0.1 GET /index.html 200`", ERRORS, "10.0.0.1 POST /login 500"),
        # a second condition the instruction names: a word in every kept line and not in the missing one
        ("Select the GET requests with a status above 400.", ERRORS, None),
        ("Keep lines with status greater than 400 whose path has admin.", "10.0.0.4 GET /admin 403\n", None),
        # only some of the lines: the first, the unique ones
        ("Write the first line with a status above 400.", "10.0.0.2 GET /missing 404\n", None),
        ("Write the unique paths' lines with a status above 400.", "10.0.0.2 GET /missing 404\n"
         "10.0.0.4 GET /admin 403\n10.0.0.1 POST /login 500\n", None),
        # no gap, no plain claim, no filter
        ("Select lines where the status code is at least 400.", LOG[29:] + "10.0.0.3 GET /missing 404\n"
         "10.0.0.4 GET /admin 403\n", None),
        ("Select lines whose status is not below 400.", ERRORS, None),
        ("Count the lines with a status above 400.", "3\n", None),
    ],
)  # fmt: skip
def test_an_input_line_that_holds_the_stated_comparison_missing_from_the_output(
    instruction: str, output: str, lacks: str | None
) -> None:
    from autoenvscaling.roles.proposer.staged.claims import claim_gap

    inputs = {"/app/data/access.log": GAP_LOG}
    found = claim_gap(instruction, output, inputs)
    assert (found is None) is (lacks is None), found
    if lacks is not None:
        assert f"lacks the input line `{lacks}`" in str(found) and contradiction(instruction, output, inputs) == found


# The one-shot baseline's sections reply: code needs no JSON escaping (yield series v20: 6 of P1's 11 JSON replies
# ended their solve_sh at the first quote of a comment copied from the parent, a `"` left unescaped).
SECTIONS = """operator: filter
change: Keep the requests of status 404
output_file: /app/missing.txt
compare: exact
```data
10.0.0.9 GET /gone 404
```
```instruction
Write the lines of /app/data/access.log whose status is 404 to /app/missing.txt, in input order.
```
```bash
# the status follows the path: `"GET /x" 404`
awk '$4 == 404' /app/data/access.log > /app/missing.txt
```
"""


def test_a_sections_reply_holds_every_piece_of_the_one_shot_task() -> None:
    from autoenvscaling.roles.proposer.staged.oneshot import parse_sections

    shot = parse_sections(SECTIONS)
    assert shot is not None
    assert (shot.operator, shot.change, shot.output_file, shot.compare) == (
        "filter", "Keep the requests of status 404", "/app/missing.txt", "exact",
    )  # fmt: skip
    assert shot.data == "10.0.0.9 GET /gone 404"
    assert shot.instruction.startswith("Write the lines of /app/data/access.log whose status is 404")
    assert shot.solve_sh.splitlines() == ['# the status follows the path: `"GET /x" 404`',
                                          "awk '$4 == 404' /app/data/access.log > /app/missing.txt"]  # fmt: skip
    # headers in bold, an unknown operator, untagged blocks: instruction then script, no data
    loose = (
        "**operator**: rewrite\n**compare**: sorted_lines\n```\nKeep the 404 lines of a log.\n```\n```\nawk 1 f\n```"
    )
    shot = parse_sections(loose)
    assert shot is not None and shot.operator == "new_question" and shot.compare == "sorted_lines"
    assert (shot.instruction, shot.solve_sh, shot.data) == ("Keep the 404 lines of a log.", "awk 1 f", "")
    assert parse_sections("operator: filter\n```instruction\nKeep them.\n```") is None  # no script
    assert parse_sections("I cannot do that.") is None
