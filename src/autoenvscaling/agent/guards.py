"""What the loop does for small models, kept out of the loop's steps: the first lines of the task's input files
shown up front, a re-sent plan advanced to its first block that never ran, a command identical to the previous
one refused, generation stopped at a block's closing fence, a look at the output asked for before submitting, and a
submit refused while a file the task names is still missing or empty."""

from __future__ import annotations

import re
import shlex
from collections.abc import Container

from autoenvscaling.agent.actions import Action
from autoenvscaling.llm.base import ModelResponse, Sampling
from autoenvscaling.sandbox.base import Sandbox, SandboxError

REVIEW = (
    "Before you submit, check your work: print what you wrote (`cat` or `head` the output files) and compare it "
    "with the task, line by line: the exact format, and that every line that belongs there is there and nothing "
    "else. Fix what is wrong. When it is right, reply submit again."
)
REPEATED = (
    "Not run again: this is the same command as your previous reply, and its result would be the same (see the "
    "output above). Try a different command: look at the input files, fix what failed, or check your output."
)
_ABS_PATH = re.compile(r"(?<![\w./-])(/(?:[\w.@+-]+/)*[\w.@+-]+)")
_PREVIEW_LINES = 5
# A closing fence (an opening one carries its language tag, ```bash), also indented as in a numbered list: small
# models put their plan's blocks in one, and a stop at column 0 only let every block of it through.
_BLOCK_ENDS = ["\n```\n", "\n  ```\n", "\n   ```\n", "\n    ```\n"]
_FENCE_LINE = re.compile(r"^[ \t]*```", re.MULTILINE)


def input_preview(sandbox: Sandbox, task_prompt: str, limit: int) -> str:
    """The first lines of up to ``limit`` existing files the task names by absolute path, as one shell run shows
    them; empty when ``limit`` is 0, when none exists, or when the sandbox cannot run it (the agent then looks for
    itself)."""
    paths = named_paths(task_prompt)
    if not limit or not paths:
        return ""
    quoted = " ".join(shlex.quote(p) for p in paths[:16])
    script = (
        f'n=0; for f in {quoted}; do [ -f "$f" ] && [ -r "$f" ] || continue; '
        f"n=$((n+1)); [ $n -gt {limit} ] && break; "
        f'printf \'$ head -n {_PREVIEW_LINES} %s\\n\' "$f"; head -n {_PREVIEW_LINES} -- "$f" | cut -c1-200; done'
    )
    try:
        result = sandbox.exec(script, timeout=10)
    except SandboxError:
        return ""
    return result.output.strip("\n") if result.exit_code == 0 and not result.timed_out else ""


def named_paths(task_prompt: str) -> list[str]:
    """The absolute paths the task names, in order, without repeats."""
    return list(dict.fromkeys(m.group(1).rstrip(".,:;)") for m in _ABS_PATH.finditer(task_prompt)))


def _each_failing(sandbox: Sandbox, test: str, paths: list[str]) -> list[str] | None:
    """The paths for which ``test -<test> PATH`` fails, one short exec each (None when the sandbox cannot say)."""
    failing = []
    for path in paths:
        try:
            result = sandbox.exec(f"test -{test} {shlex.quote(path)}", timeout=10)
        except SandboxError:
            return None
        if result.timed_out or result.exit_code not in (0, 1):
            return None
        if result.exit_code == 1:
            failing.append(path)
    return failing


def expected_outputs(
    sandbox: Sandbox, task_prompt: str, declared: list[str] | None = None, limit: int = 8
) -> list[str]:
    """The paths the task names that do not exist yet and are likely what it asks for (empty when the sandbox
    cannot say): with ``declared`` (the task's artifacts), the named paths that are, or lie under, one of them;
    without, the named paths below an existing top-level directory (``/app/out.txt`` when ``/app`` exists), so the
    URL paths of an example log line (``/index.html``, ``/api/items``) do not count."""
    named = named_paths(task_prompt)[:16]
    if declared is not None:
        roots = [d.rstrip("/") for d in declared]
        named = [p for p in named if any(p == r or p.startswith(r + "/") for r in roots)]
    else:
        tops = sorted({"/" + p.split("/")[1] for p in named if p.count("/") >= 2})
        absent = _each_failing(sandbox, "d", tops)
        missing_tops = set(tops if absent is None else absent)
        named = [p for p in named if p.count("/") >= 2 and "/" + p.split("/")[1] not in missing_tops]
    return (_each_failing(sandbox, "e", named) or [])[:limit]


def missing_outputs(sandbox: Sandbox, paths: list[str]) -> list[str]:
    """The ``paths`` that are still missing, or files with nothing in them (none when the sandbox cannot say)."""
    return _each_failing(sandbox, "s", paths) or []


def outputs_missing_note(paths: list[str]) -> str:
    listed = ", ".join(paths)
    return (
        f"Not submitted: the task names {listed}, which is still missing or empty. Write what the task asks for "
        "there, print it to check it, then reply submit again."
    )


def skip_replayed_plan(action: Action, ran: Container[str]) -> Action:
    """A small model re-sends its whole plan: when the first block already ran, its first block that never ran
    is the new step (``action`` as it is otherwise)."""
    if not action.skipped_blocks or action.command not in ran:
        return action
    fresh = [b for b in action.skipped_blocks if b not in ran]
    if not fresh:
        return action
    return action.model_copy(update={"command": fresh[0], "skipped_blocks": fresh[1:], "first_block_repeated": True})


def stop_at_block_end(sampling: Sampling | None) -> Sampling:
    """``sampling`` with generation stopping at a fenced block's closing fence."""
    return (sampling or Sampling()).model_copy(update={"stop": list(_BLOCK_ENDS)})


def close_open_block(response: ModelResponse, sampling: Sampling | None) -> ModelResponse:
    """A reply that ended at a stop string inside a fenced block (an odd number of fence lines) gets its closing
    fence back."""
    if sampling is None or not sampling.stop or len(_FENCE_LINE.findall(response.content)) % 2 == 0:
        return response
    return response.model_copy(update={"content": response.content.rstrip("\n") + "\n```"})
