"""The shape every record shares: frozen attrs, keyword-only, a fast copy, the codec methods.

``record`` is ``attrs.frozen(kw_only=True)`` plus ``_evolve``, a generated slot-copying
constructor used by the ``with_*`` methods (``attrs.evolve`` re-runs every converter and
costs several microseconds; FACTS.md), and ``Record`` adds ``to_dict``/``to_json`` and
``from_dict``/``from_json`` through ``agents.codec``.
"""

from __future__ import annotations

from typing import Any, Self, TypeVar, dataclass_transform

import attrs

__all__ = ["Record", "record"]

C = TypeVar("C", bound=type)
_UNSET: Any = object()


class Record:
    """Base of every record: serialization through the codec (SPEC §9)."""

    __slots__ = ()

    def _evolve(self, **changes: Any) -> Self:  # replaced per class by ``record``
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        """The record as plain JSON-able data, tagged with ``kind`` and ``schema_version``."""
        from agents import codec

        return codec.to_dict(self)

    def to_json(self) -> str:
        """The record as compact JSON text; ``json.loads(to_json()) == to_dict()``."""
        from agents import codec

        return codec.to_json(self)

    @classmethod
    def from_dict(cls, data: Any) -> Self:
        """Rebuild a record from ``to_dict`` output; ``StateDecodeError`` names a bad field."""
        from agents import codec

        return codec.from_dict(data, cls)

    @classmethod
    def from_json(cls, text: str | bytes) -> Self:
        """Rebuild a record from ``to_json`` output."""
        from agents import codec

        return codec.from_json(text, cls)


def _make_evolve(cls: type) -> Any:
    names = [field.name for field in attrs.fields(cls)]
    params = ", ".join(f"{name}=_UNSET" for name in names)
    body = "\n".join(
        f"    _set(new, {name!r}, self.{name} if {name} is _UNSET else {name})" for name in names
    )
    source = (
        f"def _evolve(self, *, {params}):\n"
        f"    new = _new(_cls)\n{body}\n"
        "    return new\n"
    )
    namespace: dict[str, Any] = {
        "_UNSET": _UNSET,
        "_new": object.__new__,
        "_set": object.__setattr__,
        "_cls": cls,
    }
    exec(source, namespace)  # generated like attrs' own __init__, for the same reason: speed
    function = namespace["_evolve"]
    function.__doc__ = "Copy with the given fields replaced, skipping converters (internal)."
    return function


@dataclass_transform(frozen_default=True, kw_only_default=True, field_specifiers=(attrs.field,))
def record(cls: C) -> C:
    """Declare a frozen, keyword-only, slotted record class."""
    built = attrs.frozen(kw_only=True)(cls)
    built._evolve = _make_evolve(built)
    return built  # type: ignore[no-any-return]
