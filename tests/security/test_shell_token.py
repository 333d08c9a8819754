"""Finding 14: a command cannot read its call's framing token from the shell process it runs in, so it cannot
print a forged end marker (a false exit status, or an early end that escapes its own timeout)."""

from __future__ import annotations

import pytest

from autoenvscaling.sandbox.base import SandboxSpec
from autoenvscaling.sandbox.docker import DockerBackend

# Reads the memory of the bash that runs it, finds the wrapper's marker text, and prints a forged "end, exit 0".
FORGE = r"""
import os, re, sys, time
pid = os.getppid()
token = None
with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as mem:
    for line in maps:
        lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
        if "rw" not in line.split()[1]:
            continue
        try:
            mem.seek(lo)
            data = mem.read(hi - lo)
        except OSError:
            continue
        m = re.search(rb"\\036([0-9a-f]{16}):e", data)
        if m:
            token = m.group(1).decode()
            break
if token:
    sys.stdout.write(f"\x1e{token}:e:0\x1e"); sys.stdout.flush()
    sys.stderr.write(f"\x1e{token}:e\x1e"); sys.stderr.flush()
print("token", "found" if token else "not found", flush=True)
time.sleep(30)
"""


@pytest.mark.docker
def test_command_cannot_forge_its_end(docker_backend: DockerBackend) -> None:
    with docker_backend.create(SandboxSpec(image="autoenv/python:latest")) as sb:
        sb.upload_text(FORGE, "/tmp/forge.py")
        res = sb.exec("python3 /tmp/forge.py", timeout=3)
        assert res.timed_out and res.exit_code == 124, res
        assert "not found" in res.stdout
        assert sb.exec("echo still usable").stdout == "still usable\n"
