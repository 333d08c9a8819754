"""Shared-mode verification: no process started in the agent phase may still run when the tests start.

Otherwise a loop the agent left behind could rewrite ``/logs/verifier/reward.*`` after the tests wrote it.
``agent_phase_mark`` reads the kernel's clock (``/proc/uptime``) when the agent phase begins; ``end_agent_processes``
then stops and kills, as root, every process that started at or after that mark (the image's own services,
started before it, keep running). Only bash builtins are used, so any image with bash works.
"""

from __future__ import annotations

from autoenvscaling.sandbox.base import Sandbox, SandboxError, run_outside_channel

MARK_CMD = "read -r __up __idle < /proc/uptime && echo aes-uptime:$__up"
_TICKS_PER_SEC = 100  # USER_HZ: the unit of /proc/PID/stat start times on every Linux build we run on
END_SCRIPT_TAG = "# aes:end-agent-processes"
_PASSES = " ".join(str(i) for i in range(1, 7))

# Field 22 of /proc/PID/stat is the start time; after the ") " that ends the command name, it is word 20.
# Each pass stops every victim first (so none can fork a replacement) and then kills them. A process sent SIGKILL
# never runs again, so one still exiting (under load this takes a while) is not counted twice; only processes that
# appear after a pass (forked before their parent was stopped) need another.
_END_SCRIPT = (
    END_SCRIPT_TAG
    + """
t={mark}
declare -A killed
for pass in {passes}; do
  victims=()
  for d in /proc/[0-9]*; do
    p=${{d#/proc/}}
    case $p in 1|$$|$BASHPID|$PPID) continue;; esac
    read -r s 2>/dev/null < "$d/stat" || continue
    s=${{s##*) }}
    set -- $s
    [ "$1" = Z ] && continue
    [ -n "${{killed[$p:${{20}}]}}" ] && continue
    [ "${{20}}" -ge "$t" ] 2>/dev/null && victims+=("$p") && killed[$p:${{20}}]=1
  done
  [ ${{#victims[@]}} -eq 0 ] && exit 0
  kill -STOP "${{victims[@]}}" 2>/dev/null
  kill -KILL "${{victims[@]}}" 2>/dev/null
done
exit 1
"""
)


def agent_phase_mark(sandbox: Sandbox, before: str = "") -> int:
    """The kernel clock now (in /proc/PID/stat ticks), read in the sandbox as root (after ``before``, if given)."""
    res = sandbox.exec(f"{before} && {MARK_CMD}" if before else MARK_CMD, timeout=30, user="0")
    for word in res.stdout.split():
        if word.startswith("aes-uptime:"):
            try:
                return int(float(word.removeprefix("aes-uptime:")) * _TICKS_PER_SEC)
            except ValueError:
                break
    raise SandboxError(f"cannot prepare the sandbox (/logs, /proc/uptime): {res.output.strip()[-200:]}")


def end_agent_processes(sandbox: Sandbox, mark: int) -> None:
    """Kill every process started at or after ``mark`` (except this script and the shell running it).

    Outside the persistent shells, which are then replaced (``run_outside_channel``): a process the agent left could
    otherwise take this command, and those after it, from the shell's stdin and answer them itself (finding 14)."""
    script = _END_SCRIPT.format(mark=mark, passes=_PASSES)
    code = run_outside_channel(sandbox, script, timeout=60)
    if code != 0:
        raise SandboxError(f"could not end the agent phase's processes before the tests (exit {code})")
