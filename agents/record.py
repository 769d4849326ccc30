"""What every record shares: the codec methods and a fast internal copy.

Records are ``@attrs.frozen(kw_only=True)`` classes deriving from ``Record``. ``_evolve`` is a
slot-copying constructor generated once per class on first use; the ``with_*`` methods use
it because ``attrs.evolve`` re-runs every converter and costs several microseconds per call
(FACTS.md). It skips converters, so it only receives values that are already converted.
"""

from __future__ import annotations

from typing import Any, Self

import attrs

__all__ = ["Record"]

_UNSET: Any = object()


class Record:
    """Base of every record: serialization through the codec (SPEC §9) and ``_evolve``."""

    __slots__ = ()

    def _evolve(self, **changes: Any) -> Self:
        """Copy with the given fields replaced, skipping converters (internal)."""
        cls = type(self)
        evolve = _make_evolve(cls)
        cls._evolve = evolve  # type: ignore[method-assign]
        return evolve(self, **changes)  # type: ignore[no-any-return]

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
        f"    _set_{name}(new, self.{name} if {name} is _UNSET else {name})" for name in names
    )
    source = f"def _evolve(self, *, {params}):\n    new = _new(_cls)\n{body}\n    return new\n"
    namespace: dict[str, Any] = {"_UNSET": _UNSET, "_new": object.__new__, "_cls": cls}
    for name in names:
        # The slot descriptors' own setters: they bypass the frozen __setattr__, and are
        # faster than object.__setattr__ because no attribute lookup by name is needed.
        namespace[f"_set_{name}"] = getattr(cls, name).__set__
    exec(source, namespace)  # generated like attrs' own __init__, for the same reason: speed
    return namespace["_evolve"]
