"""A naive reference implementation of docs/design/loop.md for scripted runs without hooks.

Plain lists and dicts, one obvious loop: it says, for a script and a tool set, which steps
happen, what each tool call yields, and how the run ends. ``test_reference_model.py`` runs
it side by side with ``AgentLoop`` on generated scripts.
"""

from __future__ import annotations

from typing import Any

from agents import StopAgent, ToolResult
from agents.drivers.scripted import ScriptedDriver


def outcome_of(tool: Any, call: Any) -> dict[str, Any]:
    """What one tool call yields: {"value"} or {"error": type} or {"stop": message}."""
    if tool is None:
        return {"error": "UnknownTool"}
    if call.raw_arguments is not None:
        return {"error": "InvalidArguments"}
    arguments = dict(call.arguments)
    properties = tool.parameters["properties"]
    required = list(tool.parameters.get("required", ()))
    if any(name not in arguments for name in required):
        return {"error": "InvalidArguments"}
    for name, value in arguments.items():
        if name not in properties or not _fits(value, properties[name].get("type")):
            return {"error": "InvalidArguments"}
    try:
        value = tool.function(**arguments)
    except StopAgent as stop:
        return {"stop": stop.message}
    except Exception as exc:
        return {"error": type(exc).__name__}
    if isinstance(value, ToolResult):
        return {"value": value.value, "terminate": value.terminate}
    return {"value": value}


def _fits(value: Any, kind: str | None) -> bool:
    if kind == "integer":
        return type(value) is int or (type(value) is float and value.is_integer())
    if kind == "number":
        return type(value) in (int, float)
    if kind == "string":
        return type(value) is str
    if kind == "boolean":
        return type(value) is bool
    return True


def run_reference(script: list[Any], tools: dict[str, Any], max_steps: int) -> dict[str, Any]:
    """Steps (type and tool outcomes), terminal status and stop reason, the obvious way."""
    answers = ScriptedDriver(script)
    steps: list[dict[str, Any]] = []
    while True:
        if len(steps) >= max_steps:
            return {"steps": steps, "status": "stopped", "reason": "steps_limit"}
        try:
            response = answers.infer(None)  # type: ignore[arg-type]
        except Exception as exc:
            steps.append({"type": "error", "outcomes": []})
            return {
                "steps": steps,
                "status": "failed",
                "reason": "error",
                "error": type(exc).__name__,
            }
        outcomes = [outcome_of(tools.get(c.name), c) for c in response.tool_calls]
        failed = any("error" in o for o in outcomes)
        kind = "error" if failed else "tool_execution" if response.tool_calls else "final_response"
        steps.append({"type": kind, "outcomes": outcomes})
        if any("stop" in o for o in outcomes):
            return {"steps": steps, "status": "stopped", "reason": "stop_requested"}
        if outcomes and all(o.get("terminate") for o in outcomes):
            return {"steps": steps, "status": "completed", "reason": "completed"}
        if not response.tool_calls:
            return {"steps": steps, "status": "completed", "reason": "completed"}
