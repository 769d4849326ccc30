"""Structured output: the schema a final answer must follow, and checking an answer.

A response format is a JSON schema, or an attrs class, dataclass or ``TypedDict`` from which
one is derived. The loop sends it to the model, parses the final answer as JSON, validates
it, and keeps the value as ``state.final_output``; an invalid answer goes back to the model
with the validation error (docs/how-to/llm-providers.md).
"""

from __future__ import annotations

import dataclasses
import re
import typing
from collections.abc import Mapping
from typing import Any, Final

import attrs

from agents.errors import ConfigurationError, StateDecodeError
from agents.records.codec import loads
from agents.records.frozen import NestingError, deep_freeze, deep_thaw
from agents.records.schema import Validator, compile_validator, schema_for_type

__all__ = ["build_output", "check_output", "output_schema", "output_validator"]

_FENCE: Final = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.S)


def output_schema(spec: Any) -> dict[str, Any] | None:
    """The JSON schema for ``spec``: a schema dict as it is (``ConfigurationError`` if it is
    not one: answers could not be checked against it), or one derived from a class."""
    if spec is None:
        return None
    if isinstance(spec, Mapping):
        schema: dict[str, Any] = deep_thaw(spec)
        compile_validator(schema, root="answer")  # a schema that is none: said now
        return schema
    if not isinstance(spec, type):
        raise ConfigurationError(
            f"response_format must be a JSON schema or a class, got {type(spec).__name__}"
        )
    fields = _fields(spec)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, annotation, has_default in fields:
        properties[name] = schema_for_type(annotation, f"{spec.__name__}.{name}")
        if not has_default:
            required.append(name)
    schema = {
        "title": spec.__name__,
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        schema["required"] = required
    return schema


def _fields(spec: type) -> list[tuple[str, Any, bool]]:
    hints = typing.get_type_hints(spec)
    if attrs.has(spec):
        return [
            (field.name, hints[field.name], field.default is not attrs.NOTHING)
            for field in attrs.fields(spec)
        ]
    if dataclasses.is_dataclass(spec):
        return [
            (
                field.name,
                hints[field.name],
                field.default is not dataclasses.MISSING
                or field.default_factory is not dataclasses.MISSING,
            )
            for field in dataclasses.fields(spec)
        ]
    if typing.is_typeddict(spec):
        required = getattr(spec, "__required_keys__", frozenset(hints))
        return [(name, hint, name not in required) for name, hint in hints.items()]
    raise ConfigurationError(
        f"response_format class {spec.__name__} is not an attrs class, dataclass or TypedDict"
    )


def output_validator(schema: Mapping[str, Any]) -> Validator:
    """A validator for answers following ``schema``."""
    return compile_validator(schema, root="answer")


def check_output(content: str, validator: Validator) -> tuple[Any, str | None]:
    """The answer parsed and validated: ``(value, None)``, or ``(None, what was wrong)``."""
    fenced = _FENCE.match(content)
    text = fenced.group(1) if fenced else content
    try:
        value = deep_freeze(loads(text))
    except StateDecodeError as exc:
        detail = exc.reason.removeprefix("not valid JSON: ")
        return None, f"the answer is not valid JSON ({detail})"
    except NestingError as exc:
        return None, f"the answer is not usable JSON ({exc})"
    converted, error = validator(value, "")
    if error is not None:
        return None, f"the answer does not match the schema: {error}"
    return converted, None


def build_output(cls: type, value: Any) -> Any:
    """``value`` (a validated answer) as an instance of the class it was derived from."""
    plain = deep_thaw(value)
    if attrs.has(cls) or dataclasses.is_dataclass(cls):
        return cls(**plain)
    return plain
