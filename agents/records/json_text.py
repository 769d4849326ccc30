"""JSON text read strictly: ``NaN`` and ``Infinity`` (which Python's ``json`` accepts) are
refused, and nesting past what the readers handle is reported with its line and column."""

from __future__ import annotations

import json
from typing import Any, Final

from pyrsistent import PMap

from agents.errors import StateDecodeError
from agents.records.frozen import MAX_DEPTH, NestingError, to_pmap

__all__ = ["MAX_STATES", "loads", "nesting_position", "parse_object"]

MAX_STATES: Final = 16
"""How many ``AgentState``s may nest in a document (a sub-agent's run inside its parent's
tool execution, and so on): deeper documents are refused with a ``StateDecodeError``."""


def loads(text: str | bytes) -> Any:
    """JSON text as Python data, strictly: ``NaN`` and ``Infinity`` (which Python's ``json``
    accepts) and nesting past what the readers handle are ``StateDecodeError``s too."""
    try:
        return json.loads(text, parse_constant=_non_finite)
    except RecursionError:
        where = _too_deep(text)
        raise StateDecodeError(f"not valid JSON: nested too deeply ({where})") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise StateDecodeError(f"not valid JSON: {exc}") from None


def parse_object(text: str) -> PMap[str, Any] | None:
    """A JSON object in ``text`` (a model's tool call arguments) as a frozen map, or
    ``None`` when it is not one: invalid JSON, another kind of value, non-finite numbers,
    or nesting past ``MAX_DEPTH``."""
    try:
        value = loads(text)
    except StateDecodeError:
        return None
    if not isinstance(value, dict):
        return None
    try:
        return to_pmap(value)
    except NestingError:
        return None


def _non_finite(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _too_deep(text: str | bytes) -> str:
    """Where a document nests past the codec's limits, for the error (looked for only
    after the parser gave up)."""
    limit = MAX_DEPTH + 20 * MAX_STATES
    found = nesting_position(text, limit)
    if found is None:
        return "more levels than the parser allows"
    line, column = found
    return f"more than {limit} levels at line {line} column {column}"


def nesting_position(text: str | bytes, limit: int) -> tuple[int, int] | None:
    """The line and column (1-based) where JSON-like text (JSON, TOML and YAML flow
    collections) first nests deeper than ``limit`` brackets, or ``None``."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    depth, line, column, quoted, escaped = 0, 1, 0, "", False
    for char in text:
        column += 1
        if quoted:
            if escaped:
                escaped = False
            elif char == "\\" and quoted == '"':
                escaped = True
            elif char == quoted:
                quoted = ""
        elif char in "\"'":
            quoted = char
        elif char in "[{":
            depth += 1
            if depth > limit:
                return line, column
        elif char in "]}":
            depth -= 1
        if char == "\n":
            line, column = line + 1, 0
    return None
