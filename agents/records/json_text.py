"""JSON text read strictly — ``NaN`` and ``Infinity`` (which Python's ``json`` accepts) are
refused, and nesting past what the readers handle is reported with its line and column —
and written canonically: compact, with orjson where it writes what ``json.dumps`` writes.

Reading is Python's ``json``: orjson read a 1,000-step state 2 to 5 % faster and the audit
logs of ``regress`` 7 % faster, not enough to keep a second reader (and the scan for
integers past 64 bits, which orjson reads otherwise). The one exception is
``canonical_object``, verify's check that a line is the canonical form of its record:
orjson reads and writes it again 2.7x faster, and any text where the two could differ is
checked again by ``json``. docs/architecture.md has the figures."""

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
    "json_lines",
    "loads",
    "nesting_position",
    "parse_object",
    "replace_lone_surrogates",
    "sorted_json",
    "time_text",
    "timestamp",
    "utf8_safe",
]

MAX_STATES: Final = 16
"""How many ``AgentState``s may nest in a document (a sub-agent's run inside its parent's
tool execution, and so on): deeper documents are refused with a ``StateDecodeError``."""


_LONE_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def loads(text: str | bytes) -> Any:
    """JSON text as Python data, as ``json.loads`` reads it, strictly: ``NaN`` and
    ``Infinity`` (which ``json`` accepts) and nesting past what the readers handle are
    ``StateDecodeError``s, as is any text that is no JSON."""
    try:
        if not isinstance(text, str):  # bytes in UTF-8, -16 or -32, as json.loads takes them
            text = text.decode(json.detect_encoding(text), "surrogatepass")
        if text.startswith("\ufeff"):
            raise StateDecodeError("not valid JSON: unexpected UTF-8 byte order mark")
        return _DECODER.decode(text)
    except RecursionError:
        where = _too_deep(text)
        raise StateDecodeError(f"not valid JSON: nested too deeply ({where})") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise StateDecodeError(f"not valid JSON: {exc}") from None


def json_lines(text: str) -> list[str]:
    """The lines of a JSON Lines text: split at ``\\n`` alone, as the format says (JSON
    strings may hold U+2028, NEL and the other breaks ``str.splitlines`` splits at, raw);
    a newline after the last line ends it (no empty line after it)."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


class JsonLines:
    """JSON texts in UTF-8, each on a line ended by a newline (an audit log), each read as
    ``loads`` reads it when asked for (``lines[k]``): what is read one at a time goes as
    soon as its reader is done with it. ``StateDecodeError`` for text that does not end
    with a newline, or a line that is no JSON; no text is no lines."""

    __slots__ = ("_lines",)

    def __init__(self, data: bytes) -> None:
        if data and not data.endswith(b"\n"):
            raise StateDecodeError("the text does not end with a newline (a torn last line?)")
        self._lines = data.split(b"\n")[:-1]

    def __len__(self) -> int:
        return len(self._lines)

    def __getitem__(self, index: int) -> Any:
        try:
            text = self._lines[index].decode("utf-8")
        except UnicodeDecodeError:
            raise StateDecodeError(f"line {index + 1} is not UTF-8") from None
        return loads(text)


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
        data, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=time_text
    )
    return utf8_safe(text)


def time_text(value: Any) -> str:
    """An aware ``datetime`` the encoders left for orjson (``Encoding.times``) as
    ``timestamp`` writes it, for ``json.dumps``'s ``default``; anything else refused."""
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


def sorted_json(data: dict[str, Any]) -> bytes | None:
    """Plain JSON data as compact UTF-8 with sorted keys, by orjson: what ``json.dumps(data,
    sort_keys=True, separators=(",", ":"), ensure_ascii=False)`` writes when the data holds
    no float the two write otherwise (``redaction.odd_float``: the caller knows); ``None``
    for data orjson refuses (integers past 64 bits, lone surrogates)."""
    try:
        return orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:
        return None


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


# One decoder for every document, as json.loads keeps one for its defaults: a decoder made
# per call is a reference cycle with its scanner, which waits for the garbage collector.
_DECODER: Final = json.JSONDecoder(parse_constant=_non_finite)


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
