"""The instruction/test alignment judge (issue 12, item 4): a model reads a task's instruction, tests, reference
solution and Dockerfile and answers a rubric in structured output.

The rubric's criteria follow the list Harbor's ``harbor tasks check`` uses (behaviour in the description,
behaviour in the tests, anti-cheating, hard-coded solution, file references, structured data schema, tests or
solution in the image); the wording is ours. A criterion the judge fails becomes ``judge:<criterion>``:

* advisory (the default): listed in ``JudgeReport.flags`` with the judge's explanation, no failed check;
* blocking (``JudgeConfig.blocking``): a failed check, so the verdict is ``invalid``.

A judge that does not answer the schema after one reminder, or whose endpoint fails, gives a report with
``error`` and no flag: an infrastructure problem is never a verdict on the task. Any ``Model`` works (an
OpenAI-compatible endpoint, the embedded server, the scripted fake); the request asks for a JSON schema
(``response_format``) and the reply is parsed leniently (the first JSON object in it), since small local
models do not always honour the schema.
"""

from __future__ import annotations

import tomllib
from typing import Any

import tomli_w
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from autoenvscaling.agent.actions import json_objects
from autoenvscaling.llm.base import Message, Model, ModelError, Sampling, Usage
from autoenvscaling.tasks import Task
from autoenvscaling.tasks.model import iter_task_files
from autoenvscaling.validate.probes import JudgeMode
from autoenvscaling.validate.report import CheckResult, CriterionResult, JudgeSummary

JUDGE_PREFIX = "judge:"

# id -> what a task must satisfy. Our text; the ids follow Harbor's check criteria.
CRITERIA: dict[str, str] = {
    "behavior-in-description": (
        "Everything the tests check is asked for in the instruction: every output, value, format, ordering and "
        "edge case the tests assert can be known from the instruction alone."
    ),
    "behavior-in-tests": (
        "Everything the instruction asks for is checked by the tests: an agent that skips a requested part "
        "fails at least one test."
    ),
    "anti-cheating": (
        "The tests cannot be passed without doing the work: they do not accept empty, constant or copied "
        "outputs, do not read their expected answers from a file the agent can see or change, and do not trust "
        "a status the agent could forge (an exit code, a marker file, a log line)."
    ),
    "hard-coded-solution": (
        "The reference solution computes its outputs from the inputs, as an agent would; it does not just "
        "write the expected values."
    ),
    "file-references": (
        "Every file the tests read or expect, and every input the task needs, is named in the instruction with "
        "its exact path."
    ),
    "structured-data-schema": (
        "When an output is structured (JSON, CSV, a table, a config file), the instruction gives its exact "
        "shape: keys or columns, their order when it matters, types and number formats. Not applicable when no "
        "output is structured."
    ),
    "tests-or-solution-in-image": (
        "The image (the Dockerfile and the files it copies) contains neither the tests, nor the reference "
        "solution, nor the expected outputs."
    ),
}


class JudgeConfig(BaseModel):
    """The alignment judge: off unless enabled; advisory unless blocking."""

    model_config = ConfigDict(frozen=True)

    enabled: bool = False
    blocking: bool = Field(default=False, description="failed criteria fail validation (default: advisory)")
    criteria: tuple[str, ...] = tuple(CRITERIA)
    max_file_chars: int = Field(default=12_000, ge=500, description="each file is cut to this many characters")
    max_tokens: int = Field(default=2048, ge=64)


class JudgeReport(BaseModel):
    model: str = ""
    criteria: list[CriterionResult] = Field(default_factory=list)
    flags: list[str] = Field(default_factory=list)  # judge:<criterion> for each failed criterion
    blocking: bool = False
    error: str | None = None  # the judge gave no usable answer: no flag, not a verdict on the task
    usage: Usage = Field(default_factory=Usage)

    def summary(self, mode: JudgeMode = "advisory") -> JudgeSummary:
        """What a validation report keeps of it (``ProbeReport.judge``)."""
        return JudgeSummary(
            model=self.model,
            mode="blocking" if mode == "blocking" else "advisory",
            criteria=self.criteria,
            flags=self.flags,
            error=self.error,
            prompt_tokens=self.usage.prompt_tokens,
            completion_tokens=self.usage.completion_tokens,
            cost_usd=self.usage.cost_usd,
        )


class _Answer(BaseModel):
    criteria: list[CriterionResult]


def response_schema(criteria: tuple[str, ...]) -> dict[str, Any]:
    """``response_format`` for an OpenAI-compatible endpoint: one entry per criterion."""
    item = {
        "type": "object",
        "properties": {
            "id": {"type": "string", "enum": list(criteria)},
            "outcome": {"type": "string", "enum": ["pass", "fail", "not_applicable"]},
            "explanation": {"type": "string"},
        },
        "required": ["id", "outcome", "explanation"],
        "additionalProperties": False,
    }
    schema = {
        "type": "object",
        "properties": {"criteria": {"type": "array", "items": item}},
        "required": ["criteria"],
        "additionalProperties": False,
    }
    return {"type": "json_schema", "json_schema": {"name": "rubric", "strict": True, "schema": schema}}


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n[... {len(text) - limit} more characters cut]"


def _config_text(text: str) -> str:
    """task.toml as the judge reads it: without ``[metadata]`` and ``[task].description``.

    Both are bookkeeping written by the task's author (a model, for a generated task), not what the agent or the
    tests see: a description or a tag that says "verified" or "the tests check X" would grade the task for the
    judge instead of letting it read the files."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return text
    data.pop("metadata", None)
    if isinstance(data.get("task"), dict):
        data["task"].pop("description", None)
    return tomli_w.dumps(data)


def _files(task: Task, config: JudgeConfig) -> str:
    """The task as the judge reads it: instruction, task.toml (bookkeeping dropped), Dockerfile, tests, solution
    (text files only)."""
    paths = task.paths
    parts = [
        ("instruction.md", paths.instruction),
        ("task.toml", paths.config),
        ("environment/Dockerfile", paths.dockerfile),
    ]
    for label, root in [("tests", d) for d in paths.test_dirs] + [("solution", paths.solution_dir)]:
        if root.is_dir():
            parts += [(f"{label}/{f.relative_to(root)}", f) for f in iter_task_files(root) if f.is_file()]
    out = []
    for label, path in parts:
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if label == "task.toml":
            text = _config_text(text)
        out.append(f"=== {label} ===\n{_cut(text, config.max_file_chars)}")
    return "\n\n".join(out)


def judge_messages(task: Task, config: JudgeConfig) -> list[Message]:
    rubric = "\n".join(f"- {c}: {CRITERIA[c]}" for c in config.criteria)
    system = (
        "You review a task written for training terminal agents: an instruction, the hidden tests that grade the "
        "agent, a reference solution and the image the agent works in. Judge the task against each criterion "
        'below. Answer only with a JSON object {"criteria": [{"id", "outcome", "explanation"}, ...]}, one '
        'entry per criterion, outcome "pass", "fail" or "not_applicable", and for a fail an explanation '
        "that names the file and what to change.\n\nCriteria:\n" + rubric
    )
    return [Message(role="system", content=system), Message(role="user", content=_files(task, config))]


def _parse(text: str, criteria: tuple[str, ...]) -> list[CriterionResult]:
    """The first JSON object holding ``criteria``; every criterion answered once (ValueError otherwise)."""
    for obj, _, _ in json_objects(text):
        if "criteria" not in obj:
            continue
        try:
            answer = _Answer.model_validate(obj)
        except ValidationError as e:
            raise ValueError(f"the answer does not match the schema: {e.errors()[0]['msg']}") from None
        by_id = {r.id: r for r in answer.criteria if r.id in criteria}
        missing = [c for c in criteria if c not in by_id]
        if missing:
            raise ValueError(f"no outcome for: {', '.join(missing)}")
        return [by_id[c] for c in criteria]
    raise ValueError('no JSON object with a "criteria" list found')


def judge_task(task: Task, model: Model, config: JudgeConfig | None = None) -> JudgeReport:
    """Ask ``model`` the rubric about ``task``; one reminder when the reply does not parse."""
    config = config or JudgeConfig(enabled=True)
    messages = judge_messages(task, config)
    report = JudgeReport(model=model.name, blocking=config.blocking)
    sampling = Sampling(temperature=0.0, max_tokens=config.max_tokens)
    for attempt in range(2):
        try:
            res = model.complete(messages, response_format=response_schema(config.criteria), sampling=sampling)
        except ModelError as e:
            report.error = f"judge model failed: {e}"
            return report
        report.usage = report.usage + res.usage
        try:
            report.criteria = _parse(res.content, config.criteria)
        except ValueError as e:
            if attempt == 0:
                messages += [
                    Message(role="assistant", content=res.content),
                    Message(role="user", content=f"That answer is unusable ({e}). Answer again with the JSON only."),
                ]
                continue
            report.error = f"the judge's answer is unusable: {e}"
            return report
        break
    report.flags = [f"{JUDGE_PREFIX}{r.id}" for r in report.criteria if r.outcome == "fail"]
    return report


def judge_checks(report: JudgeReport) -> list[CheckResult]:
    """Failed checks for a blocking judge's failed criteria; none when advisory or when the judge failed."""
    if not report.blocking or report.error is not None:
        return []
    return [
        CheckResult(id=f"{JUDGE_PREFIX}{r.id}", passed=False, detail=r.explanation)
        for r in report.criteria
        if r.outcome == "fail"
    ]


class ModelJudge:
    """The judge as validation calls it (``validate.model_probes.TaskJudge``): one model, one config."""

    def __init__(self, model: Model, config: JudgeConfig | None = None) -> None:
        self.model = model
        self.config = config or JudgeConfig(enabled=True)

    def __call__(self, task: Task, mode: JudgeMode) -> JudgeSummary:
        config = self.config.model_copy(update={"enabled": True, "blocking": mode == "blocking"})
        return judge_task(task, self.model, config).summary(mode)
