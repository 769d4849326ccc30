"""JSON text read strictly — ``NaN`` and ``Infinity`` (which Python's ``json`` accepts) are
refused, and nesting past what the readers handle is reported with its line and column —
and written canonically: compact, with orjson where it writes what ``json.dumps`` writes."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, Final

import orjson
from pyrsistent import PMap

from agents.errors import InvalidArgument, InvalidType, StateDecodeError
from agents.records.frozen import MAX_DEPTH, NestingError, to_pmap

__all__ = [
    "MAX_STATES",
    "JsonLines",
    "canonical_object",
    "dumps",
    "exact",
    "exact_or_refuse",
    "has_lone_surrogate",
    "loads",
    "nesting_position",
    "parse_object",
    "replace_lone_surrogates",
    "timestamp",
    "utf8_safe",
]

MAX_STATES: Final = 16
"""How many ``AgentState``s may nest in a document (a sub-agent's run inside its parent's
tool execution, and so on): deeper documents are refused with a ``StateDecodeError``."""


_DIGITS: Final = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))
_LONG_NUMBER: Final = b"0" * 19  # after _DIGITS, 19 digits in a row: an integer past 64 bits?
# What may stand right before a run of digits that is no integer's: inside a string (after
# its opening quote, or a letter), or a fraction's or an exponent's digits (after "." or "e").
_NOT_AN_INTEGER: Final = frozenset(b'".abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ')
_BY_JSON: Final = object()
_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def loads(text: str | bytes) -> Any:
    """JSON text as Python data, strictly: ``NaN`` and ``Infinity`` (which Python's ``json``
    accepts) and nesting past what the readers handle are ``StateDecodeError``s too.

    Read by orjson (twice as fast), unless it could read the text otherwise than ``json``:
    anything orjson refuses goes to ``json``, which accepts or refuses it as it always did
    (lone surrogates, ``1e400``, other encodings, deep nesting), and so does any text with
    19 digits in a row, since orjson reads integers past 64 bits as floats."""
    data = _by_orjson(text)
    if data is not _BY_JSON:
        return data
    try:
        return json.loads(text, parse_constant=_non_finite)
    except RecursionError:
        where = _too_deep(text)
        raise StateDecodeError(f"not valid JSON: nested too deeply ({where})") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise StateDecodeError(f"not valid JSON: {exc}") from None


def _by_orjson(text: str | bytes) -> Any:
    try:
        raw = text.encode() if isinstance(text, str) else text
    except UnicodeEncodeError:  # a lone surrogate in the text itself
        return _BY_JSON
    if _long_integer(raw):
        return _BY_JSON
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return _BY_JSON


def _long_integer(raw: bytes) -> bool:
    """Whether ``raw`` may hold an integer of 19 digits or more, which orjson reads as a
    float past 64 bits: a run of 19 digits not inside a string nor a fraction (a hash's
    hex digits, the 64 zeros of an audit log's first hash, are no integer)."""
    digits = raw.translate(_DIGITS)
    start = digits.find(_LONG_NUMBER)
    while start >= 0:
        if start == 0 or raw[start - 1] not in _NOT_AN_INTEGER:
            return True
        end = digits.find(b" ", start)
        if end < 0:
            return False
        start = digits.find(_LONG_NUMBER, end)
    return False


class JsonLines:
    """JSON texts in UTF-8, each on a line ended by a newline (an audit log), each read as
    ``loads`` reads it when asked for (``lines[k]``): what is read one at a time goes as
    soon as its reader is done with it. Each line goes to orjson as bytes (it checks the
    UTF-8 itself); one pass over the whole text looks for integers it would read otherwise
    than ``json`` (``_long_integer``), and only if there is one is each line looked at.
    ``StateDecodeError`` for text that does not end with a newline, or a line that is no
    JSON; no text is no lines."""

    __slots__ = ("_lines", "_suspect")

    def __init__(self, data: bytes) -> None:
        if data and not data.endswith(b"\n"):
            raise StateDecodeError("the text does not end with a newline (a torn last line?)")
        # each line a view of the text (orjson reads a view; measured faster than copies)
        view, find = memoryview(data), data.find
        lines, start, end = [], 0, find(b"\n")
        while end >= 0:
            lines.append(view[start:end])
            start, end = end + 1, find(b"\n", end + 1)
        self._lines = lines
        self._suspect = _long_integer(data)

    def __len__(self) -> int:
        return len(self._lines)

    def __getitem__(self, index: int) -> Any:
        line = self._lines[index]
        if not (self._suspect and _long_integer(bytes(line))):
            try:
                return orjson.loads(line)
            except orjson.JSONDecodeError:
                pass  # loads says what is wrong, or reads what only json reads
        try:
            return loads(bytes(line).decode("utf-8"))
        except UnicodeDecodeError:
            raise StateDecodeError(f"line {index + 1} is not UTF-8") from None


def dumps(data: Any, *, exotic: bool = False) -> str:
    """Plain JSON data as compact text: byte for byte ``json.dumps(data, ensure_ascii=False,
    separators=(",", ":"), allow_nan=False)``, written by orjson (about 15x faster) unless
    the data is ``exotic`` — holds a float the two write differently (Python writes
    ``1e-05`` and ``1e+16``, orjson ``1e-5`` and ``1e16``; ``redaction.odd_float``) — or
    orjson refuses it (integers past 64 bits, lone surrogates): ``json`` writes those, with
    each lone surrogate escaped (``utf8_safe``), so that the text is UTF-8 as
    docs/design/records.md says. An aware ``datetime`` in the data is written as ``timestamp``
    writes it (the encoders leave one where orjson writes it so, ``Encoding.times``)."""
    if not exotic:
        try:
            return orjson.dumps(data).decode()
        except orjson.JSONEncodeError:
            pass
    text = json.dumps(
        data, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=_time_text
    )
    return utf8_safe(text)


def _time_text(value: Any) -> str:
    if type(value) is datetime and value.tzinfo is not None:
        return timestamp(value)
    raise InvalidType(f"Object of type {type(value).__name__} is not JSON serializable")


def utf8_safe(text: str) -> str:
    """JSON text that UTF-8 can hold: each lone surrogate in it written as the escape
    JSON reads back as the same character (``"\\udcff"``, as ``json.dumps`` escapes it),
    the rest as it is.

    A lone surrogate is not Unicode, yet Python text holds one wherever bytes were decoded
    with ``surrogateescape`` (a file name from ``os.listdir``, a command-line argument that
    is not UTF-8) or JSON said ``"\\ud800"``; written raw, a file, a database or a hash
    refuses it. (Two lone surrogates that happen to make a pair read back as the one
    character they encode: no JSON text tells them apart.)"""
    return _LONE_SURROGATE.sub(_escaped, text) if has_lone_surrogate(text) else text


def replace_lone_surrogates(text: str) -> str:
    """``text`` with each lone surrogate (see ``utf8_safe``) as U+FFFD, the replacement
    character: for protocols whose own types refuse the escape (MCP, AG-UI), which show
    the text rather than keep it."""
    return _LONE_SURROGATE.sub("\ufffd", text) if has_lone_surrogate(text) else text


def has_lone_surrogate(text: str) -> bool:
    """Whether ``text`` holds a lone surrogate (see ``utf8_safe``)."""
    return not text.isascii() and _LONE_SURROGATE.search(text) is not None


def _escaped(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def canonical_object(text: bytes, canonical: Callable[[dict[str, Any]], bytes]) -> Any:
    """The JSON object ``text`` holds when ``text`` is exactly ``canonical`` of it (sorted
    keys, no spaces, no key twice); ``None`` otherwise. Compared with orjson's sorted form
    first (a fifth of the cost of ``json``'s); where the two write a value differently
    (floats such as ``1e-05``, integers past 64 bits, escaped lone surrogates) with
    ``canonical`` itself."""
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError:
        data = None
    if type(data) is dict and orjson.dumps(data, option=orjson.OPT_SORT_KEYS) == text:
        return data
    try:
        data = loads(text.decode("utf-8"))
    except (UnicodeDecodeError, StateDecodeError):
        return None
    return data if type(data) is dict and canonical(data) == text else None


exact_or_refuse: Final = orjson.dumps
"""``exact`` without its ``None``: a ``TypeError`` for data orjson cannot write (for
generated code that catches it itself, sparing a call)."""


def exact(data: Any) -> bytes | None:
    """A key telling plain JSON data apart exactly (``1``, ``1.0`` and ``true`` differ, as
    ``==`` does not tell them), or ``None`` for data orjson cannot write."""
    try:
        return orjson.dumps(data)
    except (orjson.JSONEncodeError, TypeError):
        return None


def timestamp(value: datetime) -> str:
    """An aware time as ``value.isoformat(timespec="microseconds")`` writes it, by orjson
    (4x faster) where it writes the same: UTC, with a fraction of a second (orjson leaves
    out a zero fraction)."""
    if value.tzinfo is UTC and value.microsecond and type(value) is datetime:
        return orjson.dumps(value)[1:-1].decode()
    return value.isoformat(timespec="microseconds")


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
    raise InvalidArgument(f"{name} is not a JSON number")


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
