"""``Session``: a stored agent conversation, and the ``SessionStore`` protocol (SPEC §11)."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol, runtime_checkable

import attrs

from agents.records.record import Record
from agents.records.state import AgentState
from agents.records.step import StepExecution

__all__ = ["Session", "SessionStore"]


@attrs.frozen(kw_only=True)
class Session(Record):
    """A stored conversation: its id, its version (1 on creation, +1 per committed write),
    its state (``None`` in listings), and where it was forked from."""

    session_id: str
    version: int
    state: AgentState | None
    parent_session_id: str | None = None
    created_at: datetime
    updated_at: datetime

    def with_state(self, state: AgentState) -> Session:
        """A copy carrying another state (to ``save`` or ``checkpoint``)."""
        return self if state is self.state else self._evolve(state=state)


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
