"""Time and identity as injected values: the ``Clock`` and ``IdFactory`` protocols.

Nothing in the records or the core reads the wall clock or a random source; the loop is
given a clock and an id factory (the defaults below, or the deterministic ones in
``agents.testing``).
"""

from __future__ import annotations

import os
import random
import weakref
from datetime import UTC, datetime
from typing import Protocol, runtime_checkable

__all__ = ["Clock", "IdFactory", "RandomIds", "SystemClock"]


@runtime_checkable
class Clock(Protocol):
    """Tells the time: an aware UTC ``datetime``."""

    def now(self) -> datetime: ...


@runtime_checkable
class IdFactory(Protocol):
    """Makes a new id for a thing of the given kind (``"agent"``, ``"step"``, …)."""

    def new_id(self, kind: str) -> str: ...


class SystemClock:
    """The wall clock, in UTC."""

    __slots__ = ()

    def now(self) -> datetime:
        """The current time."""
        return datetime.now(UTC)

    def __repr__(self) -> str:
        return "SystemClock()"


class RandomIds:
    """uuid4-formatted ids from an OS-seeded generator, reseeded in a forked child.

    About half the cost of ``uuid.uuid4()``, which asks the OS for randomness every time.
    """

    __slots__ = ("__weakref__", "_bits")

    def __init__(self) -> None:
        self._reseed()
        _LIVE.add(self)

    def _reseed(self) -> None:
        self._bits = random.Random(os.urandom(32)).getrandbits

    def new_id(self, kind: str) -> str:
        """A random uuid4 string (``kind`` is not part of it)."""
        value = (
            (self._bits(128) & ~(0xF000 << 64) & ~(0xC000 << 48)) | (0x4000 << 64) | (0x8000 << 48)
        )
        text = f"{value:032x}"
        return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"

    def __repr__(self) -> str:
        return "RandomIds()"


_LIVE: weakref.WeakSet[RandomIds] = weakref.WeakSet()


def _reseed_all() -> None:
    for ids in list(_LIVE):
        ids._reseed()


os.register_at_fork(after_in_child=_reseed_all)
