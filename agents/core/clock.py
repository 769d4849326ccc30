"""Time and identity as injected values: the ``Clock`` and ``IdFactory`` protocols.

Nothing in the records or the core reads the wall clock or a random source; the loop is
given a clock and an id factory (the defaults below, or the deterministic ones in
``agents.testing``).
"""

from __future__ import annotations

import functools
import os
import random
import weakref
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Final, Protocol, runtime_checkable

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

    # ``datetime.now(UTC)`` itself, without a Python frame around it (read four times a
    # step); a partial is no descriptor, so ``clock.now()`` calls it as it is.
    now: Final[Callable[[], datetime]] = functools.partial(datetime.now, UTC)

    def __repr__(self) -> str:
        return "SystemClock()"


class RandomIds:
    """uuid4-formatted ids from an OS-seeded generator, reseeded in a forked child.

    About half the cost of ``uuid.uuid4()``, which asks the OS for randomness every time.
    """

    __slots__ = ("__weakref__", "_bytes")

    def __init__(self) -> None:
        self._reseed()
        _LIVE.add(self)

    def _reseed(self) -> None:
        self._bytes = random.Random(os.urandom(32)).randbytes

    def new_id(self, kind: str) -> str:
        """A random uuid4 string (``kind`` is not part of it)."""
        text = self._bytes(16).hex()
        # version 4 (the 13th digit), RFC 4122's variant (two bits of the 17th: 8, 9, a, b)
        return (
            f"{text[:8]}-{text[8:12]}-4{text[13:16]}-{_VARIANT[text[16]]}{text[17:20]}-{text[20:]}"
        )

    def __repr__(self) -> str:
        return "RandomIds()"


_VARIANT: Final = {digit: "89ab"[int(digit, 16) & 3] for digit in "0123456789abcdef"}
_LIVE: weakref.WeakSet[RandomIds] = weakref.WeakSet()


def _reseed_all() -> None:
    for ids in list(_LIVE):
        ids._reseed()


os.register_at_fork(after_in_child=_reseed_all)
