"""Persistent collections used inside records: converters and the flat ``History``.

Records hold ``PVector``/``PMap`` from pyrsistent for small per-step data. Collections that
grow every step (messages, step executions) are held in ``History`` instead: pyrsistent's C
vector is walked element by element by the garbage collector each time a young one is
collected, which turns a long run into O(n) work per step (docs/design/records.md). ``History``
keeps full chunks of 32 items in tuples that are shared between versions, so appending copies at
most a chunk and the collector sees one small tuple per 32 items.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, Final, TypeVar, cast, overload

from pyrsistent import PMap, PVector, pmap, pvector, thaw
from pyrsistent.typing import PMap as PMapT
from pyrsistent.typing import PVector as PVectorT

from agents.errors import InvalidArgument

__all__ = [
    "EMPTY_MAP",
    "EMPTY_VECTOR",
    "MAX_DEPTH",
    "History",
    "NestingError",
    "deep_freeze",
    "deep_thaw",
    "map_items",
    "same_value",
    "shallow_dict",
    "to_float",
    "to_history",
    "to_optional_pvector",
    "to_pmap",
    "to_pvector",
]

T = TypeVar("T")

EMPTY_VECTOR: Final[PVector[Any]] = pvector()
EMPTY_MAP: Final[PMap[Any, Any]] = pmap()
_PVECTOR_TYPE: Final = type(EMPTY_VECTOR)
_PMAP_TYPE: Final = type(EMPTY_MAP)
_CHUNK: Final = 32
CHUNK: Final = _CHUNK  # items in a full chunk of a History
_SCALARS: Final = frozenset({str, int, float, bool, type(None)})
_new = object.__new__


def to_pvector(value: Iterable[Any]) -> PVectorT[Any]:
    """Return ``value`` as a ``PVector``, unchanged (same object) when it already is one."""
    if type(value) is _PVECTOR_TYPE:
        return value
    if not value:  # an empty tuple or list; other iterables are truthy
        return EMPTY_VECTOR
    return pvector(value)


def to_optional_pvector(value: Iterable[Any] | None) -> PVectorT[Any] | None:
    """``to_pvector`` for a field that may be ``None`` (a named converter, unlike
    ``attrs.converters.optional``: the codec knows it gives back what it is given)."""
    return None if value is None else to_pvector(value)


def to_float(value: Any) -> Any:
    """An ``int`` given for a float field as a float: ``1`` would be written to JSON as ``1``
    and read back as ``1.0`` — equal, yet encoded differently (docs/design/determinism.md).
    Anything else (``None``, a bool, a string) is left as it is, for the field's validator to
    judge."""
    if type(value) is int:
        try:
            return float(value)
        except OverflowError:
            raise InvalidArgument(f"{value} is out of a float's range") from None
    return value


# Frozen as they are (floats are checked: NaN and infinities are no JSON numbers).
_EXACT_SCALARS: Final = frozenset({str, int, bool, type(None)})


def to_pmap(value: Mapping[str, Any] | None) -> PMapT[str, Any]:
    """Return ``value`` as a deeply frozen ``PMap``, unchanged when it already is one (one
    holding only frozen JSON: what a ``PMap`` holds is checked as a dict's items are)."""
    if type(value) is _PMAP_TYPE:  # its values counted from 0, as a dict's below
        return _persistent(value, -1) if value else value
    if type(value) is not dict and value is not None and not isinstance(value, Mapping):
        raise NestingError(f"a {type(value).__name__} where an object belongs")
    if not value:
        return EMPTY_MAP
    if type(value) is dict:  # text keys and plain values (the rule): taken as they are
        for key, item in value.items():
            if type(key) is not str or type(item) not in _EXACT_SCALARS:
                break
        else:
            return pmap(value)
    frozen = {}
    for key, item in value.items():
        if type(key) is not str:
            key = _key(key)
        if type(item) in _EXACT_SCALARS:
            frozen[key] = item
            continue
        try:
            frozen[key] = deep_freeze(item)
        except NestingError as exc:
            exc.where = f".{key}{exc.where}"
            raise
    return pmap(frozen)


MAX_DEPTH: Final = 100
"""How deep a value held in a record (metadata, tool arguments and values, options) may
nest: deeper values are refused where they enter (``ValueError``; the codec's
``StateDecodeError`` names the path), so that no reader, writer or store meets a value it
cannot handle without exhausting the stack."""


class NestingError(InvalidArgument):
    """A value nested deeper than ``MAX_DEPTH``, or holding what JSON cannot write (a
    non-finite number, a set, bytes, an object, a key that is not a string); ``where`` is
    the path inside the value (``[3].a``, empty at the top)."""

    def __init__(self, problem: str, *, non_finite: bool = False) -> None:
        super().__init__(problem)
        self.problem = problem
        self.non_finite = non_finite  # a NaN or an infinity (else: too deep)
        self.where = ""

    def __str__(self) -> str:
        return f"{self.problem} at {self.where or 'the top'}"


def deep_freeze(value: Any) -> Any:
    """Turn nested dicts/lists/tuples into ``PMap``/``PVector`` (a tuple too: the codec reads
    any array back as a ``PVector``); JSON's scalars pass through, and so does a persistent
    collection that holds only frozen JSON (``_persistent`` checks it).

    Raises ``NestingError`` (a ``ValueError``) for a value nested deeper than ``MAX_DEPTH``
    or holding what JSON cannot write — a non-finite float (``NaN``, ``Infinity``), a set,
    bytes, any other object, a key that is not a string — so that what a record holds can
    always be written and read back equal."""
    kind = type(value)
    if kind is float:
        if value - value != 0.0:  # NaN or an infinity
            raise NestingError(f"{value!r} is not a JSON number", non_finite=True)
        return value
    if kind in _SCALARS:
        return value
    if kind is _PMAP_TYPE or kind is _PVECTOR_TYPE:
        return _persistent(value, 0) if value else value
    if isinstance(value, str | int | bool):
        return value
    return _frozen(value, 0)


def _persistent(value: Any, depth: int) -> Any:
    """A ``PMap`` or ``PVector`` given as it is, checked as ``_frozen`` checks what it
    freezes — pyrsistent holds anything: a set, a ``NaN``, a key that is not a string, a
    mutable dict, nesting past ``MAX_DEPTH`` — the same object when all it holds is frozen
    JSON, else a frozen copy (what ``_frozen`` makes of what it holds), or a
    ``NestingError``. (The loop never hands a converter one: it builds records without
    them; a user's constructor call or ``with_*`` may.)"""
    if depth >= MAX_DEPTH:
        raise NestingError(f"nested deeper than {MAX_DEPTH} levels")
    is_map = type(value) is _PMAP_TYPE
    changed: dict[Any, Any] = {}
    for key, item in shallow_dict(value).items() if is_map else enumerate(value):
        if is_map and type(key) is not str:  # (a text's subclass: the map is made again)
            return _frozen(dict(shallow_dict(value)), depth)
        if type(item) in _EXACT_SCALARS:
            continue
        try:
            frozen = _frozen(item, depth + 1)
        except NestingError as exc:
            exc.where = f"{f'.{key}' if is_map else f'[{key}]'}{exc.where}"
            raise
        if frozen is not item:
            changed[key] = frozen
    if not changed:
        return value
    if is_map:
        return value.update(changed)
    return pvector(changed.get(index, item) for index, item in enumerate(value))


def _key(key: Any) -> str:
    """A map's key as JSON writes it: a text — a ``StrEnum`` member (any subclass of
    ``str``) as its text, so that the map reads back equal; anything else refused."""
    if isinstance(key, str):
        return str.__str__(key)
    raise NestingError(f"a key that is not a string ({type(key).__name__} {key!r})")


def _frozen(value: Any, depth: int) -> Any:
    kind = type(value)
    if kind in _SCALARS:
        if kind is float and value - value != 0.0:
            raise NestingError(f"{value!r} is not a JSON number", non_finite=True)
        return value
    if kind is _PMAP_TYPE or kind is _PVECTOR_TYPE:
        return _persistent(value, depth) if value else value
    if depth >= MAX_DEPTH:
        raise NestingError(f"nested deeper than {MAX_DEPTH} levels")
    if kind is dict:
        frozen = {}
        for key, item in value.items():
            if type(key) is not str:
                key = _key(key)
            try:
                frozen[key] = _frozen(item, depth + 1)
            except NestingError as exc:  # the path is built only on the way out
                exc.where = f".{key}{exc.where}"
                raise
        return pmap(frozen)
    if kind is list or kind is tuple:
        items = []
        for index, item in enumerate(value):
            try:
                items.append(_frozen(item, depth + 1))
            except NestingError as exc:
                exc.where = f"[{index}]{exc.where}"
                raise
        return pvector(items)  # a tuple too: JSON reads an array back as a PVector
    if isinstance(value, float) and value - value != 0.0:
        raise NestingError(f"{value!r} is not a JSON number", non_finite=True)
    if isinstance(value, str | int | float):  # subclasses (an IntEnum, a str enum)
        return value
    if isinstance(value, Mapping):  # a defaultdict, an OrderedDict, a PRecord, a proxy
        return _frozen(dict(value), depth)
    if isinstance(value, list | tuple | PVector):  # a named tuple, a pure-Python PVector
        return _frozen(list(value), depth)
    raise NestingError(f"a value of type {type(value).__name__!r} is not JSON")


def same_value(a: Any, b: Any) -> bool:
    """Whether two frozen values (or records) are the same: equal, with the same types at
    every level of a frozen JSON value (``1``, ``1.0`` and ``True`` differ, as their JSON
    does; ``-0.0`` too) — what a ``with_*`` method asks before it gives back the record
    itself, unchanged (docs/design/records.md). Records, and a ``History`` of them, are compared by
    ``==`` (a conversation at C speed, item by item where they are the same objects)."""
    if a is b:
        return True
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is _PMAP_TYPE:
        return len(a) == len(b) and all(
            key in b and same_value(item, b[key]) for key, item in shallow_dict(a).items()
        )
    if kind is _PVECTOR_TYPE or kind is tuple:
        return len(a) == len(b) and all(map(same_value, a, b))
    if kind is float:
        return bool(a == b) and str(a) == str(b)
    if kind is datetime:  # the same instant in another offset is written otherwise
        return bool(a == b) and a.utcoffset() == b.utcoffset()
    return bool(a == b)


def shallow_dict(value: Mapping[str, Any]) -> dict[str, Any]:
    """A plain dict of a mapping's top level (fast for ``PMap``: ``map_items``)."""
    return dict(map_items(value))


def map_items(value: Mapping[Any, Any]) -> list[tuple[Any, Any]]:
    """A mapping's top-level items as a new list of pairs, in no set order (fast for
    ``PMap``: reads its buckets directly)."""
    buckets = getattr(value, "_buckets", None) if type(value) is _PMAP_TYPE else None
    if buckets is None:
        return list(value.items())
    return [pair for bucket in buckets if bucket for pair in bucket]


def deep_thaw(value: Any) -> Any:
    """Turn nested ``PMap``/``PVector`` back into plain dicts and lists."""
    if type(value) in _SCALARS:
        return value
    if isinstance(value, PMap | PVector | tuple | list | dict):
        return cast(Any, thaw)(value, strict=True)
    return value


class History(Sequence[T]):
    """An immutable sequence that stays cheap to append to and to keep many versions of.

    ``head`` is a short tuple placed before the body (a compiled request puts the system
    prompt there while sharing the conversation's chunks); ``chunks`` are full tuples of 32
    items shared by every version that contains them; ``tail`` holds the rest.
    """

    __slots__ = ("__weakref__", "_chunks", "_head", "_len", "_tail")

    _head: tuple[T, ...]
    _chunks: tuple[tuple[T, ...], ...]
    _tail: tuple[T, ...]
    _len: int

    def __new__(cls, items: Iterable[T] = ()) -> History[T]:
        if type(items) is History:
            return items
        flat = tuple(items)
        full = len(flat) - len(flat) % _CHUNK
        chunks = tuple(flat[i : i + _CHUNK] for i in range(0, full, _CHUNK))
        return _make_history((), chunks, flat[full:], len(flat))

    # -- building ---------------------------------------------------------------------------

    def append(self, item: T) -> History[T]:
        """Return a new history with ``item`` at the end; ``self`` is unchanged."""
        tail = (*self._tail, item)
        if len(tail) == _CHUNK:
            return _make_history(self._head, (*self._chunks, tail), (), self._len + 1)
        return _make_history(self._head, self._chunks, tail, self._len + 1)

    def extend(self, items: Iterable[T]) -> History[T]:
        """Return a new history with ``items`` appended."""
        tail = (*self._tail, *items)
        length = self._len + len(tail) - len(self._tail)
        if len(tail) < _CHUNK:
            return _make_history(self._head, self._chunks, tail, length)
        full = len(tail) - len(tail) % _CHUNK
        chunks = (*self._chunks, *(tail[i : i + _CHUNK] for i in range(0, full, _CHUNK)))
        return _make_history(self._head, chunks, tail[full:], length)

    def body(self) -> History[T]:
        """The history without its head."""
        if not self._head:
            return self
        return _make_history((), self._chunks, self._tail, self._len - len(self._head))

    def with_head(self, head: tuple[T, ...]) -> History[T]:
        """The same body behind another head (shares every chunk)."""
        own = self._head
        if head is own or head == own:
            return self
        return _make_history(head, self._chunks, self._tail, self._len - len(own) + len(head))

    @property
    def head(self) -> tuple[T, ...]:
        """The items placed before the body."""
        return self._head

    def prefix(self, length: int) -> History[T]:
        """The first ``length`` items of the body, sharing its chunks (the head is dropped)."""
        body_len = self._len - len(self._head)
        if length >= body_len:
            return self.body()
        if length <= 0:
            return _make_history((), (), (), 0)
        full, rest = divmod(length, _CHUNK)
        chunks = self._chunks[:full]
        if full < len(self._chunks):
            tail = self._chunks[full][:rest]
        else:
            tail = self._tail[:rest]
        return _make_history((), chunks, tail, length)

    def is_prefix_of(self, other: History[T]) -> bool:
        """Whether this head-less history equals the start of ``other``'s body.

        Shared chunks compare by identity, so checking a history against the context it
        was taken from costs one comparison per 32 items.
        """
        return not self._head and self.body_is_prefix_of(other)

    def body_is_prefix_of(self, other: History[T]) -> bool:
        """Whether this history's body (its head aside) equals the start of ``other``'s
        body: ``self.body().is_prefix_of(other)``, without making that body."""
        if self._len - len(self._head) > other._len - len(other._head):
            return False
        mine, theirs = self._chunks, other._chunks
        if theirs[: len(mine)] != mine:  # item by item: shared chunks by identity, at C speed
            return False
        tail = self._tail
        if not tail:
            return True
        index = len(mine)
        source = theirs[index] if index < len(theirs) else other._tail
        return source[: len(tail)] == tail

    def grew_by(self, earlier: History[T], items: Sequence[T]) -> bool:
        """Whether this head-less history is ``earlier`` (its chunks shared) followed by
        exactly ``items``, the same objects: a conversation a step added its messages to
        (a few identity checks, where ``common_prefix`` and ``items_from`` walk more)."""
        count = len(items)
        if self._head or earlier._head or not count or self._len != earlier._len + count:
            return False
        if not earlier.body_is_prefix_of(self):
            return False
        tail = self._tail
        added = tail[len(tail) - count :] if count <= len(tail) else self.items_from(earlier._len)
        return all(map(operator.is_, added, items))

    def common_prefix(self, other: History[T]) -> int:
        """How many leading items this head-less history shares with ``other``'s body (one
        identity check per shared chunk when ``other`` grew from this one)."""
        if self.is_prefix_of(other):
            return self._len
        count = 0
        for a, b in zip(self, other.body(), strict=False):
            if a is not b and a != b:
                break
            count += 1
        return count

    def items_from(self, start: int) -> Iterator[T]:
        """The items from index ``start`` on (head included in the count)."""
        head = len(self._head)
        if start < head:
            yield from self._head[start:]
            start = head
        chunk, offset = divmod(start - head, _CHUNK)
        for part in self._chunks[chunk:]:
            yield from part[offset:]
            offset = 0
        if chunk <= len(self._chunks):
            yield from self._tail[offset if chunk == len(self._chunks) else 0 :]

    def blocks(self) -> tuple[tuple[T, ...], ...]:
        """The body's items in blocks, oldest first: the full chunks (shared by every
        version holding them, so a block's identity says its items), then the tail."""
        return (*self._chunks, self._tail) if self._tail else self._chunks

    # -- reading ----------------------------------------------------------------------------

    def __len__(self) -> int:
        return self._len

    def __iter__(self) -> Iterator[T]:
        return itertools.chain(self._head, *self._chunks, self._tail)

    def __reversed__(self) -> Iterator[T]:
        yield from reversed(self._tail)
        for chunk in reversed(self._chunks):
            yield from reversed(chunk)
        yield from reversed(self._head)

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> History[T]: ...
    def __getitem__(self, index: int | slice) -> T | History[T]:
        if isinstance(index, slice):
            return History(tuple(self)[index])
        length = self._len
        if index < 0:
            index += length
        if not 0 <= index < length:
            raise IndexError("History index out of range")
        head = len(self._head)
        if index < head:
            return self._head[index]
        index -= head
        chunk, offset = divmod(index, _CHUNK)
        if chunk < len(self._chunks):
            return self._chunks[chunk][offset]
        return self._tail[offset]

    def last(self) -> T | None:
        """The last item, or ``None`` when empty."""
        if self._tail:
            return self._tail[-1]
        if self._chunks:
            return self._chunks[-1][-1]
        if self._head:
            return self._head[-1]
        return None

    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        if isinstance(other, History):
            if self._len != other._len:
                return False
            if self._head == other._head and len(self._chunks) == len(other._chunks):
                return (
                    all(a is b or a == b for a, b in zip(self._chunks, other._chunks, strict=True))
                    and self._tail == other._tail
                )
            return tuple(self) == tuple(other)
        if isinstance(other, Sequence) and not isinstance(other, str | bytes):
            return len(other) == self._len and tuple(self) == tuple(other)
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"History({list(self)!r})"


def _make_history(
    head: tuple[Any, ...], chunks: tuple[tuple[Any, ...], ...], tail: tuple[Any, ...], length: int
) -> History[Any]:
    """A history from its parts, without checks (the hot path of every append)."""
    self: History[Any] = _new(History)
    self._head = head
    self._chunks = chunks
    self._tail = tail
    self._len = length
    return self


_EMPTY_HISTORY: Final[History[Any]] = _make_history((), (), (), 0)


def to_history(value: Iterable[Any]) -> History[Any]:
    """Return ``value`` as a ``History``, unchanged when it already is one."""
    if type(value) is History:
        return value
    if not value:
        return _EMPTY_HISTORY
    return History(value)
