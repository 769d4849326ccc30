"""The source of the codec's per-class encoders and checkers (``encoding`` compiles them
with its helpers in the namespace): straight-line code, a field at a time."""

from __future__ import annotations

from typing import Any, Final, cast

import attrs
from pyrsistent import PMap, PVector

from agents.records.frozen import History
from agents.records.registry import (
    RECORDS_BY_TYPE,
    SHARED,
    compact_class,
    data_fields,
    element_of,
    field_plan,
    optional_of,
    parts_of_content,
    scope,
    value_kind,
)

__all__ = ["checker_source", "encoder_source"]

_STEP_SHARED: Final = frozenset({"ToolCall"})

_ENCODED: Final = {  # each value_kind's expression writing ``v`` (of field ``{name}``)
    "plain": "v",
    "datetime": (  # its class and offset checked (``_checked``)
        "(v if ctx.times and v.tzinfo is _UTC and v.microsecond and v.__class__ is _datetime "
        "else _timestamp(v))"
    ),
    "enum": "v.value",
    "record": "_ENC[_t_{name}](v, ctx)",  # its class checked (``_checked``)
    "records": (
        "[_ENC[_t_{name}](i, ctx) if i.__class__ is _t_{name} else "
        "_item(_cls, {name!r}, i, _t_{name}) for i in v]"  # (not ``record``: a cell)
    ),
    "map": "(_redact(v, ctx) if v else {{}})",
    "content": "(v if v.__class__ is str else [_FULL[i.__class__](i, ctx) for i in v])",
    "any": "_any(v, ctx)",
}


def _value_code(name: str, annotation: Any, namespace: dict[str, Any]) -> str:
    """An expression encoding ``v``, field ``name``'s value (never ``None`` unless the
    annotation allows it); a sequence of records checks each item's class."""
    inner = optional_of(annotation)
    if inner is not None:
        return f"(None if v is None else {_value_code(name, inner, namespace)})"
    kind = value_kind(annotation)
    if kind == "records":
        namespace[f"_t_{name}"] = element_of(annotation)
    return _ENCODED[kind].format(name=name)


def _checked(name: str, annotation: Any, namespace: dict[str, Any]) -> list[str]:
    """Lines checking a text, number, flag, enum, time or record field's value (one class
    test when it is of the declared type): a subclass's value is written as the declared
    type's (a ``StrEnum`` member as its text, as orjson writes it), anything else refused — a
    record built by hand with ``content=5``, ``role="user"``, a dict for a response or a
    time as text: written, it could not be read back. A time must be aware; a record field
    holds a record of its declared class only (a sequence of records checks each item where
    it is written: ``_value_code``). Maps and JSON values are frozen and checked where a
    record is made."""
    inner = optional_of(annotation)
    kind = inner if inner is not None else annotation
    checked = value_kind(kind)
    if checked == "content":  # text, or a vector of the parts it names
        namespace[f"_t_{name}"] = frozenset(parts_of_content(kind) or ())
        test = f"v.__class__ is not str and not _parts(v, _t_{name})"
        return [f"    if {test}:", f"        v = _plain(record, {name!r}, v, str, 'str or parts')"]
    if checked not in ("plain", "enum", "record", "datetime") and kind is not float:
        return []
    namespace[f"_t_{name}"] = kind
    test = f"v.__class__ is not _t_{name}"
    if checked == "datetime":  # an aware one (a naive time is no point in time)
        test = f"({test} or v.tzinfo is None)"
    elif kind is float:  # a finite one: ``v - v`` is NaN for NaN and the infinities
        test = f"({test} or v - v != 0)"
    if inner is not None:
        test = f"v is not None and {test}"
    declared = kind.__name__ + (" or None" if inner is not None else "")
    if checked == "record":  # a record of its class only: the decoder reads no other
        return [f"    if {test}:", f"        _wrong(record, {name!r}, v, {declared!r})"]
    return [f"    if {test}:", f"        v = _plain(record, {name!r}, v, _t_{name}, {declared!r})"]


def encoder_source(
    cls: type, annotations: dict[str, Any], namespace: dict[str, Any], compact: bool = False
) -> str:
    """The source of ``encode(record, ctx)`` for record class ``cls``, whose fields are
    written as ``annotations`` say: straight-line code, a field at a time, along the field
    plan. The caller's ``namespace`` holds what the code calls (``_ENC``, the encoders by
    class; ``_FULL``, those that write ``kind``; ``_Encoding``, ``_Refs``, ``_any``,
    ``_redact``, ``_timestamp``, ``_UTC``, ``_datetime``, ``_odd``, ``_plain``, ``_wrong``,
    ``_item``, ``_cls``); the types the checks test are put there. ``compact``: the audit
    log's form (docs/design/auditing.md): no ``kind``, no field at its default, a
    ``MessagesRef`` as its prefix alone, and ``_ENC`` the compact encoders, used where
    ``compact_class`` says."""
    state_scope = scope(cls)
    lines = ["def encode(record, ctx):"]
    start = "{}" if compact else f"{{'kind': {cls.__name__!r}}}"
    # Encoded once per state, by identity (compact: by ~id, and only what a step record
    # repeats: a tool call sits in its response, its message and its execution).
    if cls.__name__ in (_STEP_SHARED if compact else SHARED):
        key = "~id(record)" if compact else "id(record)"
        lines += [
            "    refs = ctx.refs",
            "    if refs is not None:",
            f"        done = refs.encoded.get({key})",
            "        if done is not None:",
            "            return done",
            f"    out = {start}",
            "    if refs is not None:",
            f"        refs.encoded[{key}] = out",
        ]
    else:
        lines.append(f"    out = {start}")
    if state_scope is not None:  # a document of its own: the steps inside refer to its context
        lines.append(f"    v = record.{state_scope}")
        lines += _checked(state_scope, annotations[state_scope], namespace)
        lines += ["    outer = ctx", "    ctx = _Encoding(_Refs(v), outer.times)"]
    fields = attrs.fields_dict(cls)
    for name, plain, optional, messages_ref in field_plan(cls):
        annotation = annotations[name]
        lines.append(f"    v = record.{name}")
        if name != state_scope:  # (checked above)
            lines += _checked(name, annotation, namespace)
        indent = "    "
        if compact and _blank_record(fields[name]):  # left out when its form is empty
            lines += _unless_blank(name, _value_code(name, annotation, namespace))
            namespace[f"_default_{name}"] = fields[name].default
            continue
        guard = None
        if optional or (compact and fields[name].default is not attrs.NOTHING):
            guard = _not_default(fields[name], namespace)
            lines.append(f"    if {guard}:")
            indent = "        "
        if plain:
            lines.append(f"{indent}out[{name!r}] = v")
            if annotation in (float, float | None):
                lines.append(f"{indent}if v.__class__ is float and _odd(v):")
                lines.append(f"{indent}    ctx.odd = True")
            continue
        code = _value_code(name, annotation, namespace)
        if guard == "v" and value_kind(annotation) == "map":  # not empty: tested above
            code = "_redact(v, ctx)"
        table = "_FULL" if compact and compact_class(annotation) is None else "_ENC"
        code = code.replace("_ENC[", f"{table}[")
        if messages_ref:  # (compact: the prefix alone)
            ref = "prefix" if compact else "{'kind': 'MessagesRef', 'prefix': prefix}"
            lines += [
                f"{indent}prefix = None if ctx.refs is None else ctx.refs.prefix_of(v)",
                f"{indent}out[{name!r}] = ({ref} if prefix is not None else {code})",
            ]
        elif compact and (cls.__name__, name) in _RESPONSE_REFS:
            lines += [indent + line for line in _RESPONSE_REFS[cls.__name__, name]]
        elif value_kind(annotation) == "records":
            lines += _records_loop(name, table, indent)
        else:
            lines.append(f"{indent}out[{name!r}] = {code}")
    if state_scope is not None:
        lines += ["    if ctx.odd:", "        outer.odd = True"]
    lines.append("    return out")
    return "\n".join(lines)


RESPONSE: Final = "response"
"""A step's output message written as the step's response (``InferenceResponse.to_message``)
in the audit log's compact form."""

# A step's references to its response (compact, docs/design/auditing.md), where the audit
# log has found them (``Refs.response``, ``Refs.calls``): the output message that is the
# response as it came is ``RESPONSE``, a tool execution's call that is the response's call
# of that id is the id — neither is encoded only to be replaced.
_RESPONSE_REFS: Final = {
    ("AgentStep", "output_messages"): [
        "w = []",
        "item_encoder = _ENC[_t_output_messages]",
        "answer = None if ctx.refs is None else ctx.refs.response",
        "for i in v:",
        "    if i.__class__ is not _t_output_messages:",
        "        _item(_cls, 'output_messages', i, _t_output_messages)",
        f"    w.append({RESPONSE!r} if i is answer and not w else item_encoder(i, ctx))",
        "out['output_messages'] = w",
    ],
    ("ToolExecution", "tool_call"): [
        "calls = None if ctx.refs is None else ctx.refs.calls",
        "known = calls and isinstance(v.id, str) and calls.get(v.id) is v",
        "out['tool_call'] = v.id if known else _ENC[_t_tool_call](v, ctx)",
    ],
}


def _unless_blank(name: str, code: str) -> list[str]:
    """Lines writing record field ``name`` (``code``) unless it is its default
    (``_default_<name>``) or its compact form is empty (``_blank_record``)."""
    return [
        f"    if v is not _default_{name}:",
        f"        w = {code}",
        "        if w:",
        f"            out[{name!r}] = w",
    ]


def _records_loop(name: str, table: str, indent: str) -> list[str]:
    """Lines writing field ``name``, a sequence of records, each by its encoder in
    ``table`` (``_ENC`` or ``_FULL``), its class checked: a loop, not a comprehension,
    which makes a function and calls it (in 3.11) — most of these lists hold a record or
    two (a step's messages, executions and calls) and are written at every step."""
    return [
        f"{indent}w = []",
        f"{indent}item_encoder = {table}[_t_{name}]",
        f"{indent}for i in v:",
        f"{indent}    if i.__class__ is not _t_{name}:",
        f"{indent}        _item(_cls, {name!r}, i, _t_{name})",
        f"{indent}    w.append(item_encoder(i, ctx))",
        f"{indent}out[{name!r}] = w",
    ]


def _blank_record(field: Any) -> bool:
    """Whether ``field``'s default is a record with each field at its default, whose
    compact form is ``{}``: a value is left out when its compact form is too (a record's
    ``==`` would call ``0.0`` and ``-0.0``, or ``0`` and ``false``, the same)."""
    default = field.default
    if type(default) not in RECORDS_BY_TYPE:
        return False
    try:
        return bool(type(default)() == default)
    except TypeError:  # a field without a default: not blank
        return False


def _not_default(field: Any, namespace: dict[str, Any]) -> str:
    """A test that ``v`` is not ``field``'s default, exactly (``0`` is not ``false``, nor
    ``-0.0`` ``0.0``)."""
    default: Any = field.default
    if isinstance(default, cast(type, attrs.Factory)):
        default = cast(Any, default).factory()
    if field.converter is not None:
        default = field.converter(default)
    if default is None or type(default) is bool:
        return f"v is not {default!r}"
    if not default and isinstance(default, str | tuple | PMap | PVector | History):
        return "v"  # an empty one (or "")
    namespace[f"_default_{field.name}"] = default
    if type(default) is float:
        return f"(v != _default_{field.name} or repr(v) != {repr(default)!r})"
    return f"(v.__class__ is not _default_{field.name}.__class__ or v != _default_{field.name})"


def checker_source(cls: type, annotations: dict[str, Any], namespace: dict[str, Any]) -> str:
    """The source of ``check(record, old)`` for record class ``cls``: the encoder's checks
    on each field of ``record`` that is not the same object in ``old``. The caller's
    ``namespace`` holds ``_CHK`` (the checkers by class), ``_items``, ``_plain`` and
    ``_wrong``."""
    lines = [
        "def check(record, old):",
        "    same = old is not None and old.__class__ is record.__class__",
    ]
    for field in data_fields(cls):
        name, annotation = field.name, annotations[field.name]
        inner = optional_of(annotation)
        kind = value_kind(inner if inner is not None else annotation)
        checks = _checked(name, annotation, namespace)
        if kind == "record":
            checks.append("    if v is not None:\n        _CHK[v.__class__](v, o)")
        elif kind == "records":
            namespace[f"_e_{name}"] = element_of(inner if inner is not None else annotation)
            checks.append(
                f"    if v is not None:\n        _items(record, {name!r}, v, o, _e_{name})"
            )
        if not checks:  # a map or a JSON value: frozen and checked where the record is made
            continue
        lines += [
            f"    v = record.{name}",
            f"    o = old.{name} if same else None",
            "    if not same or v is not o:",
            *(f"    {line}" for check in checks for line in check.split("\n")),
        ]
    lines.append("    return None")
    return "\n".join(lines)
