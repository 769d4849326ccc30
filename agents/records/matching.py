"""Whether a record is what a JSON document says — what the codec would write for it,
exactly (values and their JSON types) — without writing it: code generated for each record
class from its field plan, as its encoder is (``encoding``), comparing field by field.

``loose`` names fields (at any depth) whose recorded value need only be one the decoder
reads, of the kind the record's is — ids and times, which differ between two runs of the
same behaviour: a time must be ISO-8601 text with its offset, an id text.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any, Final

from agents.records.compiled import compiled, optional_of, value_kind
from agents.records.encoding import Encoding, encode_any
from agents.records.json_text import exact, timestamp
from agents.records.redaction import redact
from agents.records.registry import (
    RECORD,
    RECORDS_BY_TYPE,
    Refs,
    data_fields,
    field_plan,
    hints,
    scope,
)

__all__ = ["Known", "json_alike", "matches"]

Matcher = Callable[[Any, Any, Any, Any], bool]


def matches(
    record: Any,
    data: Any,
    loose: frozenset[str] = frozenset(),
    refs: Any = None,
    known: Known | None = None,
) -> bool:
    """Whether ``record`` is written as ``data`` (``kind`` and fields, without
    ``schema_version``), the ``loose`` fields only checked to be readable; ``refs``: the
    references of the state holding it (a step's input written as a ``MessagesRef``);
    ``known``: records already found to be written as some JSON (``Known.add``), which a
    record inside is compared by (as text) instead of field by field."""
    return _BY_LOOSE[loose][type(record)](record, data, refs, known)


class Known(dict[int, list[Any]]):
    """Records known to stand for some JSON, by identity (each kept alive here, with that
    JSON): a record met inside a record being matched is compared by it — the same JSON
    object, or the same text (its own written once) — instead of field by field."""

    def add(self, record: Any, data: Any) -> None:
        """``record`` stands for ``data``: it was matched with it, or decoded from it (as
        a reader of ``data`` would have it, whatever the decoder made of it)."""
        self[id(record)] = [record, data, None]


def json_alike(mine: Any, theirs: Any) -> bool:
    """Two JSON values equal with their JSON types (``1``, ``1.0`` and ``true`` differ)."""
    kind = type(mine)
    if kind is not type(theirs):
        return False
    if kind is dict:
        if mine.keys() != theirs.keys():
            return False
        return all(json_alike(value, theirs[key]) for key, value in mine.items())
    if kind is list:
        return len(mine) == len(theirs) and all(map(json_alike, mine, theirs))
    return bool(mine == theirs)


class _Matchers(dict[type, Matcher]):
    """Each class's matcher for one set of loose fields, compiled when first asked for
    (generated code looks a field's matcher up here by its value's class)."""

    def __init__(self, loose: frozenset[str]) -> None:
        super().__init__()
        self.loose = loose

    def __missing__(self, cls: type) -> Matcher:
        loose = self.loose
        found = self[cls] = _compile(cls, loose, self) if cls in RECORDS_BY_TYPE else _value(loose)
        return found


class _ByLoose(dict[frozenset[str], _Matchers]):
    """The matchers of each set of loose fields, made when first asked for."""

    def __missing__(self, loose: frozenset[str]) -> _Matchers:
        found = self[loose] = _Matchers(loose)
        return found


_BY_LOOSE: Final = _ByLoose()


def _value(loose: frozenset[str]) -> Matcher:
    """Any value that is not a record, by what the encoder writes for it."""

    def match(value: Any, data: Any, refs: Any, known: Any) -> bool:
        return json_alike(encode_any(value, Encoding(None)), data)

    return match


def _readable(mine: Any, theirs: Any) -> bool:
    """A loose field: a value the decoder reads, of the kind the record's is."""
    if type(mine) is datetime:
        if type(theirs) is not str:
            return False
        try:
            return datetime.fromisoformat(theirs).tzinfo is not None
        except ValueError:
            return False
    if mine is None or type(mine) in (str, int, float):
        return type(mine) is type(theirs)
    return json_alike(encode_any(mine, Encoding(None)), theirs)


def _as_known(entry: list[Any], data: Any) -> bool:
    """``data`` written as the JSON a ``Known`` entry stands for (so equal to it with its
    JSON types): that JSON's text is written once, the first time it is asked for."""
    text: bytes | None = entry[2]
    if text is None:
        text = entry[2] = exact(entry[1]) or b""  # b"": unwritable, like nothing else
    return text == exact(data)


def _map(value: Any, data: Any) -> bool:
    if not value:
        return type(data) is dict and not data
    return json_alike(redact(value), data)


def _records(values: Any, data: Any, refs: Any, known: Any, matchers: _Matchers) -> bool:
    if type(data) is not list or len(data) != len(values):
        return False
    for value, item in zip(values, data, strict=True):
        if not matchers[type(value)](value, item, refs, known):
            return False
    return True


_MATCHED: Final = {  # each value_kind's test: is ``v`` written as ``x``?
    "plain": "(x.__class__ is v.__class__ and x == v)",
    "datetime": "(x.__class__ is str and x == _timestamp(v))",
    "enum": "(x.__class__ is v._value_.__class__ and x == v._value_)",
    "record": "_M[v.__class__](v, x, refs, known)",
    "records": "((x.__class__ is list and not x) if not v else _records(v, x, refs, known, _M))",
    "map": "_map(v, x)",
    "any": "_M[v.__class__](v, x, refs, known)",
}


def _code(annotation: Any) -> str:
    """An expression: whether ``v`` (never ``None`` unless the annotation allows it) is
    written as ``x``, as the encoder writes it (``value_kind``)."""
    inner = optional_of(annotation)
    if inner is not None:
        return f"(x is None if v is None else {_code(inner)})"
    return _MATCHED[value_kind(annotation)]


def _compile(cls: type, loose: frozenset[str], matchers: _Matchers) -> Matcher:
    annotations = hints(cls)
    fields = {field.name: field for field in data_fields(cls)}
    head = [
        "def match(r, d, refs, known):",
        "    if known is not None:",
        "        k = known.get(id(r))",
        "        if k is not None and k[0] is r and (k[1] is d or _as_known(k, d)):",
        "            return True",
        f"    if d.__class__ is not dict or d.get('kind') != {cls.__name__!r}:",
        "        return False",
    ]
    lines: list[str] = []
    count = 1  # the fields always written, ``kind`` with them; the optional ones counted
    state_scope = scope(cls)
    if state_scope is not None:  # steps inside refer to this state's conversation
        lines.append(f"    refs = _Refs(r.{state_scope})")
    for name, plain, optional, messages_ref in field_plan(cls):
        lines.append(f"    v = r.{name}")
        indent = "    "
        if optional:
            lines += ["    if v is None:", f"        if {name!r} in d:", "            return False"]
            lines += ["    else:", "        n += 1"]
            indent = "        "
        else:
            count += 1
        lines.append(f"{indent}x = d[{name!r}]")
        if name in loose:
            test = "_readable(v, x)"
        elif plain:
            test = "(x.__class__ is v.__class__ and x == v)"
        elif fields[name].metadata.get(RECORD) is not None:
            test = "_M[v.__class__](v, x, refs, known)"
        else:
            test = _code(annotations[name])
        if messages_ref:
            lines += [
                f"{indent}p = None if refs is None else refs.prefix_of(v)",
                f"{indent}if p is not None:",
                f"{indent}    ok = x.__class__ is dict and len(x) == 2 and "
                "x.get('kind') == 'MessagesRef' and x.get('prefix').__class__ is int "
                "and x['prefix'] == p",
                f"{indent}else:",
                f"{indent}    ok = {test}",
                f"{indent}if not ok:",
                f"{indent}    return False",
            ]
        else:
            lines += [f"{indent}if not {test}:", f"{indent}    return False"]
    body = [f"    n = {count}", *lines, "    return len(d) == n"]
    # a field the JSON lacks: KeyError (``d[...]`` is quicker than ``d.get``), no match
    lines = [
        *head,
        "    try:",
        *(f"    {line}" for line in body),
        "    except KeyError:",
        "        return False",
    ]
    namespace: dict[str, Any] = {
        "_M": matchers,
        "_Refs": Refs,
        "_map": _map,
        "_readable": _readable,
        "_records": _records,
        "_timestamp": timestamp,
        "_as_known": _as_known,
    }
    match: Matcher = compiled("\n".join(lines), namespace, cls, "match")
    return match
