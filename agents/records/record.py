"""What every record shares: the codec methods.

Records are ``@attrs.frozen(kw_only=True)`` classes deriving from ``Record``; defining one
registers it with the codec under its class name (its ``kind``). Their ``with_*`` methods
copy them with ``agents.records.compiled.replace_fields``, which skips converters.
"""

from __future__ import annotations

from typing import Any, Final, Self

import attrs

from agents.records import codec
from agents.records.compiled import maker, replace_fields, slot_setter, updater
from agents.records.frozen import EMPTY_MAP, EMPTY_VECTOR, deep_freeze
from agents.records.redaction import holds_secret_key, redacted

__all__ = ["Record", "maker", "slot_setter", "updater"]


class Record:
    """Base of every record: serialization through the codec (docs/design/determinism.md)."""

    __slots__ = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if attrs.has(cls):  # attrs's final class (with slots), not the one it was made from
            codec.register(cls)
            _guard_repr(cls)

    def to_dict(self) -> dict[str, Any]:
        """The record as plain JSON-able data, tagged with ``kind`` and ``schema_version``."""
        return codec.to_dict(self)

    def to_json(self) -> str:
        """The record as compact JSON text; ``json.loads(to_json()) == to_dict()``."""
        return codec.to_json(self)

    @classmethod
    def from_dict(cls, data: Any) -> Self:
        """Rebuild a record from ``to_dict`` output; ``StateDecodeError`` names a bad field."""
        return codec.from_dict(data, cls)

    @classmethod
    def from_json(cls, text: str | bytes) -> Self:
        """Rebuild a record from ``to_json`` output."""
        return codec.from_json(text, cls)


def _guard_repr(cls: type) -> None:
    """attrs's ``repr`` of ``cls``, showing each secret a map or list field holds (under
    a secret key, at any depth: docs/design/events.md) as ``"[redacted]"``; a ``repr`` the class
    writes itself is left as it is (it decides what it shows)."""
    generated = cls.__dict__.get("__repr__")
    code = getattr(generated, "__code__", None)
    if generated is None or code is None or not code.co_filename.startswith("<attrs generated"):
        return
    names = tuple(field.name for field in attrs.fields(cls) if field.repr)

    def guarded(self: Any) -> str:
        hidden = {}
        for name in names:
            value = getattr(self, name)
            if type(value) in _CONTAINERS and holds_secret_key(value):
                hidden[name] = deep_freeze(redacted(value))
        shown: str = generated(replace_fields(self, **hidden) if hidden else self)
        return shown

    guarded.__qualname__ = f"{cls.__qualname__}.__repr__"
    cls.__repr__ = guarded  # type: ignore[method-assign,assignment]  # replaced on purpose


_CONTAINERS: Final = frozenset({type(EMPTY_MAP), type(EMPTY_VECTOR)})  # PMap, PVector
