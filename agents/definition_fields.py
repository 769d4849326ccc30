"""The fields of a definition file: checked when a file is read (each against what it must
hold, with the file, line and field of the first bad one), and written as TOML (the flat
shape of a definition: scalars, string lists, one table). ``agents.definitions`` reads and
writes the formats."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any

from agents.errors import DefinitionError, InvalidArgument, InvalidType
from agents.records.frozen import NestingError, deep_freeze
from agents.records.json_text import has_lone_surrogate

__all__ = ["check_fields", "write_toml"]


def check_fields(
    data: dict[str, Any], lines: dict[str, int], source: str, fields: set[str]
) -> dict[str, Any]:
    """``data`` read from a definition file, checked field by field (``fields`` are the ones
    a definition has); a ``DefinitionError`` names the file, line and field of a bad one."""
    for key in data:
        if key not in fields:
            raise DefinitionError(
                f"unknown field (known: {', '.join(sorted(fields))})",
                file=source,
                line=lines.get(str(key)),
                field=str(key),
            )
    if "name" not in data:
        raise DefinitionError("missing field", file=source, field="name")

    def fail(field: str, expected: str) -> DefinitionError:
        got = type(data[field]).__name__
        return DefinitionError(
            f"expected {expected}, got {got}", file=source, line=lines.get(field), field=field
        )

    checks: dict[str, tuple[Callable[[Any], bool], str]] = {
        "name": (lambda v: isinstance(v, str) and bool(v.strip()), "a non-empty string"),
        "description": (lambda v: isinstance(v, str), "a string"),
        "system_prompt": (lambda v: isinstance(v, str), "a string"),
        "model": (lambda v: v is None or isinstance(v, str), "a string"),
        "llm_options": (lambda v: isinstance(v, dict) and _plain(v), "a table of plain values"),
        "tools": (_string_list, "a list of tool names"),
        "deny_tools": (_string_list, "a list of tool names"),
        "subagents": (_string_list, "a list of agent names"),
        "max_steps": (_positive_int_or_none, "a positive integer"),
        "max_tokens": (_positive_int_or_none, "a positive integer"),
        "max_cost": (_positive_number_or_none, "a positive number"),
        "time_limit": (_positive_number_or_none, "a positive number of seconds"),
        "tool_execution": (lambda v: v in ("parallel", "sequential"), "parallel or sequential"),
        "max_depth": (lambda v: _positive_int_or_none(v) and v is not None, "an integer >= 1"),
        "context_window": (_positive_int_or_none, "a positive number of tokens"),
        "max_message_tokens": (_positive_int_or_none, "a positive number of tokens"),
        "max_buffer_tokens": (
            lambda v: v is None or (isinstance(v, int) and not isinstance(v, bool) and v >= 0),
            "a number of tokens >= 0",
        ),
        "summary_model": (lambda v: v is None or (isinstance(v, str) and bool(v)), "a string"),
    }
    for field, value in data.items():
        check, expected = checks[field]
        if field == "llm_options" and isinstance(value, dict):
            try:
                deep_freeze(value)
            except NestingError as exc:
                raise DefinitionError(
                    str(exc), file=source, line=lines.get(field), field=field
                ) from None
        if not check(value):
            raise fail(field, expected)
    # Summaries need both budgets; a summary model without them would do nothing.
    for given, needed in (
        ("max_message_tokens", "max_buffer_tokens"),
        ("max_buffer_tokens", "max_message_tokens"),
        ("summary_model", "max_message_tokens"),
    ):
        if data.get(given) is not None and data.get(needed) is None:
            raise DefinitionError(
                f"{given} needs {needed} (summaries take both budgets)",
                file=source,
                line=lines.get(given),
                field=given,
            )
    return data


def _string_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) and item for item in value)


def _positive_int_or_none(value: Any) -> bool:
    return value is None or (isinstance(value, int) and not isinstance(value, bool) and value > 0)


def _positive_number_or_none(value: Any) -> bool:
    return value is None or (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    )


def _plain(value: Any) -> bool:
    """JSON data: objects with string keys, arrays, strings, finite numbers, booleans and
    null (YAML and TOML have more: dates, integer keys, which JSON would change)."""
    if value is None or isinstance(value, str | bool | int):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, Mapping):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return all(_plain(item) for item in value)
    return False


# -- writing TOML (the flat shape of a definition: scalars, string lists, one table) --------


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        if has_lone_surrogate(value):  # TOML escapes only Unicode's characters
            raise InvalidArgument("TOML holds only Unicode: a text has a lone surrogate (use YAML)")
        # JSON's escapes are TOML's basic strings', but for DEL, which TOML refuses raw
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(item) for item in value) + "]"
    if isinstance(value, dict):  # an inline table
        pairs = ", ".join(f"{_toml_value(k)} = {_toml_value(v)}" for k, v in value.items())
        return "{" + pairs + "}"
    if value is None:
        raise InvalidArgument("TOML has no null: a null option cannot be written (use YAML)")
    raise InvalidType(f"cannot write {type(value).__name__} as TOML")


def write_toml(data: dict[str, Any]) -> str:
    missing = [key for key, value in data.items() if value is None]
    if missing:
        raise InvalidArgument(
            f"TOML has no null: {missing} cannot be written (use YAML or Markdown)"
        )
    lines = [
        f"{key} = {_toml_field(key, value)}"
        for key, value in data.items()
        if key != "llm_options" and value is not None
    ]
    options = data.get("llm_options")
    if options:
        lines += ["", "[llm_options]"]
        lines += [f"{_toml_field(k, k)} = {_toml_field(k, v)}" for k, v in options.items()]
    return "\n".join(lines) + "\n"


def _toml_field(name: str, value: Any) -> str:
    try:
        return _toml_value(value)
    except ValueError as exc:
        raise InvalidArgument(f"field {name!r}: {exc}") from None
