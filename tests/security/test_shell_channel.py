"""Finding 14, across phases: a process the agent leaves behind (same user as the shell, root by default) can open
the persistent shell's stdin and stdout through /proc, stop the shell, take the harness's next commands and answer
them itself: in shared mode it took the verifier's commands (the process sweep, the reset of /logs/verifier, the
tests) and answered "done, exit 0" while its own reward.txt = 1 stood. The sweep now runs outside the shells, which
are then replaced, so nothing it missed can reach the verifier's commands."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hostile import MakeTask

from autoenvscaling.images.catalog import BASE_IMAGE
from autoenvscaling.sandbox.base import SandboxSpec
from autoenvscaling.sandbox.docker import DockerBackend
from autoenvscaling.tasks import load_task
from autoenvscaling.verify.environment import EnvironmentBuilder
from autoenvscaling.verify.trial import TrialRunner
from autoenvscaling.verify.trial_agents import OracleAgent

# Waits until the shell is back in read(0) after the solution's call, stops it, then answers every line it gets.
THIEF = r"""
for d in /proc/[0-9]*; do grep -qa __aes_line "$d/cmdline" 2>/dev/null && p=${d#/proc/}; done
until read -r s fd _ < /proc/$p/syscall && [ "$s $fd" = "0 0x0" ]; do :; done
kill -STOP "$p"
exec 7<"/proc/$p/fd/0" 8>"/proc/$p/fd/1" 9>"/proc/$p/fd/2"
mkdir -p /logs/verifier
while IFS= read -r line <&7; do
  t=${line#*\\036}; t=${t%%:s*}
  echo 1 > /logs/verifier/reward.txt
  printf '\036%s:s\036\036%s:e:0\036' "$t" "$t" >&8
  printf '\036%s:s\036\036%s:e\036' "$t" "$t" >&9
done
"""
START_THIEF = f"cat > /tmp/thief.sh <<'EOF'\n{THIEF}EOF\nsetsid bash /tmp/thief.sh > /dev/null 2>&1 < /dev/null &"
SHELLS = r"for d in /proc/[0-9]*; do grep -qa __aes_line $d/cmdline 2>/dev/null && echo ${d#/proc/}; done; true"


@pytest.mark.docker
@pytest.mark.parametrize("mode", ["shared", "separate"])
def test_a_leftover_process_cannot_answer_the_verifiers_commands(
    make_task: MakeTask, docker_backend: DockerBackend, tmp_path: Path, mode: str
) -> None:
    root = make_task(
        solve=START_THIEF, test="echo 0 > /logs/verifier/reward.txt", verifier=f'environment_mode = "{mode}"'
    )
    runner = TrialRunner(docker_backend, EnvironmentBuilder(docker_backend), prewarm=False)
    res = runner.run(load_task(root), OracleAgent(), tmp_path / "trial")
    assert res.exception_info is None, res.exception_info
    assert res.reward == 0.0  # before: 1.0 in shared mode, from the thief's file; the tests never ran


@pytest.mark.docker
def test_reset_channel_replaces_a_stopped_shell_and_reports_the_exit_status(docker_backend: DockerBackend) -> None:
    with docker_backend.create(SandboxSpec(image=BASE_IMAGE)) as sb:
        old = sb.exec(SHELLS).stdout.split()
        assert len(old) == 1
        sb.exec(f"setsid bash -c 'sleep 0.3; kill -STOP {old[0]}' > /dev/null 2>&1 < /dev/null &")
        time.sleep(1)  # the shell is stopped now, between calls
        assert sb.reset_channel("exit 3", timeout=10) == 3
        new = sb.exec(SHELLS, timeout=10).stdout.split()
        assert len(new) == 1 and new != old  # the stopped one was killed, a fresh one answers
        assert sb.reset_channel("sleep 5", timeout=0.5) == 124
