"""The store's logic as plans: generators of SQL statements, sans-IO, so that the same plan
runs on a blocking connection (``drive``) and on an asyncio one
(``AsyncPostgresSessionStore``)."""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, TypeVar, cast

__all__ = ["Handle", "Many", "Plan", "Query", "T", "drive", "fetched"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Query:
    """One statement of a plan, with ``?`` placeholders, and what it hands back: nothing,
    ``"one"`` row, ``"all"`` rows or the ``"count"`` of rows changed."""

    text: str
    parameters: Any = ()
    fetch: str = ""


@dataclass(frozen=True, slots=True)
class Many:
    """One statement run for each of ``rows``."""

    text: str
    rows: list[Any]


Plan = Generator["Query | Many", Any, T]
"""The store's logic as a generator of statements: sans-IO, so the same plan runs on a
blocking connection (``drive``) and on an asyncio one (``AsyncPostgresSessionStore``)."""


class Handle:
    """A blocking connection seen through ``?`` placeholders, whatever the driver's style."""

    def __init__(self, connection: Any, placeholder: str) -> None:
        self._connection = connection
        self._placeholder = placeholder

    def _sql(self, text: str) -> str:
        return text if self._placeholder == "?" else text.replace("?", self._placeholder)

    def perform(self, op: Query | Many) -> Any:
        if type(op) is Many:
            if op.rows:
                self._connection.cursor().executemany(self._sql(op.text), op.rows)
            return None
        assert type(op) is Query
        cursor = self._connection.execute(self._sql(op.text), op.parameters)
        return fetched(cursor, op.fetch)


def fetched(cursor: Any, fetch: str) -> Any:
    """What a blocking cursor hands back for ``fetch``."""
    if fetch == "one":
        return cursor.fetchone()
    if fetch == "all":
        return cursor.fetchall()
    return cursor.rowcount if fetch == "count" else None


def drive(plan: Plan[T], db: Handle) -> T:
    """Run ``plan`` on a blocking connection."""
    result: Any = None
    while True:
        try:
            op = plan.send(result)
        except StopIteration as stop:
            return cast(T, stop.value)
        result = db.perform(op)
