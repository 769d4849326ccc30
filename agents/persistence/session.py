"""``Session``: a stored agent conversation, and the ``SessionStore`` protocol
(docs/design/sessions.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Protocol, runtime_checkable

import attrs

from agents.errors import InvalidArgument, InvalidType
from agents.records.compiled import replace_fields
from agents.records.json_text import has_lone_surrogate
from agents.records.record import Record
from agents.records.state import AgentState
from agents.records.step import StepExecution

__all__ = ["Session", "SessionStore", "recreated", "storable_id"]


def storable_id(session_id: str) -> bool:
    """Whether a store can keep ``session_id``: text (no other value is a session id)
    without NUL (PostgreSQL refuses it) or a lone surrogate (UTF-8 cannot hold one: a
    database, a file or a URL would refuse it)."""
    return (
        type(session_id) is str and "\x00" not in session_id and not has_lone_surrogate(session_id)
    )


def _check_id(_: object, attribute: attrs.Attribute[Any], value: str | None) -> None:
    if value is not None and type(value) is not str:
        raise InvalidType(f"{attribute.name} is a str, not {type(value).__name__}")
    if isinstance(value, str) and not storable_id(value):
        raise InvalidArgument(
            f"{attribute.name} {value!r} cannot be stored: a session id has no NUL and no "
            "lone surrogate"
        )


@attrs.frozen(kw_only=True)
class Session(Record):
    """A stored conversation: its id, its version (1 on creation, +1 per committed write),
    its state (``None`` in listings), and where it was forked from."""

    session_id: str = attrs.field(validator=_check_id)
    version: int
    state: AgentState | None = attrs.field(validator=lambda _, __, value: _check_state(value))
    parent_session_id: str | None = attrs.field(default=None, validator=_check_id)
    created_at: datetime
    updated_at: datetime

    def with_state(self, state: AgentState) -> Session:
        """A copy carrying another state (to ``save`` or ``checkpoint``)."""
        _check_state(state)
        return self if state is self.state else replace_fields(self, state=state)


def _check_state(state: object) -> None:
    if state is not None and not isinstance(state, AgentState):
        raise InvalidType(f"a session's state is an AgentState, not {type(state).__name__}")


@runtime_checkable
class SessionStore(Protocol):
    """Where sessions live. Writes are optimistic: a write based on a version that is no
    longer the stored one raises ``SessionConflict`` and changes nothing."""

    def create(
        self,
        state: AgentState,
        session_id: str | None = None,
        parent_session_id: str | None = None,
    ) -> Session: ...

    def load(self, session_id: str) -> Session: ...

    def save(self, session: Session) -> Session: ...

    def checkpoint(self, session: Session, step_execution: StepExecution) -> Session: ...

    def list(self) -> list[Session]: ...

    def delete(self, session_id: str) -> None: ...


def recreated(session_id: str) -> str:
    """Why a write based on a session deleted and created again since is refused: its
    version counts the writes of another session that has the same id (the stored rows are
    not the ones the write was based on; writing on them would mix two sessions)."""
    return (
        f"session {session_id!r} was deleted and created again since the write's version was read"
    )
