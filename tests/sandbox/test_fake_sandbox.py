"""The in-memory fake: its little shell, handlers, mounts."""

from __future__ import annotations

from pathlib import Path

import pytest

from autoenvscaling.images.catalog import BASE_IMAGE
from autoenvscaling.sandbox.base import BuildError, BuildSpec, ExecResult, Mount, SandboxError, SandboxSpec
from autoenvscaling.sandbox.fake import FakeBackend, FakeCall, FakeSandbox


@pytest.fixture
def fake() -> FakeBackend:
    return FakeBackend()


def started(fake: FakeBackend, **spec: object) -> FakeSandbox:
    sb = fake.create(SandboxSpec(**{"image": BASE_IMAGE, **spec}))  # type: ignore[arg-type]
    sb.start()
    return sb


@pytest.mark.parametrize(
    ("cmd", "stdout", "code"),
    [
        ("echo a b; echo -n c", "a b\nc", 0),
        ("false && echo no || echo yes", "yes\n", 0),
        ("export A=1; echo $A ${A}x '$A'", "1 1x $A\n", 0),
        ("printf '%s=%d\\n' a 1 b 2", "a=1\nb=2\n", 0),
        ("mkdir -p /x/y && test -d /x/y && echo dir", "dir\n", 0),
        ("echo hi > /tmp/f; echo there >> /tmp/f; cat /tmp/f", "hi\nthere\n", 0),
        ("cd /tmp; pwd # comment", "/tmp\n", 0),
        ("[ -f /nope ]", "", 1),
        ("exit 7; echo unreachable", "", 7),
        ("echo a | cat", "", 127),
        ("nosuchcmd", "", 127),
    ],
)
def test_shell_subset(fake: FakeBackend, cmd: str, stdout: str, code: int) -> None:
    r = started(fake).exec(cmd)
    assert (r.stdout, r.exit_code) == (stdout, code), r


def test_redirect_stderr(fake: FakeBackend) -> None:
    sb = started(fake)
    r = sb.exec("cat /nope 2>&1")
    assert r.stdout == "cat: /nope: No such file or directory\n" and r.stderr == ""
    assert sb.exec("cat /nope 2> /dev/null").stderr == ""


def test_handler_scripts_a_verifier(fake: FakeBackend, tmp_path: Path) -> None:
    def run_tests(sb: FakeSandbox, call: FakeCall) -> ExecResult:
        sb.write_file("/logs/verifier/reward.txt", "1")
        return ExecResult(stdout=f"ran {call.match.group(1)} as {call.user}\n")

    fake.register(r"bash (/tests/[^\s)]+)", run_tests)
    sb = started(fake, mounts=[Mount(host_path=tmp_path / "v", container_path="/logs/verifier")])
    r = sb.exec("(bash /tests/test.sh) > /logs/verifier/out.txt 2>&1", user="root")
    assert r.stdout == "ran /tests/test.sh as root\n"
    assert (tmp_path / "v" / "reward.txt").read_text() == "1"
    assert sb.calls[-1].startswith("(bash /tests/test.sh)")


def test_handler_inside_a_sequence_gets_redirected(fake: FakeBackend) -> None:
    fake.register(r"^run-thing$", lambda sb, call: ExecResult(stdout="thing\n", exit_code=2))
    sb = started(fake)
    r = sb.exec("run-thing > /tmp/o; echo rc-ignored")
    assert r.stdout == "rc-ignored\n" and sb.read_file("/tmp/o") == b"thing\n"


def test_timeout_in_handler_and_sleep(fake: FakeBackend) -> None:
    fake.register("hang", lambda sb, call: ExecResult(timed_out=True))
    sb = started(fake)
    assert sb.exec("hang", timeout=5).timed_out
    r = sb.exec("echo x; sleep 10", timeout=0.05)
    assert r.timed_out and r.exit_code == 124 and r.stdout == "x\n"


def test_unknown_image_and_build(fake: FakeBackend, tmp_path: Path) -> None:
    with pytest.raises(SandboxError, match="not found"):
        fake.create(SandboxSpec(image="nope:1")).start()
    with pytest.raises(BuildError):
        fake.build(BuildSpec(context_dir=tmp_path, tag="t:1"))
    (tmp_path / "Dockerfile").write_text(f"FROM {BASE_IMAGE}\n")
    assert fake.build(BuildSpec(context_dir=tmp_path, tag="t:1")) == "t:1"
    assert fake.image_exists("t:1")
    started(fake, image="t:1")


def test_cleanup_stops_live_sandboxes_only_when_asked(fake: FakeBackend) -> None:
    a = started(fake, run_id="r1")
    started(fake, run_id="r2")
    assert fake.cleanup("r1") == 0 and a.running
    assert fake.cleanup("r1", include_live=True) == 1 and not a.running
    assert fake.cleanup(include_live=True) == 1


def test_workdir_missing_cwd(fake: FakeBackend) -> None:
    sb = started(fake, workdir="/app")
    assert sb.exec("pwd").stdout == "/app\n"
    r = sb.exec("pwd", cwd="/missing")
    assert r.exit_code == 1 and "No such file" in r.stderr
