"""JSON schemas from Python signatures, and the validator for the schemas built here.

The schemas cover what a model can send as JSON: strings, numbers, booleans, null, lists,
string-keyed maps, literals and enums, and unions of them. A parameter type outside that set
is a ``ConfigurationError`` when the tool is defined, not a surprise at call time.
"""

from __future__ import annotations

import enum
import inspect
import re
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Literal, Union

from pyrsistent import pmap

from agents.errors import ConfigurationError
from agents.records.frozen import MAX_DEPTH, deep_thaw

__all__ = ["Validator", "compile_validator", "describe_docstring", "schema_for_type"]

Validator = Callable[[Any, str], tuple[Any, str | None]]
"""``(value, path) -> (converted value, error or None)``."""

_SCALARS: Final[dict[Any, dict[str, Any]]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
    None: {"type": "null"},
}


def schema_for_type(annotation: Any, where: str) -> dict[str, Any]:
    """The JSON schema of ``annotation``; ``where`` names the parameter in errors."""
    if annotation in _SCALARS:
        return dict(_SCALARS[annotation])
    if annotation is Any:
        return {}
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        values = [member.value for member in annotation]
        if not all(isinstance(value, str | int | float | bool) for value in values):
            raise ConfigurationError(f"{where}: enum {annotation.__name__} has non-JSON values")
        return {"enum": values}
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        schema = schema_for_type(args[0], where)
        text = next((arg for arg in args[1:] if isinstance(arg, str)), None)
        if text:
            schema["description"] = text
        return schema
    if origin is Literal:
        if not all(isinstance(value, str | int | float | bool) for value in args):
            raise ConfigurationError(f"{where}: Literal values must be JSON scalars")
        return {"enum": list(args)}
    if origin in (Union, types.UnionType):
        options = [schema_for_type(arg, where) for arg in args]
        return {"anyOf": options}
    if origin in (list, Sequence, tuple, typing.Sequence) or annotation in (list, tuple):
        if origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
            return {
                "type": "array",
                "prefixItems": [schema_for_type(arg, where) for arg in args],
                "minItems": len(args),
                "maxItems": len(args),
            }
        item = args[0] if args else Any
        return {"type": "array", "items": schema_for_type(item, where)}
    if origin in (dict, Mapping, typing.Mapping) or annotation is dict:
        if args and args[0] is not str:
            raise ConfigurationError(f"{where}: JSON objects need str keys, got {args[0]!r}")
        value = args[1] if args else Any
        return {"type": "object", "additionalProperties": schema_for_type(value, where)}
    raise ConfigurationError(
        f"{where}: type {annotation!r} cannot be expressed in JSON schema "
        "(use str, int, float, bool, None, list, dict[str, ...], Literal, an Enum or a union)"
    )


# -- validation -----------------------------------------------------------------------------

_PMAP: Final[type] = type(pmap())
_SIMPLE_KEYS: Final = frozenset({"type", "description", "default"})
_MISSING: Final = object()
_JSON_TYPES: Final[dict[str, Callable[[Any], bool]]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "array": lambda v: isinstance(v, Sequence) and not isinstance(v, str | bytes),
    "object": lambda v: isinstance(v, Mapping),
}
_EXACT: Final[dict[str, frozenset[type]]] = {
    "string": frozenset({str}),
    "integer": frozenset({int}),
    "number": frozenset({int, float}),
    "boolean": frozenset({bool}),
    "null": frozenset({type(None)}),
}


def _json_type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, Sequence):
        return "array"
    return type(value).__name__


def compile_validator(schema: Mapping[str, Any], root: str = "arguments") -> Validator:
    """A function checking a value against ``schema`` (the subset built by this module, and
    ``"type"`` given as a list of types).

    The value may hold pyrsistent collections; the converted value it returns is plain
    Python (dicts and lists), ready to pass to a tool. Keywords beyond the subset are not
    checked. A schema that is not one — a part that is not an object, an unknown
    ``"type"``, ``"properties"``, ``"required"``, ``"enum"`` or ``"anyOf"`` of the wrong
    shape, nesting past ``MAX_DEPTH`` — is a ``ConfigurationError`` naming the place.
    """
    return _compiled(schema, root, "$", 0)


def _compiled(schema: Any, root: str, where: str, depth: int) -> Validator:
    if depth > MAX_DEPTH:
        raise _malformed(where, f"nested deeper than {MAX_DEPTH}")
    if schema is True or schema is False:  # JSON Schema's "anything" and "nothing"
        return _anything if schema else _nothing
    if not isinstance(schema, Mapping):
        raise _malformed(where, f"a schema is an object, not {_json_type_name(schema)}")
    if "anyOf" in schema:
        choices = _listed(schema, "anyOf", where)
        options = [
            _compiled(option, "arguments", f"{where}.anyOf[{index}]", depth + 1)
            for index, option in enumerate(choices)
        ]
        return _any_of(options)
    if "enum" in schema:
        return _enum_validator(_listed(schema, "enum", where))
    kind = schema.get("type")
    if kind is None:
        return _anything
    if not isinstance(kind, str):
        kinds = _listed(schema, "type", where)
        if not kinds:
            raise _malformed(f"{where}.type", "an empty list of types")
        return _any_of(
            [_compiled({**schema, "type": one}, root, where, depth + 1) for one in kinds]
        )
    check = _JSON_TYPES.get(kind)
    if check is None:
        raise _malformed(f"{where}.type", f"unknown type {kind!r}")
    if kind == "array":
        return _array_validator(schema, check, where, depth)
    if kind == "object":
        return _object_validator(schema, check, root, where, depth)
    return _scalar_validator(kind, check)


def _enum_validator(options: Sequence[Any]) -> Validator:
    allowed = list(options)

    def one_of(value: Any, path: str) -> tuple[Any, str | None]:
        if any(value == option and type(value) is type(option) for option in allowed):
            return value, None
        return value, f"{path}: {value!r} is not one of {allowed!r}"

    return one_of


def _scalar_validator(kind: str, check: Callable[[Any], bool]) -> Validator:
    exact = _EXACT.get(kind, frozenset())
    if kind == "integer":

        def integer(value: Any, path: str) -> tuple[Any, str | None]:
            if type(value) is int:
                return value, None
            if not check(value):
                return value, f"{path}: expected integer, got {_json_type_name(value)}"
            return int(value), None

        return integer
    if kind == "number":

        def number(value: Any, path: str) -> tuple[Any, str | None]:
            if type(value) in exact:
                return value, None
            if not check(value):
                return value, f"{path}: expected number, got {_json_type_name(value)}"
            return value, None

        return number

    def scalar(value: Any, path: str) -> tuple[Any, str | None]:
        if type(value) in exact or check(value):
            return value, None
        return value, f"{path}: expected {kind}, got {_json_type_name(value)}"

    return scalar


def _malformed(where: str, what: str) -> ConfigurationError:
    return ConfigurationError(f"not a usable JSON schema: {what} at {where}")


def _listed(schema: Mapping[str, Any], key: str, where: str) -> Sequence[Any]:
    """``schema[key]``, which must be a JSON array."""
    value = schema[key]
    if not isinstance(value, Sequence) or isinstance(value, str | bytes):
        raise _malformed(f"{where}.{key}", f"expected an array, got {_json_type_name(value)}")
    return value


def _anything(value: Any, path: str) -> tuple[Any, str | None]:
    return deep_thaw(value), None


def _nothing(value: Any, path: str) -> tuple[Any, str | None]:
    return value, f"{path}: no value is allowed here"


def _any_of(options: list[Validator]) -> Validator:
    def any_of(value: Any, path: str) -> tuple[Any, str | None]:
        for option in options:
            converted, error = option(value, path)
            if error is None:
                return converted, None
        return value, f"{path}: {_json_type_name(value)} {value!r} matches no allowed type"

    return any_of


def _array_validator(
    schema: Mapping[str, Any], check: Callable[[Any], bool], where: str, depth: int
) -> Validator:
    prefix = (
        [
            _compiled(item, "arguments", f"{where}.prefixItems[{index}]", depth + 1)
            for index, item in enumerate(_listed(schema, "prefixItems", where))
        ]
        if "prefixItems" in schema
        else []
    )
    items = (
        _compiled(schema["items"], "arguments", f"{where}.items", depth + 1)
        if "items" in schema
        else None
    )

    def array(value: Any, path: str) -> tuple[Any, str | None]:
        if not check(value):
            return value, f"{path}: expected array, got {_json_type_name(value)}"
        if prefix and len(value) != len(prefix):
            return value, f"{path}: expected {len(prefix)} items, got {len(value)}"
        converted = []
        for index, item in enumerate(value):
            validator = prefix[index] if prefix else items
            if validator is None:
                converted.append(item)
                continue
            new, error = validator(item, f"{path}[{index}]")
            if error is not None:
                return value, error
            converted.append(new)
        return converted, None

    return array


def _object_parts(
    schema: Mapping[str, Any], where: str, depth: int
) -> tuple[list[tuple[str, frozenset[type], Validator]], frozenset[str], Any, Validator | None]:
    """An object schema's properties (name, the scalar types taken as they are, validator),
    its required names, ``additionalProperties`` and that schema's validator."""
    declared = schema.get("properties", {})
    if not isinstance(declared, Mapping):
        raise _malformed(
            f"{where}.properties", f"expected an object, got {_json_type_name(declared)}"
        )
    properties = [
        (
            name,
            _EXACT.get(sub["type"], frozenset())
            if isinstance(sub, Mapping)
            and set(sub) <= _SIMPLE_KEYS
            and isinstance(sub.get("type"), str)
            else frozenset(),
            _compiled(sub, "arguments", f"{where}.properties.{name}", depth + 1),
        )
        for name, sub in declared.items()
    ]
    needed = _listed(schema, "required", where) if "required" in schema else ()
    if not all(isinstance(name, str) for name in needed):
        raise _malformed(f"{where}.required", "expected an array of names")
    extra = schema.get("additionalProperties", True)
    if not isinstance(extra, bool | Mapping):
        raise _malformed(
            f"{where}.additionalProperties",
            f"expected a boolean or a schema, got {_json_type_name(extra)}",
        )
    extra_validator = (
        _compiled(extra, "arguments", f"{where}.additionalProperties", depth + 1)
        if isinstance(extra, Mapping)
        else None
    )
    return properties, frozenset(needed), extra, extra_validator


def _object_validator(
    schema: Mapping[str, Any],
    check: Callable[[Any], bool],
    root: str,
    where: str,
    depth: int,
) -> Validator:
    noun = "argument" if root == "arguments" else "field"
    properties, required, extra, extra_validator = _object_parts(schema, where, depth)
    known = {name for name, _, _ in properties}

    def obj(value: Any, path: str) -> tuple[Any, str | None]:
        if type(value) is not dict and type(value) is not _PMAP and not check(value):
            return value, f"{path}: expected object, got {_json_type_name(value)}"
        converted: dict[str, Any] = {}
        missing: list[str] | None = None
        get = value.get
        for name, exact, validator in properties:
            item = get(name, _MISSING)
            if type(item) in exact:  # a plain scalar of the declared type: nothing to convert
                converted[name] = item
                continue
            if item is _MISSING:
                if name in required:
                    missing = [*(missing or ()), name]
                continue
            new, error = validator(item, f"{path}.{name}" if path else name)
            if error is not None:
                return value, error
            converted[name] = new
        if missing:
            names = ", ".join(repr(name) for name in missing)
            plural = "s" if len(missing) > 1 else ""
            return value, f"{path or root}: missing required {noun}{plural} {names}"
        if len(converted) == len(value):
            return converted, None
        for key, item in value.items():
            if key in known:
                continue
            if extra is False:
                return value, f"{path or root}: unexpected {noun} {key!r}"
            if extra_validator is None:
                converted[key] = deep_thaw(item)
                continue
            new, error = extra_validator(item, f"{path}.{key}" if path else key)
            if error is not None:
                return value, error
            converted[key] = new
        return converted, None

    return obj


# -- docstrings -----------------------------------------------------------------------------

_SPHINX_PARAM: Final = re.compile(r"^\s*:param\s+(?:[^:]*\s)?(\w+)\s*:\s*(.*)$")
_GOOGLE_SECTION: Final = re.compile(r"^\s*(Args|Arguments|Parameters|Params)\s*:\s*$")
_GOOGLE_PARAM: Final = re.compile(r"^\s*(\*{0,2}\w+)\s*(?:\([^)]*\))?\s*:\s*(.*)$")
_OTHER_SECTION: Final = re.compile(r"^\s*[A-Z][A-Za-z ]*:\s*$")


def describe_docstring(function: Callable[..., Any]) -> tuple[str, dict[str, str]]:
    """The summary of ``function``'s docstring and its per-parameter descriptions.

    Reads Google style (``Args:`` sections) and Sphinx style (``:param x:``).
    """
    doc = inspect.getdoc(function) or ""
    summary_lines: list[str] = []
    params: dict[str, str] = {}
    in_args = False
    current: str | None = None
    in_summary = True
    for line in doc.splitlines():
        sphinx = _SPHINX_PARAM.match(line)
        if sphinx:
            current = sphinx.group(1)
            params[current] = sphinx.group(2).strip()
            in_summary = False
            continue
        if _GOOGLE_SECTION.match(line):
            in_args, in_summary, current = True, False, None
            continue
        if in_args:
            if _OTHER_SECTION.match(line) and not line.startswith((" ", "\t")):
                in_args, current = False, None
                continue
            google = _GOOGLE_PARAM.match(line)
            indent = len(line) - len(line.lstrip())
            if google and (current is None or indent <= _indent_of(doc, current)):
                current = google.group(1).lstrip("*")
                params[current] = google.group(2).strip()
            elif current and line.strip():
                params[current] = f"{params[current]} {line.strip()}".strip()
            continue
        if current and line.strip() and not line.lstrip().startswith(":"):
            params[current] = f"{params[current]} {line.strip()}".strip()
            continue
        if in_summary:
            if not line.strip() and summary_lines:
                in_summary = False
                continue
            if line.strip():
                summary_lines.append(line.strip())
    return " ".join(summary_lines), params


def _indent_of(doc: str, name: str) -> int:
    for line in doc.splitlines():
        stripped = line.lstrip()
        if stripped.startswith((f"{name}:", f"{name} (", f"{name}(")):
            return len(line) - len(stripped)
    return 0
