"""What the audit log's records hold (format 2), built from the run's events.

A run is a ``start`` record (the state it starts from), one ``step`` record per step (the
step as the codec writes it, its input a reference into the conversation, and what changed
in the state since the record before) and an ``end`` record (the terminal status and what
changed since the last step). ``event`` records, one per event, only when asked for.
"""

from __future__ import annotations

from typing import Any, Final

import attrs

from agents.records.codec import encode_step_execution, encode_value, to_dict
from agents.records.context import SECTIONS, MessageStore
from agents.records.events import LIVE_FIELDS, Event, ExecutionStarted
from agents.records.frozen import History, to_history
from agents.records.state import AgentState
from agents.records.step import StepExecution
from agents.shell.subagents import DEPTH_KEY

__all__ = ["event_payload", "run_key", "state_change", "step_payload"]

_NO_STEPS: Final[History[StepExecution]] = to_history(())
_NO_SECTIONS: Final = MessageStore()
_EVENT_KEYS: Final = frozenset({"agent_id", "execution_id", "step"})


def run_key(event: Event, state: AgentState) -> tuple[str | None, str | None, int]:
    """Which run a record belongs to: agent, execution and depth (a sub-agent's records
    interleave with its parent's, and with deterministic ids a child may carry its
    parent's ids)."""
    depth = state.metadata.get(DEPTH_KEY, 0)
    return event.agent_id, event.execution_id, depth if isinstance(depth, int) else 0


def event_payload(event: Event) -> dict[str, Any]:
    """An event's fields (the live records left out; a run's start keeps its state)."""
    payload: dict[str, Any] = {}
    for field in attrs.fields(type(event)):
        if field.name in LIVE_FIELDS or field.name in _EVENT_KEYS:
            continue
        payload[field.name] = encode_value(getattr(event, field.name))
    if isinstance(event, ExecutionStarted):
        payload["state"] = to_dict(event.state)
    return payload


def state_change(state: AgentState, before: AgentState | None) -> dict[str, Any]:
    """``state`` as a change from ``before``: every field but the message sections and the
    steps (``state``), and for each section that changed, how many messages it kept and
    which it added (``sections``). A reader rebuilds ``state`` exactly from ``before``,
    while a long run's log stays O(steps)."""
    execution = state.execution
    assert execution is not None  # the records of a run describe its execution
    stub = state._evolve(
        context=state.context.with_store(_NO_SECTIONS),
        execution=execution._evolve(step_executions=_NO_STEPS),
    )
    old = before.context.store if before is not None else _NO_SECTIONS
    new = state.context.store
    sections = {}
    for name in SECTIONS:
        was, now = old.section(name), new.section(name)
        keep = len(was) if now is was else was.common_prefix(now)
        if keep == len(was) == len(now):
            continue
        sections[name] = {
            "keep": keep,
            "add": [encode_value(message) for message in now.items_from(keep)],
        }
    return {"sections": sections, "state": encode_value(stub)}


def step_payload(
    step_execution: StepExecution, state: AgentState, before: AgentState | None
) -> dict[str, Any]:
    """A step record: the step (its input messages as a reference into the conversation
    where they are one, as in an encoded state) and the state after it as a change."""
    return {
        **state_change(state, before),
        "step_execution": encode_step_execution(step_execution, state.context),
    }
