"""Harbor's ATIF v1.8 rules as plain checks on the raw JSON, independent of our pydantic models.

The field sets and rules are those of Harbor's ``harbor.models.trajectories`` (every model forbids unknown keys;
``step_id`` sequential from 1; agent-only fields only on agent steps; ``source_call_id`` must name a tool call
of the same step; ISO 8601 timestamps), plus the consistency our ``final_metrics`` promise.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

# Field sets of Harbor's ATIF v1.8 models (all of them forbid other keys).
ROOT_KEYS = {
    "schema_version", "session_id", "trajectory_id", "agent", "steps", "notes", "final_metrics",
    "continued_trajectory_ref", "extra", "subagent_trajectories",
}  # fmt: skip
AGENT_KEYS = {"name", "version", "model_name", "tool_definitions", "extra"}
STEP_KEYS = {
    "step_id", "timestamp", "source", "model_name", "reasoning_effort", "message", "reasoning_content",
    "tool_calls", "observation", "metrics", "is_copied_context", "llm_call_count", "extra",
}  # fmt: skip
TOOL_CALL_KEYS = {"tool_call_id", "function_name", "arguments", "extra"}
RESULT_KEYS = {"source_call_id", "content", "subagent_trajectory_ref", "extra"}
METRICS_KEYS = {
    "prompt_tokens", "completion_tokens", "cached_tokens", "cost_usd", "prompt_token_ids",
    "completion_token_ids", "logprobs", "extra",
}  # fmt: skip
FINAL_KEYS = {
    "total_prompt_tokens", "total_completion_tokens", "total_cached_tokens", "total_cost_usd", "total_steps",
    "extra",
}  # fmt: skip
AGENT_ONLY = {"model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics"}


def harbor_rule_violations(doc: dict[str, Any]) -> list[str]:
    """Harbor's ATIF v1.8 validation rules, checked on the raw JSON (independently of our pydantic models)."""
    bad: list[str] = []

    def keys(obj: dict[str, Any], allowed: set[str], where: str, required: frozenset[str] = frozenset()) -> None:
        if extra := set(obj) - allowed:
            bad.append(f"{where}: unknown keys {sorted(extra)}")
        if missing := required - set(obj):
            bad.append(f"{where}: missing {sorted(missing)}")

    keys(doc, ROOT_KEYS, "root", frozenset({"schema_version", "agent", "steps"}))
    if doc.get("schema_version") != "ATIF-v1.8":
        bad.append(f"schema_version is {doc.get('schema_version')!r}")
    keys(doc["agent"], AGENT_KEYS, "agent", frozenset({"name", "version"}))
    if not doc["steps"]:
        bad.append("no steps")
    for i, step in enumerate(doc["steps"]):
        where = f"steps[{i}]"
        keys(step, STEP_KEYS, where, frozenset({"step_id", "source", "message"}))
        if step["step_id"] != i + 1:
            bad.append(f"{where}: step_id {step['step_id']} is not sequential from 1")
        if step["source"] not in ("system", "user", "agent"):
            bad.append(f"{where}: source {step['source']!r}")
        if step["source"] != "agent" and (AGENT_ONLY & set(step)):
            bad.append(f"{where}: agent-only fields on a {step['source']} step")
        if "timestamp" in step:
            datetime.fromisoformat(step["timestamp"].replace("Z", "+00:00"))
        call_ids = [c["tool_call_id"] for c in step.get("tool_calls", [])]
        for c in step.get("tool_calls", []):
            keys(
                c,
                TOOL_CALL_KEYS,
                f"{where}.tool_calls",
                frozenset({"tool_call_id", "function_name", "arguments"}),
            )
            if not isinstance(c["arguments"], dict):
                bad.append(f"{where}: tool call arguments must be an object")
        if len(set(call_ids)) != len(call_ids):
            bad.append(f"{where}: duplicate tool_call_id")
        for r in step.get("observation", {"results": []})["results"]:
            keys(r, RESULT_KEYS, f"{where}.observation")
            if r.get("source_call_id") is not None and r["source_call_id"] not in call_ids:
                bad.append(f"{where}: source_call_id {r['source_call_id']!r} has no tool call")
        if "metrics" in step:
            keys(step["metrics"], METRICS_KEYS, f"{where}.metrics")
    final = doc.get("final_metrics", {})
    keys(final, FINAL_KEYS, "final_metrics")
    metrics = [s["metrics"] for s in doc["steps"] if "metrics" in s]
    for total, field in [
        ("total_prompt_tokens", "prompt_tokens"),
        ("total_completion_tokens", "completion_tokens"),
    ]:
        if final.get(total) != sum(m.get(field, 0) for m in metrics):
            bad.append(f"final_metrics.{total} is not the sum over steps")
    if final.get("total_steps") not in (None, len(doc["steps"])):
        bad.append("final_metrics.total_steps differs from the number of steps")
    return bad
