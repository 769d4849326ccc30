"""What the codec knows of records: the registry of record classes (filled as they are
defined), the per-field choices records declare in attrs field metadata, how each class is
written and read (its field plan), and what step inputs may refer to (``Refs``)."""

from __future__ import annotations

import enum
import functools
import itertools
import types
import typing
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, Final, NamedTuple, TypeVar, Union, cast

import attrs
from pyrsistent import PMap, PVector

from agents.errors import InvalidType
from agents.records.frozen import (
    History,
    deep_freeze,
    to_float,
    to_history,
    to_optional_pvector,
    to_pmap,
    to_pvector,
)

__all__ = [
    "IDEMPOTENT",
    "KINDED",
    "MESSAGES_REF",
    "OPTIONAL",
    "PLAIN",
    "RECORD",
    "RECORDS",
    "RECORDS_BY_TYPE",
    "REFERENCES",
    "SCHEMA_VERSION",
    "SHARED",
    "Field",
    "Refs",
    "compact_class",
    "data_fields",
    "element_of",
    "field_plan",
    "hints",
    "idempotent",
    "is_pvector",
    "is_record",
    "optional_of",
    "parts_of_content",
    "plain_init",
    "register",
    "scope",
    "settable_fields",
    "value_kind",
]

SCHEMA_VERSION: Final = 1
R = TypeVar("R")

# Per-field choices, as attrs field metadata (``attrs.field(metadata={OPTIONAL: True})``):
OPTIONAL: Final = "agents.codec.optional"
"""A field added after schema version 1 was published: written only when it is not its
default, read as its default when absent, so documents without it read as before and
documents that do not use it stay byte for byte what they were."""
REFERENCES: Final = "agents.codec.references"
"""The field (an ``AgentContext``) whose head and conversation the steps inside the record
refer to (an ``AgentState``'s ``context``); such a record is a document of its own, and
documents nest at most ``MAX_STATES`` deep."""
MESSAGES_REF: Final = "agents.codec.messages_ref"
"""A field of messages written as ``{"kind": "MessagesRef", "prefix": k}`` when it is the
head and first ``k`` messages of the enclosing document's context (a step's input)."""
RECORD: Final = "agents.codec.record"
"""The name of the record class a field holds, where its annotation cannot say it (a
sub-agent's ``AgentState`` inside a ``ToolExecution``)."""

SHARED: Final = frozenset({"Message", "ToolCall"})
"""Records a state repeats by design — a step's output messages are the conversation's, a
tool call sits in its response, its message and its execution — and which refer to nothing
outside themselves: encoded once per state (by identity) and decoded once per document (by
their exact JSON), then shared."""

KINDED: Final = frozenset({"Blob"})
"""Records whose ``kind`` is written even where the field says their class (the audit
log's compact form, ``compact_class``): a blob reference is found by it."""

RECORDS: Final[dict[str, type[Any]]] = {}
"""Record classes by name (their ``kind``), filled as record classes are defined."""
RECORDS_BY_TYPE: Final[set[type]] = set()


def register(cls: type[R]) -> type[R]:
    """Make a record class known to the codec by its name (``kind``); returns the class.

    ``Record`` subclasses register themselves when they are defined (attrs's slotted class
    replaces the class it was made from, under the same name). A class whose name another
    module's record holds already is encoded, but not found by ``kind`` alone."""
    record: type[Any] = cls
    if not (isinstance(record, type) and attrs.has(record)):
        raise InvalidType(f"register() takes an attrs record class, got {cls!r}")
    RECORDS_BY_TYPE.add(record)
    held = RECORDS.get(record.__name__)
    if held is None or (held.__module__, held.__qualname__) == (
        record.__module__,
        record.__qualname__,
    ):
        RECORDS[record.__name__] = record
    return cls


def is_record(value: Any) -> bool:
    """Whether ``value`` is an instance of a registered record class."""
    return type(value) in RECORDS_BY_TYPE


class Field(NamedTuple):
    """How the codec writes and reads one field."""

    name: str
    plain: bool  # a JSON scalar, written as it is
    optional: bool  # written only when set (OPTIONAL)
    messages_ref: bool  # written as a MessagesRef when it is one (MESSAGES_REF)


FIELDS: dict[type, tuple[Field, ...]] = {}
SCOPES: dict[type, str | None] = {}  # the REFERENCES field of each class, if any


def hints(cls: type) -> dict[str, Any]:
    # Annotations name records by their class names; a record's module may not import
    # every record it names (a step's sub-agent state): the registry resolves them.
    return typing.get_type_hints(cls, localns=RECORDS)


PLAIN: Final = frozenset({str, int, float, bool, str | None, int | None, float | None})


def data_fields(cls: type) -> list[Any]:
    """The fields written and read: those that take part in equality (a field left out
    of ``==``, such as where a definition was read from, would make equal records encode
    differently)."""
    return [field for field in attrs.fields(cls) if field.eq]


def field_plan(cls: type) -> tuple[Field, ...]:
    """Each field's name and how it is written."""
    plan = FIELDS.get(cls)
    if plan is None:
        annotations = hints(cls)
        plan = FIELDS[cls] = tuple(
            Field(
                field.name,
                annotations.get(field.name) in PLAIN and not field.metadata.get(OPTIONAL, False),
                bool(field.metadata.get(OPTIONAL, False)),
                bool(field.metadata.get(MESSAGES_REF, False)),
            )
            for field in data_fields(cls)
        )
        scopes = [field.name for field in attrs.fields(cls) if field.metadata.get(REFERENCES)]
        SCOPES[cls] = scopes[0] if scopes else None
    return plan


def scope(cls: type) -> str | None:
    """The field whose conversation steps inside a ``cls`` refer to (``REFERENCES``)."""
    if cls not in SCOPES:
        field_plan(cls)
    return SCOPES[cls]


class Refs:
    """What step input messages may refer to: the head and conversation of their state."""

    __slots__ = ("calls", "encoded", "head", "messages", "response")

    def __init__(self, context: Any, head: tuple[Any, ...] | None = None) -> None:
        # an AgentContext, and its head() when the caller has it already
        self.head: tuple[Any, ...] = context.head() if head is None else head
        self.messages: History[Any] = context.store.messages
        # SHARED records, each encoded once per state, by identity (the state keeps it alive)
        self.encoded: dict[int, dict[str, Any]] = {}
        # While the audit log writes a step (compact, docs/design/auditing.md): its output
        # message that is its response as it came, and the response's calls by id, which
        # the step's compact encoders write as references to the response.
        self.response: Any = None
        self.calls: dict[Any, Any] | None = None

    def prefix_of(self, messages: History[Any]) -> int | None:
        """``k`` when ``messages`` equal the head followed by the first ``k`` conversation
        messages, judged by value: equal states must encode alike however their histories
        happen to be split into head and body (docs/design/determinism.md)."""
        head = messages.head
        if head is self.head or head == self.head:  # split as the context splits it
            found = messages.body_is_prefix_of(self.messages)
            return len(messages) - len(head) if found else None
        # built another way (decoded whole, by hand): compare the values
        size = len(self.head)
        if len(messages) < size:
            return None
        items = iter(messages)
        if tuple(itertools.islice(items, size)) != self.head:
            return None
        body = History(items)
        return len(body) if body.is_prefix_of(self.messages) else None


# -- annotations ------------------------------------------------------------------------------


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


def compact_class(annotation: Any) -> Any:
    """The record class a field of ``annotation`` holds, when the audit log's compact form
    (format 3, docs/design/auditing.md) writes it without its ``kind``: one class, or a
    sequence of one, neither a state (a document of its own) nor ``KINDED``; else ``None``."""
    held = optional_of(annotation) or annotation
    held = element_of(held) or held
    if held in RECORDS_BY_TYPE and scope(held) is None and held.__name__ not in KINDED:
        return held
    return None


def optional_of(annotation: Any) -> Any:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (Union, types.UnionType) and len(args) == 2 and type(None) in args:
        return next(arg for arg in args if arg is not type(None))
    return None


def value_kind(annotation: Any) -> str:
    """How the codec writes a value a field of ``annotation`` holds (an optional one's
    inner annotation: ``optional_of``): ``"plain"`` (text, integers and booleans as they
    are), ``"datetime"``, ``"enum"`` (its value), ``"record"`` (by the class it holds),
    ``"records"`` (a sequence of them), ``"content"`` (text, or a sequence of records of
    several classes: ``parts_of_content``), ``"map"`` (a plain map, secrets redacted) or
    ``"any"`` (by what it holds). The encoders' code and the matchers' follow it."""
    if annotation is str or annotation is int or annotation is bool:
        return "plain"
    if annotation is datetime:
        return "datetime"
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return "enum"
    if annotation in RECORDS_BY_TYPE:
        return "record"
    if element_of(annotation) in RECORDS_BY_TYPE:
        return "records"
    if parts_of_content(annotation) is not None:
        return "content"
    origin = typing.get_origin(annotation)
    if origin in (Mapping, dict, PMap) or getattr(origin, "__name__", "") == "PMap":
        return "map"
    return "any"


def parts_of_content(annotation: Any) -> tuple[type, ...] | None:
    """The record classes of a ``str | PVector[A | B | ...]`` annotation (a message's
    content: its text, or its parts, each written with its ``kind``); else ``None``."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin not in (Union, types.UnionType) or len(args) != 2 or args[0] is not str:
        return None
    element = element_of(args[1])
    classes = typing.get_args(element) if element is not None else ()
    if not classes or not all(cls in RECORDS_BY_TYPE for cls in classes):
        return None
    return classes


# -- what decoders may set without ``__init__`` -------------------------------------------------

IDEMPOTENT: Final[set[Callable[[Any], Any]]] = {
    to_pmap,
    to_pvector,
    to_optional_pvector,
    to_history,
    deep_freeze,
    to_float,
}
"""Converters that give back what the field decoders give them (already converted);
a records module adds its own with ``idempotent``."""


def idempotent(converter: Callable[[Any], Any]) -> None:
    """Declare ``converter`` one of ``IDEMPOTENT``."""
    IDEMPOTENT.add(converter)


def plain_init(cls: type) -> tuple[dict[str, Any], list[Any]] | None:
    """Each field's default (converted) and the fields with validators, when
    ``cls.__init__`` does nothing to decoded values but set them and validate them — no
    ``__attrs_post_init__``, no factories, converters that leave them as they are — so a
    decoder may build the record without it; else ``None``."""
    if hasattr(cls, "__attrs_post_init__"):
        return None
    defaults: dict[str, Any] = {}
    validated = []
    for field in attrs.fields(cls):
        if isinstance(field.default, cast(type, attrs.Factory)):
            return None
        if field.converter is not None and field.converter not in IDEMPOTENT:
            return None
        default = field.default
        if default is not attrs.NOTHING and field.converter is not None:
            default = field.converter(default)
        defaults[field.name] = default
        if field.validator is not None:
            validated.append(field)
    return defaults, validated


@functools.cache
def settable_fields(cls: type) -> dict[str, Any]:
    """The fields of ``cls`` that ``__init__`` would only check (no post-init, a converter
    that gives back what the field decoder gives), each with itself when it has a validator
    (else ``None``): a copy may set them without ``__init__`` (``make_evolve``), then run the
    validator."""
    if hasattr(cls, "__attrs_post_init__"):
        return {}
    return {
        field.name: field if field.validator is not None else None
        for field in attrs.fields(cls)
        if field.converter is None or field.converter in IDEMPOTENT
    }
