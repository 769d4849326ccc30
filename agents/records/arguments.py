"""What a caller's arguments must be, said where they are given: a list of names is no
lone text (``names``), a text is a ``str`` (``text``), a number is an int or a float
(``number``), a number of seconds or dollars is a finite number in range (``amount``), a
switch is ``True`` or ``False`` (``switch``), a path is a ``str`` or an ``os.PathLike``
(``path``), a list is no lone item (``listed``), and a function given, if any, is one
(``function``). Each check raises the typed error that
names the argument."""

from __future__ import annotations

import sys
from collections.abc import Iterable, Mapping
from typing import Any, Final

from agents.errors import AgentError, ConfigurationError, InvalidType

__all__ = ["amount", "function", "listed", "names", "number", "path", "switch", "text"]


def names(value: Any, what: str) -> tuple[str, ...]:
    """A list of names (tools', hosts', finish reasons') as a tuple; ``InvalidType`` for a
    lone text, whose letters would be the names (``deny_tools="shell"`` denied no tool),
    or an item that is no text. ``what``: the parameter, for the error."""
    if isinstance(value, str):
        raise InvalidType(
            f"{what} is a list of names, not the text {value!r:.60} (write [{value!r:.60}])"
        )
    if isinstance(value, bytes) or not isinstance(value, Iterable):
        raise InvalidType(f"{what} is a list of names, not {type(value).__name__}")
    found = tuple(value)
    wrong = next((item for item in found if not isinstance(item, str)), None)
    if wrong is not None:
        raise InvalidType(f"{what} is a list of names, not holding {type(wrong).__name__}")
    return found


def listed(value: Any, what: str) -> tuple[Any, ...]:
    """A list of things (messages, tools, hooks, cases, scorers) as a tuple; ``InvalidType``
    naming ``what`` for one thing alone where the list goes: a text, whose letters would be
    the items (``messages="hello"`` made five messages), a map, whose keys would, or
    anything that is no list at all (a lone tool or function)."""
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Iterable):
        shown = f"the text {value!r:.60}" if isinstance(value, str) else type(value).__name__
        raise InvalidType(f"{what} is a list, not {shown} (a lone one goes in a list: [...])")
    return tuple(value)


def function(value: Any, what: str, of: str, *, error: type[AgentError] = InvalidType) -> Any:
    """``value``, a function (of ``of``), or ``None``; else ``error`` naming ``what``: a
    setting taken now would fail only when first called (a retry's sleep, say)."""
    if value is not None and not callable(value):
        raise error(f"{what} is a function of {of}, not {type(value).__name__}")
    return value


def text(value: Any, what: str) -> str:
    """A text; ``InvalidType`` naming ``what`` for anything else."""
    if not isinstance(value, str):
        raise InvalidType(f"{what} is text, not {type(value).__name__}")
    return value


def number(value: Any, what: str) -> int | float:
    """An int or a float; ``InvalidType`` naming ``what`` for anything else — a text
    (``"0.9"``), and a bool, which Python would count as 1 or 0."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidType(f"{what} is a number, not {value!r:.40}")
    return value


def switch(value: Any, what: str) -> bool:
    """A switch, ``True`` or ``False``; ``InvalidType`` naming ``what`` for anything else:
    a text read from a configuration, ``"false"``, is true to Python and would turn the
    switch on."""
    if type(value) is not bool:
        raise InvalidType(f"{what} is True or False, not {value!r:.40}")
    return value


def path(value: Any, what: str) -> Any:
    """A file's or folder's path: a ``str`` or an ``os.PathLike`` naming one by text (a
    ``pathlib.Path``); ``InvalidType`` naming ``what`` for anything else — a number or
    ``None``, which Python's file functions would refuse with a bare ``TypeError``, and
    bytes, which some would take and others not."""
    if isinstance(value, str):
        return value
    fspath = getattr(type(value), "__fspath__", None)  # what ``os.PathLike`` stands for
    if fspath is not None and isinstance(fspath(value), str):
        return value
    raise InvalidType(f"{what} is a str or an os.PathLike, not {type(value).__name__}")


_LARGEST: Final = sys.float_info.max  # an int past it is no float; infinity is past it


def amount(
    value: Any, what: str, *, zero: bool = False, error: type[AgentError] = ConfigurationError
) -> float:
    """A setting's number of seconds or dollars as a float: an int or a float (a bool is
    neither), finite, above 0 (or 0 itself, with ``zero``); else ``error`` naming ``what``.
    NaN, past which nothing ever is, and infinity are no limit, timeout or interval: a
    setting that means none is ``None`` where the setting takes it."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if number and (value >= 0 if zero else value > 0) and value <= _LARGEST:
        return float(value)
    least = ">= 0" if zero else "> 0"
    try:
        shown = repr(value)
    except ValueError:  # an int of more digits than Python writes
        shown = f"an int of {value.bit_length()} bits"
    raise error(f"{what} must be a finite number {least}, got {shown:.60}")
