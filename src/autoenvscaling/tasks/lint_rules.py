"""The lint rule catalogue: each rule id with its fixed severity, Harbor's ids for the same problems, and the
``Finding`` a rule reports."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Severity = Literal["error", "warning", "info"]

RULES: dict[str, Severity] = {
    "task-toml-invalid": "error",
    "unsafe-artifact-path": "error",
    "host-env-reference": "warning",
    "missing-instruction": "error",
    "empty-instruction": "error",
    "missing-dockerfile": "error",
    "missing-test-script": "error",
    "missing-solution": "error",
    "missing-workdir": "error",
    "dockerfile-copies-tests": "error",
    "dockerfile-copies-solution": "error",
    "unknown-key": "warning",
    "relative-path-in-instruction": "warning",
    "no-reward-write": "error",
    "grading-download": "warning",
    "test-script-no-shebang": "warning",
    "uncataloged-base-image": "warning",
    "unsupported-feature": "warning",
    "shared-verifier": "warning",
}
# Harbor's rule names (``harbor lint``): a task may turn them off in ``[metadata.harbor.lint] ignore``, as in Harbor.
HARBOR_RULES = frozenset({"shared-verifier"})
# Every rule id of Harbor 0.26's ``harbor lint`` (read from its ``harbor/lint/models.py``).
HARBOR_LINT_RULES = frozenset(
    {
        "invalid-task-config", "unknown-config-field", "invalid-task-files", "unused-harborignore", "root-agent",
        "shared-verifier", "overlapping-artifacts", "artifact-log-overlap", "compose-privileged",
        "compose-additional-capabilities", "compose-writable-bind-mount", "compose-external-bind-mount",
        "compose-symlink-bind-mount", "unpinned-image", "unpinned-python-dependency", "verifier-runtime-install",
        "verifier-network-download", "agent-image-test-leak",
    }
)  # fmt: skip
# Our rule -> the rule of Harbor 0.26's ``harbor lint`` (``harbor.lint.models.LintRule``) that reports the same
# problem, for the rules that have one; docs/harbor-support.md has the whole table, with Harbor's rules we lack.
HARBOR_EQUIVALENT: dict[str, str] = {
    "task-toml-invalid": "invalid-task-config",
    "unknown-key": "unknown-config-field",
    "missing-instruction": "invalid-task-files",
    "empty-instruction": "invalid-task-files",
    "missing-dockerfile": "invalid-task-files",
    "missing-test-script": "invalid-task-files",
    "dockerfile-copies-tests": "agent-image-test-leak",
    "dockerfile-copies-solution": "agent-image-test-leak",
    "grading-download": "verifier-network-download",
    "shared-verifier": "shared-verifier",
}


class Finding(BaseModel):
    """One lint result. ``file`` is relative to the task dir (posix); ``line`` is 1-based when known."""

    model_config = ConfigDict(frozen=True)

    rule: str
    severity: Severity
    file: str
    line: int | None = None
    message: str
    harbor: str | None = None  # Harbor 0.26's rule id for the same problem (HARBOR_EQUIVALENT), if it has one


def finding(rule: str, file: str, message: str, line: int | None = None) -> Finding:
    return Finding(
        rule=rule, severity=RULES[rule], file=file, line=line, message=message, harbor=HARBOR_EQUIVALENT.get(rule)
    )
