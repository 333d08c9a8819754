"""Claims about the input lines an output line comes from, and the part of them it is (``staged/sources.py``)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from autoenvscaling.roles.proposer.staged.claims import contradiction
from autoenvscaling.roles.proposer.staged.sources import (
    both_violation,
    field_violation,
    lacking_violation,
    lines_violation,
    source_lines,
)

Check = Callable[[str, str, dict[str, str]], str | None]


def _finds(check: Check, instruction: str, output: str, inputs: dict[str, str], broken: str | None) -> None:
    """``check`` finds what ``broken`` names (None: nothing), and ``contradiction`` reports the same."""
    found = check(instruction, output, inputs)
    assert (found is None) is (broken is None), found
    if broken is not None:
        assert broken in str(found)
        assert contradiction(instruction, output, inputs) == found


CONF = "# service\nhost = 0.0.0.0\nport = 8080\n\n# logging\nlog_level = debug\nlog_file = /var/log/app.log\n"
KEYS = "host\nport\nlog_level\nlog_file\n"  # awk -F' = ' '!/^#/ && NF == 2 {print $1}' | grep -v debug


def test_an_output_line_comes_from_the_input_lines_equal_to_it_or_holding_it_as_a_field() -> None:
    inputs = {"/app/data/app.conf": CONF}
    assert source_lines("port = 8080", inputs) == ["port = 8080"]
    assert source_lines("log_level", inputs) == ["log_level = debug"]
    assert source_lines("8080", inputs) == ["port = 8080"]
    assert source_lines("/var/log/app.log", inputs) == ["log_file = /var/log/app.log"]
    assert source_lines("log", inputs) == []  # part of a field: no source
    assert source_lines("4", inputs) == []  # a count


@pytest.mark.parametrize(
    ("instruction", "output", "broken"),
    [
        # hackable-share round 1 on 91f0ca8: accepted, learnable, and the tests want log_level
        ("- Keep only the lines that do not contain the word 'debug'.", KEYS, "`log_level = debug`"),
        ("To keep only all lines that do not contain the word 'debug' from the input file `/app/data/app.conf`.",
         "log_level\n", "`log_level = debug`"),
        ("Write the rows which don't contain `8080`.", "port = 8080\nhost = 0.0.0.0\n", "`port = 8080` holds it"),
        ("- Keep only the lines that do not contain the word 'debug'.", "host\nport\nlog_file\n", None),  # as said
        ("Keep the lines that do not contain 'debug'.", "# logging\n", None),  # as said, whole lines
        # a removal of the lines that lack it keeps them; "filter" goes either way; an alternative
        ("Remove all lines that do not contain the word 'debug'.", "log_level = debug\n", None),
        ("Filter lines that do not contain the word 'debug'.", "log_level = debug\n", None),
        ("Keep the lines that do not contain 'debug' or 'host'.", "log_level\n", None),
        ("Keep the keys that do not contain 'debug'.", "log_level\n", None),  # said of the keys: log_level lacks it
        ("Print the number of lines that do not contain 'debug'.", "4\n", None),  # a count comes from no line
    ],
)  # fmt: skip
def test_an_output_line_from_an_input_line_holding_the_text_the_kept_lines_lack_is_a_contradiction(
    instruction: str, output: str, broken: str | None
) -> None:
    _finds(lacking_violation, instruction, output, {"/app/data/app.conf": CONF}, broken)


DEBUG_CONF = CONF + "timeout = 30\ndebug = debug\n"
EITHER = "log_level = debug\nlog_file = /var/log/app.log\ndebug = debug\n"  # grep -E 'debug|log_file'


@pytest.mark.parametrize(
    ("instruction", "output", "broken"),
    [
        # demo series on 6f2b879: accepted, learnable, and the tests want the lines holding either text
        ("select lines containing 'debug' and 'log_file'", EITHER, "`log_level = debug` lacks one of them"),
        ("Keep the lines that contain both the words `log` and `debug`.", "log_file = /var/log/app.log\n",
         "lacks one of them"),
        ("Select lines containing 'debug' and 'log_file' and save them to /app/filtered.txt.", EITHER,
         "lacks one of them"),  # a path's words turn nothing
        ("Keep the settings with 'log' and 'debug'.", "log_level\n", None),  # a key of a line that holds both
        ("Keep the lines that contain 'log' and 'debug'.", "log_level = debug\n", None),  # as said
        # an alternative, a negation or a removal says something else; a count comes from no line
        ("Keep the lines containing 'debug' or 'log_file'.", EITHER, None),
        ("Remove the lines containing 'debug' and 'log_file'.", "host = 0.0.0.0\n", None),
        ("Keep the lines that do not contain 'debug' and 'port'.", "host = 0.0.0.0\n", None),
        ("Count the lines containing 'debug' and 'log'.", "1\n", None),
    ],
)  # fmt: skip
def test_an_output_line_from_input_lines_without_both_texts_the_kept_lines_hold_is_a_contradiction(
    instruction: str, output: str, broken: str | None
) -> None:
    _finds(both_violation, instruction, output, {"/app/data/app.conf": DEBUG_CONF}, broken)


ROOT, ALICE = "root:x:0:0:root:/root:/bin/bash\n", "alice:x:1000:1000:Alice:/home/alice:/bin/bash\n"
PASSWD = ROOT + "bob:x:1001:1001:Bob:/home/bob:/bin/sh\n" + ALICE
BASH = ROOT + ALICE  # awk -F: '$7 == "/bin/bash"'


@pytest.mark.parametrize(
    ("instruction", "output", "broken"),
    [
        # hackable-share round 2 on 91f0ca8: accepted, too hard, and the tests want whole lines
        ("Rule:\nThe script extracts the first column of the input file (username) where the seventh column (shell) "
         "is `/bin/bash`.", BASH, "extracts the first column"),
        ("Print the 2nd field of the lines whose shell is /bin/bash.", BASH, "Print the 2nd field"),
        ("The script extracts the first column (username) of the /bin/bash lines.", "root\nalice\n", None),  # it does
        ("Keep the lines whose first field is root.", ROOT, None),  # a condition
        ("Do not print the first field alone: write the whole lines.", BASH, None),  # a negation
        ("Extract the last column of each line.", "/bin/bash\n/bin/sh\n", None),  # fields, not lines
    ],
)  # fmt: skip
def test_whole_lines_where_the_instruction_extracts_a_field_are_a_contradiction(
    instruction: str, output: str, broken: str | None
) -> None:
    _finds(field_violation, instruction, output, {"/app/data/passwd": PASSWD}, broken)


SERVICE = "service = 0.0.0.0\nservice_port = 8080\n"  # grep '^service'


@pytest.mark.parametrize(
    ("instruction", "output", "inputs", "broken"),
    [
        # hackable-share rounds 1 and 3 on 87e9130: accepted, and the tests want whole lines
        ("3. The rule is to select the keys of all settings that start with 'service' and are not comments.",
         SERVICE, {"/app/data/app.conf": CONF + SERVICE}, "select the keys"),
        ("- The filtered lines are then sorted.\n- The sorted list of usernames is written to `/app/out.txt`.",
         BASH, {"/app/data/passwd": PASSWD}, "The sorted list of usernames is written"),
        ("The output contains the IP addresses of the requests with status 404.", "10.0.0.2 GET /missing 404\n",
         {"/app/data/access.log": "10.0.0.1 GET / 200\n10.0.0.2 GET /missing 404\n"}, "contains the IP addresses"),
        ("Print the usernames of the users whose shell is /bin/bash.", "root\nalice\n",
         {"/app/data/passwd": PASSWD}, None),  # it does
        ("Keep the lines that contain the keys starting with 'service'.", SERVICE,
         {"/app/data/app.conf": CONF + SERVICE}, None),  # said of lines
        ("Keep the settings whose keys start with 'service'.", SERVICE, {"/app/data/app.conf": CONF + SERVICE},
         None),  # "settings" name lines
        ("List the keys and values of the service settings.", SERVICE, {"/app/data/app.conf": CONF + SERVICE},
         None),  # one of several fields
        ("Do not print the usernames alone: the whole passwd text of each bash user.", BASH,
         {"/app/data/passwd": PASSWD}, None),  # a negation before it
    ],
)  # fmt: skip
def test_whole_lines_where_the_instruction_names_the_field_it_selects_are_a_contradiction(
    instruction: str, output: str, inputs: dict[str, str], broken: str | None
) -> None:
    _finds(field_violation, instruction, output, inputs, broken)


LOG = "10.0.0.1 GET /index.html 200\n10.0.0.2 GET /missing 404\n10.0.0.1 POST /login 500\n10.0.0.3 GET /missing 404\n"
CODES = "404\n500\n404\n"  # awk '$4 >= 400 {print $4}'
HINTS = (
    "A line of /app/data/access.log looks like: `10.0.0.1 GET /index.html 200`; its field 4 (the last) is `200`.\n"
    "/app/errors.txt holds 3 lines; the first reads, for example: `404`"
)


@pytest.mark.parametrize(
    ("instruction", "output", "broken"),
    [
        # hackable-share round 2 on 96bef81: accepted, too hard, and the tests want the codes alone
        (f"Keep only lines where the status code is not less than 400\n{HINTS}", CODES, "Keep only lines"),
        ("select only the lines where the status code is greater than 399", "10.0.0.2\n10.0.0.1\n10.0.0.3\n",
         "select only the lines"),
        ("Find the requests with status 400 or more. The matching lines are then written to /app/errors.txt.",
         CODES, "matching lines are then written"),
        (f"Only print the status code if it is greater than 400.\n{HINTS}", CODES, None),  # says the part
        ("To extract lines where the status code is 400 or higher, the output should be saved to /app/errors.txt "
         "with each status code on a separate line.", CODES, None),  # "each status code"
        ("Select the lines where the status is 400 or more and save their IP addresses.",
         "10.0.0.2\n10.0.0.1\n10.0.0.3\n", None),  # says the part
        ("Keep only lines where the status code is not less than 400.", "10.0.0.2 GET /missing 404\n", None),  # lines
        ("Do not keep the lines: the status codes of the errors only.", CODES, None),  # a negation before it
        (f"Keep only lines where the status code is not less than 400\n{HINTS}", "2\n", None),  # a count
    ],
)  # fmt: skip
def test_one_field_where_the_instruction_says_lines_is_a_contradiction(
    instruction: str, output: str, broken: str | None
) -> None:
    _finds(lines_violation, instruction, output, {"/app/data/access.log": LOG}, broken)
