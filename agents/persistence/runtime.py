"""``SessionRuntime``: conversations that survive requests, processes and crashes.

``send`` commits the user message (with a PENDING execution whose id is fixed) before
running, then commits a checkpoint after every completed step: a process killed at any
moment resumes from its last committed step, with the same execution id, so tools see the
same idempotency keys ``(execution_id, step, tool_call_id)`` for a call that may have been
in flight.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, cast

from agents.core.clock import IdFactory, RandomIds
from agents.persistence.session import Session, SessionStore
from agents.records.content import Part
from agents.records.execution import ExecutionState, ExecutionStatus
from agents.records.messages import Message
from agents.records.state import AgentState
from agents.shell.loop import AgentLoop

__all__ = ["SessionRuntime"]


class SessionRuntime:
    """Runs stored sessions with the loop ``loop_factory(session)`` gives."""

    def __init__(
        self,
        store: SessionStore,
        loop_factory: Callable[[Session], AgentLoop],
        *,
        ids: IdFactory | None = None,
    ) -> None:
        self.store = store
        self.loop_factory = loop_factory
        self._ids = ids or RandomIds()

    @property
    def ids(self) -> IdFactory:
        """Where the execution ids of its runs come from."""
        return self._ids

    def create(
        self,
        state: AgentState | None = None,
        session_id: str | None = None,
        parent_session_id: str | None = None,
    ) -> Session:
        """A new session (an empty agent unless ``state`` is given)."""
        return self.store.create(state or AgentState.initial(), session_id, parent_session_id)

    def get(self, session_id: str) -> Session:
        """The stored session (``SessionNotFound`` if there is none)."""
        return self.store.load(session_id)

    def list(self) -> list[Session]:
        """Session headers (``state`` is ``None``)."""
        return self.store.list()

    def delete(self, session_id: str) -> None:
        """Forget a session."""
        self.store.delete(session_id)

    def send(
        self, session_id: str, message: str | Part | Iterable[str | Part] | Message
    ) -> Session:
        """Commit a user message (text, a part, or a list of them), then run with a
        checkpoint after every step.

        A session whose execution is still in progress (or suspended) gets the message as
        steering — it joins the conversation before the next inference — and is resumed.
        """
        session = self.store.load(session_id)
        state = session.state
        assert state is not None
        if state.status in (ExecutionStatus.IN_PROGRESS, ExecutionStatus.SUSPENDED):
            state = state.with_steering_message(message)
        else:
            state = (
                state.for_next_execution()
                .with_user_message(message)
                .with_execution(ExecutionState.pending(self._ids.new_id("execution")))
            )
        session = self.store.save(session.with_state(state))
        return self._run(session)

    def resume(self, session_id: str) -> Session:
        """Continue an unfinished session from its last committed step (a finished one is
        returned unchanged)."""
        session = self.store.load(session_id)
        state = session.state
        assert state is not None
        if state.status is None or state.status.terminal:
            return session
        return self._run(session)

    def approve(self, session_id: str, call_id: str, approved: bool, reason: str = "") -> Session:
        """Decide about a call waiting for approval; once no call waits any more, the run
        resumes (approved calls run, denied ones are recorded as blocked)."""
        session = self.store.load(session_id)
        assert session.state is not None
        state = session.state.with_approval(call_id, approved, reason)
        session = self.store.save(session.with_state(state))
        decided = {d.call_id for d in state.execution.approvals} if state.execution else set()
        if any(call.id not in decided for call in state.pending_approvals):
            return session
        return self._run(session)

    def answer(
        self,
        session_id: str,
        call_id: str,
        content: Mapping[str, Any] | None = None,
        *,
        action: str = "accept",
    ) -> Session:
        """Answer the question a tool call asked a human (``state.with_input``); once no
        question waits any more, the run resumes (the calls that asked are made again with
        the answers)."""
        session = self.store.load(session_id)
        assert session.state is not None
        state = session.state.with_input(call_id, content, action=action)
        session = self.store.save(session.with_state(state))
        if state.pending_inputs:
            return session
        return self._run(session)

    def fork(self, session_id: str, at_step: int) -> Session:
        """A new session continuing this one's history from step ``at_step``."""
        session = self.store.load(session_id)
        assert session.state is not None
        return self.store.create(session.state.fork(at_step=at_step), parent_session_id=session_id)

    def _run(self, session: Session) -> Session:
        loop = self.loop_factory(session)
        committed = session.state.step_count if session.state is not None else 0
        final: AgentState | None = None
        # (a session listed without its state is refused by iterate, as any non-state is)
        for state in loop.iterate(cast(AgentState, session.state)):
            final = state
            if state.status is ExecutionStatus.IN_PROGRESS and state.step_count > committed:
                last = state.step_executions.last()
                assert last is not None
                session = self.store.checkpoint(session.with_state(state), last)
                committed = state.step_count
        assert final is not None
        return self.store.save(session.with_state(final))
