"""The commands the fake sandbox knows. Each gets the running exec, its arguments, and output lists."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

from autoenvscaling.sandbox.base import SandboxError
from autoenvscaling.sandbox.fake_files import FakeFiles
from autoenvscaling.sandbox.fake_shell import ShellExit, ShellTimeout, printf


class ShellRun(Protocol):
    """What a builtin sees of the running exec (``fake._Run``): its files, environment, cwd and deadline."""

    env: dict[str, str]
    cwd: str
    status: int
    deadline: float | None

    @property
    def sb(self) -> FakeFiles: ...

    def abs(self, path: str) -> str: ...


Builtin = Callable[[ShellRun, list[str], list[str], list[str]], int]


def _exit(run: ShellRun, args: list[str], out: list[str], err: list[str]) -> int:
    raise ShellExit(int(args[0]) & 0xFF if args else run.status)


def _echo(run: ShellRun, args: list[str], out: list[str], err: list[str]) -> int:
    newline = True
    while args and args[0] in ("-n", "-e"):
        newline = newline and args[0] != "-n"
        args = args[1:]
    out.append(" ".join(args) + ("\n" if newline else ""))
    return 0


def _printf(run: ShellRun, args: list[str], out: list[str], err: list[str]) -> int:
    if not args:
        err.append("printf: usage: printf format [arguments]\n")
        return 2
    out.append(printf(args[0], args[1:]))
    return 0


def _cat(run: ShellRun, args: list[str], out: list[str], err: list[str]) -> int:
    code = 0
    for a in args:
        try:
            out.append(run.sb.read_file(run.abs(a)).decode(errors="replace"))
        except SandboxError:
            err.append(f"cat: {a}: No such file or directory\n")
            code = 1
    return code


def _pwd(run: ShellRun, args: list[str], out: list[str], err: list[str]) -> int:
    out.append(run.cwd + "\n")
    return 0


def _cd(run: ShellRun, args: list[str], out: list[str], err: list[str]) -> int:
    target = run.abs(args[0]) if args else run.env.get("HOME", "/")
    if not run.sb.is_dir(target):
        err.append(f"bash: cd: {args[0] if args else target}: No such file or directory\n")
        return 1
    run.cwd = target
    return 0


def _export(run: ShellRun, args: list[str], out: list[str], err: list[str]) -> int:
    for a in args:
        key, _, value = a.partition("=")
        run.env[key] = value
    return 0


def _sleep(run: ShellRun, args: list[str], out: list[str], err: list[str]) -> int:
    seconds = float(args[0]) if args else 0.0
    if run.deadline is not None and time.monotonic() + seconds > run.deadline:
        time.sleep(max(run.deadline - time.monotonic(), 0.0))
        raise ShellTimeout
    time.sleep(seconds)
    return 0


def _test(run: ShellRun, args: list[str], out: list[str], err: list[str]) -> int:
    if args and args[-1] == "]":
        args = args[:-1]
    negate = bool(args) and args[0] == "!"
    args = args[1:] if negate else args
    ok: bool
    if len(args) == 2 and args[0] in ("-f", "-d", "-e"):
        path = run.abs(args[1])
        ok = {"-f": run.sb.is_file, "-d": run.sb.is_dir, "-e": run.sb.exists}[args[0]](path)
    elif len(args) == 2 and args[0] == "-s":
        path = run.abs(args[1])
        ok = run.sb.is_dir(path) or (run.sb.is_file(path) and bool(run.sb.read_file(path)))
    elif len(args) == 2 and args[0] in ("-n", "-z"):
        ok = bool(args[1]) == (args[0] == "-n")
    elif len(args) == 3 and args[1] in ("=", "==", "!="):
        ok = (args[0] == args[2]) == (args[1] != "!=")
    else:
        ok = len(args) == 1 and bool(args[0])
    return 0 if ok != negate else 1


def _files(op: str) -> Builtin:
    """mkdir [-p], rm [-f] [-r], touch."""

    def run_op(run: ShellRun, args: list[str], out: list[str], err: list[str]) -> int:
        flags = "".join(a[1:] for a in args if a.startswith("-"))
        code = 0
        for a in (a for a in args if not a.startswith("-")):
            path = run.abs(a)
            try:
                if op == "mkdir":
                    run.sb.mkdir(path, parents="p" in flags)
                elif op == "touch":
                    run.sb.write_file(path, b"", append=True)
                elif run.sb.exists(path):
                    run.sb.remove(path, recursive="r" in flags.lower())
                elif "f" not in flags:
                    raise SandboxError(f"cannot remove '{a}': No such file or directory")
            except SandboxError as e:
                err.append(f"{op}: {e}\n")
                code = 1
        return code

    return run_op


BUILTINS: dict[str, Builtin] = {
    "true": lambda run, args, out, err: 0,
    ":": lambda run, args, out, err: 0,
    "false": lambda run, args, out, err: 1,
    "exit": _exit,
    "echo": _echo,
    "printf": _printf,
    "cat": _cat,
    "pwd": _pwd,
    "cd": _cd,
    "export": _export,
    "sleep": _sleep,
    "test": _test,
    "[": _test,
    "mkdir": _files("mkdir"),
    "rm": _files("rm"),
    "touch": _files("touch"),
    "chmod": lambda run, args, out, err: 0,  # the fake keeps no permissions worth changing
}
