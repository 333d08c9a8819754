"""The harness's rewrites of a solve.sh for known shell pitfalls (``staged/fixes.py``): what each rewrites, what it
leaves alone, and when one is tried at all. Their real runs are in ``test_staged_docker.py``."""

from __future__ import annotations

import pytest

from autoenvscaling.roles.proposer.staged import record as rec
from autoenvscaling.roles.proposer.staged.fixes import (
    command_spans,
    grep_alternation,
    grep_whole_lines,
    grep_without_names,
    gz_as_text,
    misread_field,
    near_miss_paths,
    piped_into_zcat,
    shell_fix,
    unmatched_grep,
)

LOGS = ["/app/logs/access.log", "/app/logs/access.log.1", "/app/logs/access.log.2.gz"]
FILES = " ".join(LOGS)


def test_commands_are_split_outside_quotes_only() -> None:
    script = "grep -E 'a|b' x | sort; echo \"1;2\" && wc -l y\nz"
    assert [script[a:b].strip() for a, b in command_spans(script)] == [
        "grep -E 'a|b' x",
        "sort",
        'echo "1;2"',
        "wc -l y",
        "z",
    ]


@pytest.mark.parametrize(
    ("script", "fixed"),
    [
        (f"grep -oE 'GET .*' {FILES} > /app/r.txt", f"grep -h -oE 'GET .*' {FILES} > /app/r.txt"),
        ("egrep 'a|b' /app/x /app/y | sort", "egrep -h 'a|b' /app/x /app/y | sort"),
        ("zcat /app/x.gz | grep a > /app/r", "zcat /app/x.gz | grep -h a > /app/r"),
        ("awk '/grep/' /app/x > /app/r", "awk '/grep/' /app/x > /app/r"),  # a word in a program, not a command
        ("/usr/bin/grep a /app/x /app/y", "/usr/bin/grep -h a /app/x /app/y"),
    ],
)
def test_grep_gets_h(script: str, fixed: str) -> None:
    assert grep_without_names(script) == fixed


@pytest.mark.parametrize(
    ("script", "fixed"),
    [
        # yield series v14 #0: `|` is a plain character in a basic regex, so -v removed nothing
        ("grep -v '404|500' /app/a > /app/r", "grep -E -v '404|500' /app/a > /app/r"),
        ('zgrep -h "GET|PUT" /app/a /app/b.gz', 'zgrep -E -h "GET|PUT" /app/a /app/b.gz'),
        ("grep -c x /app/a | grep -v 'a|b' > /app/r", "grep -c x /app/a | grep -E -v 'a|b' > /app/r"),
        # left alone: a syntax chosen already, an escaped \|, egrep, no grep
        ("grep -Fv 'a|b' /app/a", None),
        ("grep -P 'a|b' /app/a", None),
        ("grep 'a\\|b' /app/a", None),
        ("egrep 'a|b' /app/a", None),
        ("awk '/a|b/' /app/a", None),
    ],
)
def test_grep_reads_an_alternation_as_one(script: str, fixed: str | None) -> None:
    assert grep_alternation(script) == (fixed if fixed is not None else script)


@pytest.mark.parametrize(
    ("script", "fixed"),
    [
        (f"zgrep -h -oE '^[^ ]+ [4-9][0-9]' {FILES} > /app/r", f"zgrep -h -E '^[^ ]+ [4-9][0-9]' {FILES} > /app/r"),
        ("grep -o ERROR /app/x | sort", "grep ERROR /app/x | sort"),
        ('grep -Eo "x" /app/x; grep -hoi y /app/y', 'grep -E "x" /app/x; grep -hi y /app/y'),
        ("grep --only-matching -i x /app/x", "grep -i x /app/x"),
        ("grep -e -o /app/x", "grep -e -o /app/x"),  # the pattern "-o", not the option
        ("awk '/x/' /app/x | sort -o /app/r", "awk '/x/' /app/x | sort -o /app/r"),  # no grep: left alone
    ],
)
def test_grep_prints_whole_lines(script: str, fixed: str) -> None:
    assert grep_whole_lines(script) == fixed


@pytest.mark.parametrize(
    ("script", "fixed"),
    [
        (f"grep -c ' 404 ' {FILES} > /app/r", f"zgrep -c ' 404 ' {FILES} > /app/r"),
        (f"egrep 'a|b' {FILES}", f"zgrep -E 'a|b' {FILES}"),
        (f"cat {FILES} | grep -E 'a|b' > /app/r", f"zcat -f {FILES} | grep -E 'a|b' > /app/r"),
        (
            "awk '{print $9}' /app/a \"/app/b.gz\" | sort | uniq -c > /app/r",
            "awk '{print $9}' /app/a <(zcat -f \"/app/b.gz\") | sort | uniq -c > /app/r",
        ),
        ("while read l; do echo $l; done < /app/x.gz", "while read l; do echo $l; done < <(zcat -f /app/x.gz)"),
        # left alone: tools that read .gz themselves, and commands that name a .gz file without reading it
        ("zcat /app/x.gz | awk '{print $1}' > /app/r", None),
        ("gzip -dc /app/x.gz | sort > /app/r", None),
        ("find /app -name '*.gz' > /app/r", None),
        ("ls /app/logs/*.gz > /app/r", None),
        ("grep a /app/x > /app/r", None),
    ],
)
def test_a_gz_input_read_as_text_is_decompressed(script: str, fixed: str | None) -> None:
    assert gz_as_text(script) == (fixed if fixed is not None else script)


def test_a_missing_path_becomes_the_input_it_nearly_names() -> None:
    stderr = "grep: /app/logs/access.log.2gz: No such file or directory"
    script, replaced = near_miss_paths("zgrep x /app/logs/access.log.2gz > /app/r", stderr, LOGS)
    assert script == "zgrep x /app/logs/access.log.2.gz > /app/r"
    assert replaced == {"/app/logs/access.log.2gz": "/app/logs/access.log.2.gz"}
    # No input is near enough, or two are about as near: nothing is guessed.
    far = "grep: /app/data/input.txt: No such file or directory"
    assert near_miss_paths("grep x /app/data/input.txt", far, LOGS)[1] == {}
    tie = "cat: /app/logs/b.log: No such file or directory"
    assert near_miss_paths("cat /app/logs/b.log", tie, ["/app/logs/a.log", "/app/logs/c.log"])[1] == {}


def _run(stderr: str = "", exit_code: int = 0) -> rec.SolutionRun:
    return rec.SolutionRun(exit_code=exit_code, stderr_tail=stderr)


def test_a_fix_is_tried_only_for_the_failure_it_explains() -> None:
    prefix = (rec.OUTPUT_FILE_PREFIX, "...")
    plain = f"grep -E 'a' {' '.join(LOGS[:2])} > /app/r"
    fix = shell_fix(plain, prefix, _run(), LOGS)
    assert fix is not None and fix.name == "grep-h" and "grep -h -E" in fix.script
    both = shell_fix(f"grep a {FILES} > /app/r", prefix, _run(), LOGS)
    assert both is not None and both.name == "gz+grep-h" and both.script == f"zgrep -h a {FILES} > /app/r"
    # A run that passed every guard while grep skipped the compressed file (said or not): its output lacks
    # those lines, though the instruction will name the file.
    said = _run("grep: /app/logs/access.log.2.gz: binary file matches")
    for run in (said, _run()):
        skipped = shell_fix(f"grep 'PUT' {FILES} | awk '{{print $NF}}' > /app/r", None, run, LOGS)
        assert skipped is not None and skipped.name == "gz" and skipped.script.startswith("zgrep 'PUT'")
    typo = "grep x /app/logs/access.log.2gz > /app/r"
    missing = _run("grep: /app/logs/access.log.2gz: No such file or directory", exit_code=2)
    path = shell_fix(typo, (rec.SOLUTION_FAILED, "..."), missing, LOGS)
    assert path is not None and path.name == "path+gz" and path.script == "zgrep x /app/logs/access.log.2.gz > /app/r"
    # Nothing to fix: a clean run, a failure none of the pitfalls explains, a script without the pitfall.
    cut = shell_fix("grep -oE '^[^ ]+ [4-9]' /app/logs/access.log > /app/r", (rec.OUTPUT_CUTS_FIELDS, ""), _run(), LOGS)
    assert cut is not None and cut.name == "grep-o" and cut.script.startswith("grep -E '^")
    alt = shell_fix("grep -v '404|500' /app/logs/access.log > /app/r", (rec.OUTPUT_COPIES_INPUT, ""), _run(), LOGS)
    assert alt is not None and alt.name == "grep-E" and alt.script.startswith("grep -E -v")
    assert shell_fix("grep -v '404|500' /app/logs/access.log > /app/r", (rec.OUTPUT_UNSTABLE, ""), _run(), LOGS) is None
    assert shell_fix(plain, None, _run(), LOGS) is None
    assert shell_fix(f"grep a {FILES} > /app/r", (rec.OUTPUT_UNSTABLE, "..."), _run(), LOGS) is None
    assert shell_fix("wc -l /app/logs/access.log > /app/r", prefix, _run(), LOGS) is None


LOG_LINES = {
    "/app/a.log": '10.0.0.1 - - [x] "GET /login HTTP/1.1" 404 5\n10.0.0.2 - - [x] "POST /admin HTTP/1.1" 500 7\n'
}


@pytest.mark.parametrize(
    ("script", "unmatched"),
    [
        # yield series v16 A1 #7: `error` in access logs that hold no such word
        ("grep -oP 'error' /app/a.log /app/b.log | wc -l > /o", "error"),
        ("set -euo pipefail\ngrep -i 'error' /app/a.log | wc -l > /o", "error"),
        ('zgrep -c "timeout" /app/a.log.gz > /o', "timeout"),
        ("grep -E 'ERR(OR)?' /app/a.log", "ERR(OR)?"),
        ("grep 'GET' /app/a.log > /o", None),
        ("grep -i get /app/a.log > /o", None),  # -i: GET holds it
        ("grep -E '40[0-9]|5..' /app/a.log", None),
        ("grep -v 'error' /app/a.log", None),  # -v selects every line
        ("grep -e error /app/a.log", None),  # -e, -f: not read
        ("grep 'x\\|y' /app/a.log", None),  # a basic regex with a backslash: not read
        ("grep 'unterminated /app/a.log", None),  # no shell words
    ],
)
def test_a_grep_pattern_that_no_input_line_holds_is_found(script: str, unmatched: str | None) -> None:
    assert unmatched_grep(script, LOG_LINES) == unmatched
    assert unmatched_grep(script, {}) is None


@pytest.mark.parametrize(
    ("script", "misread"),
    [
        # yield series v16 A1 #12: `$4 ~ /admin/` on lines whose path is $3
        ("awk '$4 ~ /admin/ {c[$4]++} END {for (s in c) print s, c[s]}' /app/a.log", ("$4 ~ /admin/", 6, "/admin")),
        ("awk '$1 ~ /^40[0-9]/' /app/a.log", ("$1 ~ /^40[0-9]/", 8, "404")),
        ("awk '$7 == \"404\"' /app/a.log", ('$7 == "404"', 8, "404")),
        ("awk '$6 ~ /admin/' /app/a.log", None),  # the right field
        ("awk '$9 >= 400' /app/a.log", None),  # a comparison: not read
        ("awk '$3 ~ /nowhere/' /app/a.log", None),  # no field passes it: the data's problem, not the field's
        ("awk '$2 ~ /[/' /app/a.log", None),  # not a regex Python reads
    ],
)
def test_an_awk_test_on_a_field_that_another_field_passes_is_found(
    script: str, misread: tuple[str, int, str] | None
) -> None:
    lines = '10.0.0.1 - - [x] "GET /index.html HTTP/1.1" 200 5\n10.0.0.2 - - [x] "GET /admin HTTP/1.1" 404 7\n'
    assert misread_field(script, {"/app/a.log": lines}) == misread


@pytest.mark.parametrize(
    ("script", "fixed"),
    [
        # zcat reads its own file, not the pipe: the two plain logs never reached the output
        (
            f"cat {LOGS[0]} {LOGS[1]} | zcat {LOGS[2]} | awk '$9 >= 400' > /app/r",
            f"zcat -f {LOGS[0]} {LOGS[1]} {LOGS[2]} | awk '$9 >= 400' > /app/r",
        ),
        (f"cat {LOGS[0]} | gunzip -c {LOGS[2]} > /app/r", f"zcat -f {LOGS[0]} {LOGS[2]} > /app/r"),
        # v15 #1's script: the pipeline goes on after a line continuation
        (f"cat {LOGS[0]} | zcat {LOGS[2]} \\\n  | sort > /app/r", f"zcat -f {LOGS[0]} {LOGS[2]} \\\n  | sort > /app/r"),
        (f"cat {LOGS[2]} | zcat | sort > /app/r", None),  # zcat of the pipe: it reads what cat sends
        (f"cat -n {LOGS[0]} | zcat {LOGS[2]} > /app/r", None),  # an option of cat's would be lost
    ],
)
def test_cat_piped_into_a_zcat_of_a_file_is_one_zcat(script: str, fixed: str | None) -> None:
    assert piped_into_zcat(script) == (fixed or script)
    fix = shell_fix(script, None, _run(), LOGS)  # the run failed no guard: the output just lacks lines
    assert ("cat-zcat" in fix.name.split("+") if fix else False) is (fixed is not None)
    if fixed:
        assert fix is not None and fix.script == fixed
