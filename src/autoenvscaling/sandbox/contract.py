"""The behaviour every sandbox backend must show, as plain functions: ``check_*(backend, image)``.

Run them from a test suite (``tests/sandbox/test_contract.py`` does, for docker and the fake) or by hand
against a new backend. Each raises ``AssertionError`` with a message on failure and cleans up after itself.
The image needs bash and coreutils.
"""

from __future__ import annotations

import secrets
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from autoenvscaling.sandbox.base import ExecResult, Mount, Sandbox, SandboxBackend, SandboxError, SandboxSpec

Check = Callable[[SandboxBackend, str], None]


def expect(condition: object, message: str) -> None:
    if not condition:
        raise AssertionError(message)


def _ok(result: ExecResult, what: str) -> ExecResult:
    expect(result.exit_code == 0 and not result.timed_out, f"{what}: {result!r}")
    return result


@contextmanager
def _sandbox(backend: SandboxBackend, image: str, **spec: Any) -> Iterator[Sandbox]:
    sb = backend.create(SandboxSpec(image=image, name_hint="contract", **spec))
    try:
        sb.start()
        yield sb
    finally:
        sb.stop()


@contextmanager
def _tmpdir() -> Iterator[Path]:
    # files written by a container's root may not be removable by us: never fail the check on cleanup
    with tempfile.TemporaryDirectory(prefix="aes-contract-", ignore_cleanup_errors=True) as d:
        yield Path(d)


def check_exit_codes(backend: SandboxBackend, image: str) -> None:
    with _sandbox(backend, image) as sb:
        expect(sb.exec("true").exit_code == 0, "true should exit 0")
        expect(sb.exec("false").exit_code == 1, "false should exit 1")
        expect(sb.exec("exit 3").exit_code == 3, "exit 3 should exit 3")
        expect(sb.exec("echo still here").stdout == "still here\n", "exec after `exit 3` should work")


def check_stdout_stderr_separate(backend: SandboxBackend, image: str) -> None:
    with _sandbox(backend, image) as sb:
        r = sb.exec("echo out; echo err >&2")
        expect((r.stdout, r.stderr) == ("out\n", "err\n"), f"stdout and stderr should stay apart: {r!r}")
        r = sb.exec("printf 'no newline'")
        expect(r.stdout == "no newline", f"output without a final newline: {r!r}")


def check_env_and_cwd_per_call(backend: SandboxBackend, image: str) -> None:
    with _sandbox(backend, image, env={"SPEC_VAR": "from-spec"}) as sb:
        home = _ok(sb.exec("pwd"), "pwd").stdout
        expect(sb.exec("echo $SPEC_VAR").stdout == "from-spec\n", "the spec's env should be set")
        r = sb.exec("echo $CALL_VAR", env={"CALL_VAR": 'it\'s "quoted" $x'})
        expect(r.stdout == 'it\'s "quoted" $x\n', f"per-call env should arrive verbatim: {r!r}")
        expect(sb.exec("echo $CALL_VAR").stdout == "\n", "per-call env must not leak into the next call")
        _ok(sb.exec("export LEAK=1; cd /tmp"), "export and cd")
        expect(sb.exec("echo $LEAK").stdout == "\n", "an export must not leak into the next call")
        expect(sb.exec("pwd").stdout == home, "a cd must not leak into the next call")
        expect(sb.exec("pwd", cwd="/tmp").stdout == "/tmp\n", "cwd= should set the working directory")
        expect(sb.exec("pwd").stdout == home, "cwd= must not leak into the next call")


def check_timeout(backend: SandboxBackend, image: str) -> None:
    with _sandbox(backend, image) as sb:
        r = sb.exec("echo before; sleep 30", timeout=1)
        expect(r.timed_out and not r.ok, f"sleep 30 with timeout=1 should time out: {r!r}")
        expect(r.exit_code == 124, f"a timed-out command exits 124: {r!r}")
        expect(r.duration_sec < 25, f"the command should be killed at the timeout: {r!r}")
        expect(r.stdout == "before\n", f"output before the timeout is kept: {r!r}")
        expect(sb.exec("echo alive").stdout == "alive\n", "the sandbox should work after a timeout")


def check_output_cap(backend: SandboxBackend, image: str) -> None:
    with _sandbox(backend, image) as sb:
        text = "a" * 100 + "b" * 3000 + "c" * 100
        r = sb.exec(f"echo {text}", output_limit=200)
        expect(r.truncated, f"output over the limit should be marked truncated: {r.stdout[:300]!r}")
        expect(r.stdout.startswith("a" * 100) and r.stdout.endswith("c" * 99 + "\n"), "head and tail are kept")
        expect(len(r.stdout) < 400, f"the kept output should be near the limit, got {len(r.stdout)} chars")
        r = sb.exec("echo short", output_limit=200)
        expect(r.stdout == "short\n" and not r.truncated, "output under the limit is whole")


def check_upload_download_file(backend: SandboxBackend, image: str) -> None:
    data = bytes(range(256)) * 4 + "é\n".encode()
    with _tmpdir() as d, _sandbox(backend, image) as sb:
        (d / "in.bin").write_bytes(data)
        dst = f"/tmp/up-{secrets.token_hex(3)}/nested/file.bin"
        sb.upload(d / "in.bin", dst)  # parents are created
        _ok(sb.exec(f"test -f {dst}"), "uploaded file should exist")
        sb.download(dst, d / "out" / "file.bin")
        expect((d / "out" / "file.bin").read_bytes() == data, "file round trip should keep every byte")
        try:
            sb.download("/no/such/file", d / "missing")
        except SandboxError:
            pass
        else:
            raise AssertionError("downloading a missing file should raise SandboxError")


def check_upload_download_dir(backend: SandboxBackend, image: str) -> None:
    with _tmpdir() as d, _sandbox(backend, image) as sb:
        src = d / "src"
        (src / "sub").mkdir(parents=True)
        (src / "a.txt").write_text("alpha\n")
        (src / "sub" / "b.txt").write_text("beta\n")
        dst = f"/tmp/dir-{secrets.token_hex(3)}/tests"
        sb.upload(src, dst)  # contents of src land in dst
        expect(sb.exec(f"cat {dst}/a.txt {dst}/sub/b.txt").stdout == "alpha\nbeta\n", "uploaded dir contents")
        _ok(sb.exec(f"echo gamma > {dst}/sub/c.txt"), "write in uploaded dir")
        sb.download(dst, d / "back")
        got = {p.relative_to(d / "back").as_posix(): p.read_text() for p in (d / "back").rglob("*") if p.is_file()}
        want = {"a.txt": "alpha\n", "sub/b.txt": "beta\n", "sub/c.txt": "gamma\n"}
        expect(got == want, f"downloaded dir should hold the sandbox's files: {got}")


def check_upload_text(backend: SandboxBackend, image: str) -> None:
    with _tmpdir() as d, _sandbox(backend, image) as sb:
        dst = f"/tmp/text-{secrets.token_hex(3)}/run.sh"
        sb.upload_text("#!/bin/bash\necho 'ünï'\n", dst, mode=0o755)
        expect(sb.exec(f"cat {dst}").stdout == "#!/bin/bash\necho 'ünï'\n", "upload_text content")
        sb.upload_text(b"\x00\xffraw", dst + ".bin")
        sb.download(dst + ".bin", d / "raw.bin")
        expect((d / "raw.bin").read_bytes() == b"\x00\xffraw", "upload_text with bytes")


def check_stop_idempotent(backend: SandboxBackend, image: str) -> None:
    sb = backend.create(SandboxSpec(image=image, name_hint="contract"))
    sb.start()
    _ok(sb.exec("true"), "true")
    sb.stop()
    sb.stop()  # second stop is a no-op


def check_exec_after_stop_raises(backend: SandboxBackend, image: str) -> None:
    sb = backend.create(SandboxSpec(image=image, name_hint="contract"))
    sb.start()
    sb.stop()
    for what, call in (("exec", lambda: sb.exec("true")), ("upload_text", lambda: sb.upload_text("x", "/tmp/x"))):
        try:
            call()
        except SandboxError:
            continue
        raise AssertionError(f"{what} after stop should raise SandboxError")


def check_mounts_mirror_host(backend: SandboxBackend, image: str) -> None:
    with _tmpdir() as d:
        logs, ro = d / "verifier", d / "ro"
        ro.mkdir()
        (ro / "given.txt").write_text("from host\n")
        mounts = [
            Mount(host_path=logs, container_path="/logs/verifier"),
            Mount(host_path=ro, container_path="/ro", read_only=True),
        ]
        with _sandbox(backend, image, mounts=mounts) as sb:
            _ok(sb.exec("echo 1 > /logs/verifier/reward.txt"), "write into a mount")
            expect((logs / "reward.txt").read_text() == "1\n", "a file written in a mount should appear on the host")
            (logs / "late.txt").write_text("late\n")
            expect(sb.exec("cat /logs/verifier/late.txt").stdout == "late\n", "host writes appear in the sandbox")
            expect(sb.exec("cat /ro/given.txt").stdout == "from host\n", "read-only mount is readable")
            expect(sb.exec("echo x > /ro/new.txt").exit_code != 0, "writing a read-only mount should fail")
            expect(not (ro / "new.txt").exists(), "a read-only mount must not change on the host")


def check_network_off(backend: SandboxBackend, image: str) -> None:
    with _sandbox(backend, image, network=False) as sb:
        _ok(sb.exec("test -d /sys/class/net/lo"), "loopback exists without network")
        expect(sb.exec("test -e /sys/class/net/eth0").exit_code != 0, "no eth0 when network is off")
    with _sandbox(backend, image, network=True) as sb:
        _ok(sb.exec("test -e /sys/class/net/eth0"), "eth0 exists when network is on")


ALL_CHECKS: tuple[Check, ...] = (
    check_exit_codes,
    check_stdout_stderr_separate,
    check_env_and_cwd_per_call,
    check_timeout,
    check_output_cap,
    check_upload_download_file,
    check_upload_download_dir,
    check_upload_text,
    check_stop_idempotent,
    check_exec_after_stop_raises,
    check_mounts_mirror_host,
    check_network_off,
)


def run_all(backend: SandboxBackend, image: str) -> None:
    for check in ALL_CHECKS:
        check(backend, image)
