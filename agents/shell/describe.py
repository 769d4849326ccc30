"""``AgentLoop.describe()``: what a loop is made of, as plain data and as Markdown.

Tools with their JSON schemas, hooks with their triggers and priorities, interceptors,
limits, the driver and its model — everything but secrets: a driver's options pass through
the codec's redaction (``api_key``, ``token``, ``…_secret`` and the like become
``"[redacted]"``), and nothing is read from the environment.
"""

from __future__ import annotations

import json
from typing import Any

from agents.records.codec import redact

__all__ = ["describe", "describe_markdown"]


def _name(value: Any) -> str:
    return getattr(value, "__qualname__", None) or type(value).__name__


def _driver(driver: Any) -> dict[str, Any]:
    own = getattr(driver, "describe", None)
    details = redact(own()) if callable(own) else {}
    model = getattr(driver, "model", None)
    return {
        "type": type(driver).__name__,
        "model": model if isinstance(model, str) else None,
        **details,
    }


def describe(loop: Any) -> dict[str, Any]:
    """An ``AgentLoop`` as JSON data (see the module docstring); read by attribute, as this
    module sits below the loop that calls it."""
    tools = []
    for name in loop.tools:
        tool = loop.tools[name]
        tools.append(
            {
                **tool.schema,
                "sequential": tool.sequential,
                "requires_approval": tool.requires_approval,
                "timeout": tool.timeout,
                "is_async": tool.is_async,
                "thread": tool.thread,
            }
        )
    hooks = [
        {
            "name": item.name,
            "triggers": sorted(trigger.value for trigger in item.triggers),
            "priority": item.priority,
        }
        for item in sorted(loop.hooks, key=lambda h: -h.priority)
    ]
    interceptors = [
        {
            "type": type(item).__name__,
            "inference": hasattr(item, "intercept_inference"),
            "tools": hasattr(item, "intercept_tool"),
        }
        for item in loop.interceptors
    ]
    driver = _driver(loop.driver)
    return {
        "driver": driver,
        "tools": tools,
        "hooks": hooks,
        "interceptors": interceptors,
        "limits": {
            "max_steps": loop.max_steps,
            "max_tokens": loop.max_tokens,
            "max_cost": loop.max_cost,
            "time_limit": loop.time_limit,
            "stop_on_finish_reasons": list(loop.stop_on_finish_reasons),
            "stop_on_tool_error": loop.stop_on_tool_error,
            "output_retries": loop.output_retries,
        },
        "tool_execution": loop.tool_execution,
        "message_compiler": None if loop.message_compiler is None else repr(loop.message_compiler),
        "compaction": None if loop.compaction is None else repr(loop.compaction),
        "clock": type(loop.clock).__name__ if loop.clock is not None else "SystemClock",
        "ids": type(loop.ids).__name__ if loop.ids is not None else "RandomIds",
        "listeners": [_name(listener) for listener in loop.listeners],
        # what the model takes and gives, as its driver says (text, image, pdf, audio,
        # reasoning), else text: a scripted or function driver answers whatever it gets
        "modalities": list(driver.get("modalities") or ["text"]),
    }


def _cell(value: Any) -> str:
    text = "—" if value is None or value == [] else str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def describe_markdown(loop: Any) -> str:
    """The loop as a Markdown page: driver, limits, tools (with schemas), hooks."""
    data = describe(loop)
    driver = data["driver"]
    lines = [
        "# Agent loop",
        "",
        f"- Driver: `{driver['type']}`"
        + (f", model `{driver['model']}`" if driver["model"] else ""),
        f"- Tool execution: {data['tool_execution']}; clock `{data['clock']}`, ids `{data['ids']}`",
        f"- Modalities: {', '.join(data['modalities'])}",
        *(
            [f"- Messages: compiler `{data['message_compiler']}`"]
            if data["message_compiler"]
            else []
        ),
        *([f"- Compaction: `{data['compaction']}`"] if data["compaction"] else []),
        "",
        "## Limits",
        "",
        "| limit | value |",
        "|---|---|",
        *(f"| {name} | {_cell(value)} |" for name, value in data["limits"].items()),
        "",
        f"## Tools ({len(data['tools'])})",
        "",
    ]
    if not data["tools"]:
        lines += ["No tools.", ""]
    for tool in data["tools"]:
        flags = [
            flag
            for flag, on in (
                ("sequential", tool["sequential"]),
                ("requires approval", tool["requires_approval"]),
                ("async", tool["is_async"]),
                ("on the event loop", not tool["is_async"] and not tool["thread"]),
                (f"timeout {tool['timeout']} s", tool["timeout"] is not None),
            )
            if on
        ]
        lines += [
            f"### `{tool['name']}`" + (f" ({', '.join(flags)})" if flags else ""),
            "",
            tool["description"] or "(no description)",
            "",
            "```json",
            json.dumps(tool["parameters"], indent=2, sort_keys=True),
            "```",
            "",
        ]
    lines += [f"## Hooks ({len(data['hooks'])})", ""]
    if data["hooks"]:
        lines += ["| hook | triggers | priority |", "|---|---|---|"]
        lines += [
            f"| {_cell(h['name'])} | {', '.join(h['triggers'])} | {h['priority']} |"
            for h in data["hooks"]
        ]
    else:
        lines.append("No hooks.")
    if data["interceptors"]:
        lines += ["", f"## Interceptors ({len(data['interceptors'])})", ""]
        lines += [
            f"- `{i['type']}`: "
            + ", ".join(
                part for part, on in (("inference", i["inference"]), ("tools", i["tools"])) if on
            )
            for i in data["interceptors"]
        ]
    return "\n".join(lines) + "\n"
