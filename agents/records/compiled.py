"""Per-class encoders compiled from the field plans (as attrs compiles
``__init__``): straight-line code for each record class instead of a loop over its fields.

They do what the general code in ``codec`` and ``decoding`` does, field for field — the
same output, the same checks, the same errors — only faster: a record's fields are written
or read by one generated function, scalar fields checked inline. Decoding compiles the
optimistic first pass only; whatever it doubts (or a class holding a state's scope) goes
the general way, which builds paths for the error.

The encoder also notes whether the data holds a float that ``orjson`` writes differently
from Python's ``json`` (an exponent below ``1e-4``; non-finite numbers, which are an
error): ``to_json`` writes with orjson unless it does.
"""

from __future__ import annotations

import enum
import types
import typing
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Final, Union

from pyrsistent import PMap, PVector

from agents.records.frozen import History, to_pvector
from agents.records.redaction import odd_float, redact
from agents.records.registry import (
    RECORD,
    RECORDS_BY_TYPE,
    Refs,
    data_fields,
    field_plan,
    hints,
    scope,
)

__all__ = [
    "Encoding",
    "compiled",
    "element_of",
    "encode_any",
    "encoder_of",
    "is_pvector",
    "optional_of",
]


class Encoding:
    """What encoding one document carries along: the references of the enclosing state
    (``None`` outside one) and whether a float was seen that orjson writes differently."""

    __slots__ = ("odd", "refs")

    def __init__(self, refs: Refs | None) -> None:
        self.refs = refs
        self.odd = False


_ENCODERS: dict[type, Callable[[Any, Encoding], dict[str, Any]]] = {}


def encoder_of(cls: type) -> Callable[[Any, Encoding], Any]:
    """The compiled encoder of record class ``cls``: ``(record, encoding) -> dict``
    (for any other type, ``encode_any``: a field may hold what its annotation does not say,
    and is written by what it holds, as the general encoder does)."""
    found = _ENCODERS.get(cls)
    if found is None:
        if cls not in RECORDS_BY_TYPE:
            return encode_any
        found = _ENCODERS[cls] = _compile_encoder(cls)
    return found


# -- encoders ---------------------------------------------------------------------------------


def is_pvector(origin: Any) -> bool:
    """Whether a generic origin is pyrsistent's ``PVector``."""
    return origin is PVector or getattr(origin, "__name__", "") == "PVector"


def element_of(annotation: Any) -> Any:
    """The element type of a sequence annotation, or ``None`` when it is not one."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is History or is_pvector(origin):
        return args[0]
    if origin is tuple and len(args) == 2 and args[1] is Ellipsis:
        return args[0]
    return None


def optional_of(annotation: Any) -> Any:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (Union, types.UnionType) and len(args) == 2 and type(None) in args:
        return next(arg for arg in args if arg is not type(None))
    return None


def _value_code(annotation: Any) -> str:
    """An expression encoding ``v`` (never ``None`` unless the annotation allows it)."""
    inner = optional_of(annotation)
    if inner is not None:
        return f"(None if v is None else {_value_code(inner)})"
    if annotation is str or annotation is int or annotation is bool:
        return "v"
    if annotation is datetime:
        return "_datetime(v)"
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return "v.value"
    if annotation in RECORDS_BY_TYPE:  # by the class it holds, as the general encoder does
        return "_ENC(v.__class__)(v, ctx)"
    if element_of(annotation) in RECORDS_BY_TYPE:
        return "[_ENC(i.__class__)(i, ctx) for i in v]"
    origin = typing.get_origin(annotation)
    if origin in (Mapping, dict, PMap) or getattr(origin, "__name__", "") == "PMap":
        return "(_redact(v, ctx) if v else {})"
    return "_any(v, ctx)"


def _compile_encoder(cls: type) -> Callable[[Any, Encoding], dict[str, Any]]:
    annotations = hints(cls)
    state_scope = scope(cls)
    lines = [
        "def encode(record, ctx):",
        "    refs = ctx.refs",
        "    if refs is not None:",
        "        done = refs.encoded.get(id(record))",
        "        if done is not None:",
        "            return done",
        f"    out = {{'kind': {cls.__name__!r}}}",
    ]
    if state_scope is not None:  # a document of its own: the steps inside refer to its context
        lines += ["    outer = ctx", f"    ctx = _Encoding(_Refs(record.{state_scope}))"]
    else:
        lines += ["    if refs is not None:", "        refs.encoded[id(record)] = out"]
    fields = {field.name: field for field in data_fields(cls)}
    for name, plain, optional, messages_ref in field_plan(cls):
        annotation = annotations[name]
        named = fields[name].metadata.get(RECORD)
        lines.append(f"    v = record.{name}")
        if plain:
            lines.append(f"    out[{name!r}] = v")
            if annotation in (float, float | None):
                lines.append("    if v.__class__ is float and _odd(v):\n        ctx.odd = True")
            continue
        code = "_any(v, ctx)" if named is not None else _value_code(annotation)
        indent = "    "
        if optional:
            lines.append("    if v is not None:")
            indent = "        "
        if messages_ref:
            lines += [
                f"{indent}prefix = None if ctx.refs is None else ctx.refs.prefix_of(v)",
                f"{indent}out[{name!r}] = ("
                f"{{'kind': 'MessagesRef', 'prefix': prefix}} if prefix is not None else {code})",
            ]
        else:
            lines.append(f"{indent}out[{name!r}] = {code}")
    if state_scope is not None:
        lines += ["    if ctx.odd:", "        outer.odd = True"]
    lines.append("    return out")
    namespace: dict[str, Any] = {
        "_ENC": encoder_of,
        "_Encoding": Encoding,
        "_Refs": Refs,
        "_any": encode_any,
        "_redact": _redact,
        "_datetime": _datetime,
        "_odd": odd_float,
    }
    encode: Callable[[Any, Encoding], dict[str, Any]] = compiled(
        "\n".join(lines), namespace, cls, "encode"
    )
    return encode


def compiled(source: str, namespace: dict[str, Any], cls: type, name: str) -> Any:
    filename = f"<agents compiled {name} {cls.__module__}.{cls.__qualname__}>"
    exec(compile(source, filename, "exec"), namespace)
    function = namespace[name]
    function.__qualname__ = f"{cls.__name__}.{name}"
    function.__doc__ = source
    return function


def _datetime(value: datetime) -> str:
    if value.tzinfo is None:
        raise ValueError(f"naive datetime {value!r}: records hold aware UTC times")
    return value.isoformat(timespec="microseconds")


_SCALARS: Final = frozenset({str, int, bool, type(None)})


def encode_any(value: Any, ctx: Encoding) -> Any:
    """Any value a record holds as plain JSON data (records by their compiled encoders)."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is float:
        if odd_float(value):
            ctx.odd = True
        return value
    if kind in RECORDS_BY_TYPE:
        return encoder_of(kind)(value, ctx)
    if kind is PVector_type or kind is list or kind is tuple:
        return [encode_any(item, ctx) for item in value]
    if isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return encode_any(float(value), ctx) if type(value) is not float else value
    if isinstance(value, datetime):
        return _datetime(value)
    if isinstance(value, enum.Enum):
        return encode_any(value.value, ctx)
    if isinstance(value, History | PVector | tuple | list):
        return [encode_any(item, ctx) for item in value]
    if isinstance(value, PMap | Mapping):
        return _redact(value, ctx) if value else {}
    raise TypeError(f"cannot encode {type(value).__name__}")


PVector_type: Final = type(to_pvector(()))


def _redact(value: Any, ctx: Encoding) -> Any:
    return redact(value, ctx)
