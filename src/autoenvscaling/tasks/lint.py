"""Static checks of a task directory (no Docker): ``lint_task(path) -> list[Finding]``.

Rule ids are stable (the validator reports them as ``lint:<rule>``); each has one fixed severity
(``lint_rules`` holds the catalogue).
A directory that cannot be loaded at all yields a single ``task-toml-invalid`` finding.
"""

from __future__ import annotations

import fnmatch
import hashlib
import re
import tomllib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from autoenvscaling.tasks.config import TaskConfig, VerifierConfig, artifact_path_problem
from autoenvscaling.tasks.dockerfile import (
    Stage,
    copy_sources,
    external_bases,
    final_stage_sets_workdir,
    parse_stages,
)
from autoenvscaling.tasks.errors import TaskFormatError
from autoenvscaling.tasks.lint_rules import HARBOR_RULES, Finding, finding
from autoenvscaling.tasks.lint_text import download_lines, relative_paths, toml_key_line
from autoenvscaling.tasks.model import iter_task_files, parse_task_toml
from autoenvscaling.tasks.paths import CONTAINER_REWARD_JSON, CONTAINER_REWARD_TXT, TaskPaths
from autoenvscaling.tasks.support import unsupported_features


@dataclass(frozen=True)
class _Ctx:
    """What the rules read: the parsed task plus the raw text some rules need line numbers from."""

    paths: TaskPaths
    config: TaskConfig
    toml_text: str
    stages: list[Stage] | None  # None when there is no readable Dockerfile
    known_images: frozenset[str]

    def rel(self, path: Path) -> str:
        return path.relative_to(self.paths.root).as_posix()

    def step_dirs(self) -> list[Path]:
        return [self.paths.steps_dir / step.name for step in self.config.steps]

    def test_scripts(self) -> list[Path]:
        candidates = [self.paths.test_script, *(d / "tests" / "test.sh" for d in self.step_dirs())]
        return [p for p in candidates if p.is_file()]

    def dirs_named(self, name: str) -> list[Path]:
        """The task's ``tests``/``solution`` dir plus each step's."""
        return [d for d in [self.paths.root / name, *(s / name for s in self.step_dirs())] if d.is_dir()]


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _error_line(message: str, paths: TaskPaths) -> int | None:
    """The line a load error points at: TOML syntax errors say it, field errors name a dotted key."""
    m = re.search(r"at line (\d+)", message)
    if m:
        return int(m.group(1))
    m = re.search(r": field ([\w.\-]+):", message)
    text = _read(paths.config) if m else None
    if m is None or text is None:
        return None
    parts = m.group(1).split(".")
    # pydantic puts list indexes in the path (steps.0.name); toml_key_line wants steps[0].name.
    dotted = ".".join(f"[{p}]" if p.isdigit() else p for p in parts).replace(".[", "[")
    return toml_key_line(text, dotted)


def lint_task(path: Path | str, known_images: Sequence[str] = ()) -> list[Finding]:
    """All findings for one task dir. ``known_images`` (catalog names) turns on uncataloged-base-image."""
    paths = TaskPaths(Path(path).resolve())
    if not paths.root.is_dir():
        return [finding("task-toml-invalid", "task.toml", f"{paths.root}: not a task directory")]
    try:
        config = parse_task_toml(paths.config)
    except TaskFormatError as e:
        return [
            *_unsafe_artifacts(paths),
            finding("task-toml-invalid", "task.toml", str(e), _error_line(str(e), paths)),
        ]
    dockerfile = _read(paths.dockerfile) if paths.dockerfile.is_file() else None
    ctx = _Ctx(
        paths=paths,
        config=config,
        toml_text=_read(paths.config) or "",
        stages=parse_stages(dockerfile) if dockerfile is not None else None,
        known_images=frozenset(_normalize_image(i) for i in known_images),
    )
    findings: list[Finding] = []
    for rule in _RULE_FUNCS:
        findings += rule(ctx)
    return findings


def _unsafe_artifacts(paths: TaskPaths) -> list[Finding]:
    """``artifacts`` entries that would land outside the trial dir (the loader refuses them too)."""
    text = _read(paths.config) or ""
    try:
        raw = tomllib.loads(text).get("artifacts")
    except tomllib.TOMLDecodeError:
        return []
    if not isinstance(raw, list):
        return []
    line = toml_key_line(text, "artifacts")
    return [
        finding("unsafe-artifact-path", "task.toml", f"artifacts: {problem}", line)
        for entry in raw
        if (problem := artifact_path_problem(entry)) is not None
    ]


_HOST_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)")


def _host_env_rule(ctx: _Ctx) -> Iterable[Finding]:
    tables = (("solution.env", ctx.config.solution.env), ("verifier.env", ctx.config.verifier.env))
    for table, values in tables:
        for key, value in values.items():
            for name in _HOST_VAR.findall(value):
                yield finding(
                    "host-env-reference",
                    "task.toml",
                    f"{table}.{key} uses ${{{name}}}: host variables are expanded only when passed explicitly "
                    f"(--pass-env {name}); otherwise it is empty",
                    toml_key_line(ctx.toml_text, f"{table}.{key}"),
                )


# --- files that must exist ---------------------------------------------------------------------------


def _instruction_rules(ctx: _Ctx) -> Iterable[Finding]:
    multi = ctx.config.is_multi_step
    files = [d / "instruction.md" for d in ctx.step_dirs()] if multi else [ctx.paths.instruction]
    for f in files:
        text = _read(f) if f.is_file() else None
        if text is None:
            yield finding("missing-instruction", ctx.rel(f), "instruction.md is missing or unreadable")
        elif not text.strip():
            yield finding("empty-instruction", ctx.rel(f), "instruction.md is empty")


def _required_file_rules(ctx: _Ctx) -> Iterable[Finding]:
    env = ctx.config.environment
    if ctx.stages is None and not env.docker_image and not ctx.paths.compose_file.is_file():
        yield finding(
            "missing-dockerfile",
            ctx.rel(ctx.paths.dockerfile),
            "no environment/Dockerfile (and no [environment].docker_image or docker-compose.yaml)",
        )
    for rule, root_file, sub in (
        ("missing-test-script", ctx.paths.test_script, "tests/test.sh"),
        ("missing-solution", ctx.paths.solve_script, "solution/solve.sh"),
    ):
        if root_file.is_file():
            continue
        if not ctx.config.is_multi_step:
            yield finding(rule, sub, f"{sub} is missing")
            continue
        for step_dir in ctx.step_dirs():
            if not (step_dir / sub).is_file():
                yield finding(rule, ctx.rel(step_dir / sub), f"{sub} is missing (no task-level fallback)")


# --- Dockerfile ----------------------------------------------------------------------------------------


def _workdir_rule(ctx: _Ctx) -> Iterable[Finding]:
    if ctx.stages is None or ctx.config.environment.workdir:
        return
    if not final_stage_sets_workdir(ctx.stages):
        yield finding(
            "missing-workdir",
            ctx.rel(ctx.paths.dockerfile),
            "the image never sets WORKDIR and [environment].workdir is unset (tests refuse to run in /)",
        )


def _digests(dirs: list[Path]) -> dict[str, str]:
    """sha256 of normalized content -> a file's task-relative path, for every non-blank file in ``dirs``."""
    out: dict[str, str] = {}
    for d in dirs:
        for f in iter_task_files(d):
            try:
                data = f.read_bytes().replace(b"\r\n", b"\n")
            except OSError:
                continue
            if data.strip():
                out.setdefault(hashlib.sha256(data).hexdigest(), f.relative_to(d.parent).as_posix())
    return out


def _copies(source: str, dir_name: str, file_globs: tuple[str, ...]) -> bool:
    parts = PurePosixPath(source.replace("\\", "/")).parts
    return dir_name in parts or any(fnmatch.fnmatch(parts[-1], g) for g in file_globs if parts)


_LEAKS = (
    ("dockerfile-copies-tests", "tests", ("test_*.py",)),
    ("dockerfile-copies-solution", "solution", ("solve.sh",)),
)


def _leak_rules(ctx: _Ctx) -> Iterable[Finding]:
    dockerfile = ctx.rel(ctx.paths.dockerfile)
    env_files = iter_task_files(ctx.paths.environment_dir) if ctx.paths.environment_dir.is_dir() else []
    for rule, dir_name, globs in _LEAKS:
        for stage in ctx.stages or []:
            for ins in stage.instructions:
                for src in copy_sources(ins):
                    if _copies(src, dir_name, globs):
                        yield finding(rule, dockerfile, f"{ins.keyword} {src} brings {dir_name} files in", ins.line)
        digests = _digests(ctx.dirs_named(dir_name))
        for f in env_files:
            try:
                data = f.read_bytes().replace(b"\r\n", b"\n")
            except OSError:
                continue
            match = digests.get(hashlib.sha256(data).hexdigest()) if data.strip() else None
            if match:
                yield finding(rule, ctx.rel(f), f"identical to {match}: the build context holds {dir_name} files")


def _normalize_image(name: str) -> str:
    last = name.rsplit("/", 1)[-1]
    return name if ":" in last or "@" in last else f"{name}:latest"


def _base_image_rule(ctx: _Ctx) -> Iterable[Finding]:
    if not ctx.known_images:
        return
    known = ", ".join(sorted(ctx.known_images))
    if ctx.stages is None:
        image = ctx.config.environment.docker_image
        if image and _normalize_image(image) not in ctx.known_images:
            line = toml_key_line(ctx.toml_text, "environment.docker_image")
            yield finding("uncataloged-base-image", "task.toml", f"docker_image {image} is not a catalog image", line)
        return
    for stage in external_bases(ctx.stages):
        if _normalize_image(stage.base) not in ctx.known_images:
            yield finding(
                "uncataloged-base-image",
                ctx.rel(ctx.paths.dockerfile),
                f"FROM {stage.base} is not a catalog image (known: {known}); it may not build offline",
                stage.line,
            )


# --- task.toml, instruction and test script ---------------------------------------------------------


def _config_rules(ctx: _Ctx) -> Iterable[Finding]:
    for key in ctx.config.unknown_key_paths():
        line = toml_key_line(ctx.toml_text, key)
        yield finding("unknown-key", "task.toml", f"unknown key {key} (ignored)", line)


def _support_rule(ctx: _Ctx) -> Iterable[Finding]:
    """Harbor features this runner refuses (tasks/support.py): valid for Harbor, an error for validate here."""
    for u in unsupported_features(ctx.paths, ctx.config, agent_facing=True):
        line = toml_key_line(ctx.toml_text, u.key) if u.key else None
        message = f"{u.feature}: {u.why} (validate and solve refuse the task as an error)"
        found = finding("unsupported-feature", u.file, message, line)
        yield found.model_copy(update={"harbor": u.harbor}) if u.harbor else found  # e.g. compose-privileged


def _verifier_mode(verifier: VerifierConfig | None) -> str | None:
    """Harbor's resolution at one level: an explicit mode, else separate when a verifier environment is given."""
    if verifier is None:
        return None
    if "environment_mode" in verifier.model_fields_set:
        return verifier.environment_mode
    return "separate" if verifier.environment is not None else None


def _harbor_ignored(config: TaskConfig) -> set[str]:
    harbor = config.metadata.get("harbor")
    lint = harbor.get("lint") if isinstance(harbor, dict) else None
    ignore = lint.get("ignore") if isinstance(lint, dict) else None
    return {r for r in ignore if isinstance(r, str) and r in HARBOR_RULES} if isinstance(ignore, list) else set()


def _shared_verifier_rule(ctx: _Ctx) -> Iterable[Finding]:
    """Harbor 0.26's ``shared-verifier``: some verify pass (the task's, or a step's) runs in the agent's container."""
    if "shared-verifier" in _harbor_ignored(ctx.config):
        return
    task_mode = _verifier_mode(ctx.config.verifier) or "shared"
    modes = [_verifier_mode(step.verifier) or task_mode for step in ctx.config.steps] or [task_mode]
    if "shared" in modes:
        yield finding(
            "shared-verifier",
            "task.toml",
            "the tests run in the agent's container, where what the agent left can interfere with grading; "
            'set [verifier] environment_mode = "separate" and list the files the tests read in artifacts',
            toml_key_line(ctx.toml_text, "verifier.environment_mode"),
        )


def _relative_path_rule(ctx: _Ctx) -> Iterable[Finding]:
    files = [ctx.paths.instruction, *(d / "instruction.md" for d in ctx.step_dirs())]
    for f in files:
        text = _read(f) if f.is_file() else None
        for token, line in relative_paths(text or ""):
            yield finding(
                "relative-path-in-instruction",
                ctx.rel(f),
                f"{token!r} looks like a relative path; give absolute paths (e.g. /app/...)",
                line,
            )


def _test_script_rules(ctx: _Ctx) -> Iterable[Finding]:
    mentions_reward = any(
        "reward.txt" in text or "reward.json" in text
        for d in ctx.dirs_named("tests")
        for f in iter_task_files(d)
        if (text := _read(f)) is not None
    )
    for script in ctx.test_scripts():
        rel = ctx.rel(script)
        text = _read(script) or ""
        if not mentions_reward:
            yield finding("no-reward-write", rel, f"never writes {CONTAINER_REWARD_TXT} or {CONTAINER_REWARD_JSON}")
        for what, line in download_lines(text):
            yield finding("grading-download", rel, f"downloads at grading time ({what})", line)
        if not text.startswith("#!"):
            yield finding("test-script-no-shebang", rel, "first line is not a shebang (#!/bin/bash)", 1)


_RULE_FUNCS: tuple[Callable[[_Ctx], Iterable[Finding]], ...] = (
    _instruction_rules,
    _required_file_rules,
    _workdir_rule,
    _leak_rules,
    _config_rules,
    _support_rule,
    _shared_verifier_rule,
    _host_env_rule,
    _relative_path_rule,
    _test_script_rules,
    _base_image_rule,
)
