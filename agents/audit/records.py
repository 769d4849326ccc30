"""What the audit log's records hold (format 3), built from the run's events.

A run is a ``start`` record (the state it starts from), one ``step`` record per step (the
step as the codec writes it, its input a reference into the conversation, and what changed
in the state since the record before) and an ``end`` record (the terminal status and what
changed since the last step). ``event`` records, one per event, only when asked for. The
step and the messages a record adds are compact (``compact``: each fact once).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Final

import attrs

from agents.audit.compact import compact_field, compact_step
from agents.records.codec import (
    OMITTED,
    Encoding,
    compact_record,
    encode_value,
    to_dict,
)
from agents.records.compiled import differ, replace_fields
from agents.records.context import SECTIONS, MessageStore
from agents.records.events import LIVE_FIELDS, Event, ExecutionStarted
from agents.records.frozen import History, to_history
from agents.records.inference import InferenceRequest
from agents.records.registry import field_plan
from agents.records.state import AgentState
from agents.records.step import StepExecution
from agents.shell.subagents import DEPTH_KEY

__all__ = [
    "Heads",
    "event_payload",
    "request_shape",
    "run_key",
    "state_change",
    "step_payload",
    "stub_of",
]

_NO_STEPS: Final[History[StepExecution]] = to_history(())
_NO_SECTIONS: Final = MessageStore()
_EVENT_KEYS: Final = frozenset({"agent_id", "execution_id", "step"})
# What a state's changes leave out: the conversation and the steps have records of their own.
_NESTED: Final = {"context": frozenset({"store"}), "execution": frozenset({"step_executions"})}


class Heads:
    """The head of the last context a step record was written or read against
    (``AgentContext.head()`` builds a new system message each time; the steps of a run
    share one). One pair, replaced whole: runs in threads sharing a log share it safely."""

    __slots__ = ("_last",)

    def __init__(self) -> None:
        self._last: tuple[tuple[Any, ...], tuple[Any, ...]] = ((), ())

    def of(self, context: Any, like: tuple[Any, ...] | None = None) -> tuple[Any, ...]:
        """``context.head()``, or the one built for the context before; ``like``: a head
        the step was given (the loop builds one a run), kept when equal, so that a step's
        input is found to start with it by identity, not compared message by message."""
        store = context.store
        key = (context.system_prompt, store.summary, store.buffer)
        known, head = self._last
        if not (known and key[0] == known[0] and key[1] is known[1] and key[2] is known[2]):
            head = context.head()
            if like is not None and like == head:
                head = like
            self._last = (key, head)
        return head


def run_key(event: Event, state: AgentState) -> tuple[str | None, str | None, int]:
    """Which run a record belongs to: agent, execution and depth (a sub-agent's records
    interleave with its parent's, and with deterministic ids a child may carry its
    parent's ids)."""
    metadata = state.metadata
    depth = metadata.get(DEPTH_KEY, 0) if metadata else 0  # (empty: no lookup, 10x faster)
    return event.agent_id, event.execution_id, depth if isinstance(depth, int) else 0


def event_payload(event: Event, encoding: Encoding | None = None) -> dict[str, Any]:
    """An event's fields (the live records left out; a run's start keeps its state);
    ``encoding`` notes an odd float."""
    payload: dict[str, Any] = {}
    for field in attrs.fields(type(event)):
        if field.name in LIVE_FIELDS or field.name in _EVENT_KEYS:
            continue
        payload[field.name] = encode_value(getattr(event, field.name), encoding)
    if isinstance(event, ExecutionStarted):
        payload["state"] = to_dict(event.state, encoding)
    return payload


def stub_of(state: AgentState) -> AgentState:
    """``state`` without its conversation and its steps (which records hold as changes)."""
    execution = state.execution
    return replace_fields(
        state,
        context=state.context.with_store(_NO_SECTIONS),
        execution=None
        if execution is None
        else replace_fields(execution, step_executions=_NO_STEPS),
    )


def state_change(
    state: AgentState,
    before: AgentState | None,
    outputs: Any = None,
    encoding: Encoding | None = None,
) -> dict[str, Any]:
    """``state`` as a change from ``before``: for each section of the conversation that
    changed, how many messages it kept and which it added (``sections``: compact, and
    ``add`` left out when the conversation added exactly the step's ``outputs``, the
    objects themselves); and every other
    field that changed, by its path (``changes``: ``[path, JSON]``, or ``[path]`` for a
    field the JSON leaves out; the whole state but its conversation and steps when there
    is no ``before``; ``encoding`` notes an odd float). A reader rebuilds ``state`` exactly
    from ``before``, while a long run's log stays O(steps) and a step's record holds what
    the step changed."""
    assert state.execution is not None  # the records of a run describe its execution
    old = before.context.store if before is not None else _NO_SECTIONS
    new = state.context.store
    sections: dict[str, dict[str, Any]] = {}
    for name in SECTIONS if new is not old else ():
        was, now = getattr(old, name), getattr(new, name)
        if now is was:
            continue
        if outputs is not None and name == "messages" and now.grew_by(was, outputs):
            sections[name] = {"keep": len(was)}  # the step's own messages, and no more
            continue
        keep = was.common_prefix(now)
        if keep == len(was) == len(now):
            continue
        added = list(now.items_from(keep))
        if outputs is not None and name == "messages" and _same_objects(added, outputs):
            sections[name] = {"keep": keep}
            continue
        sections[name] = {
            "keep": keep,
            "add": [compact_record(message, encoding) for message in added],
        }
    if before is None or before.execution is None:
        return {"sections": sections, "state": encode_value(stub_of(state), encoding)}
    return {"sections": sections, "changes": _changes(state, before, encoding)}


def _same_objects(added: Any, outputs: Any) -> bool:
    return len(added) == len(outputs) and all(a is b for a, b in zip(added, outputs, strict=True))


def _changes(state: AgentState, before: AgentState, encoding: Encoding | None) -> list[list[Any]]:
    """The fields of ``state`` (and of its context and execution) that are not those of
    ``before``, compared by identity (persistent records share what did not change). Plain
    loops: a comprehension costs a call, and this runs at every step."""
    changes: list[list[Any]] = []
    for name in _STATE_FIELDS(state, before):
        now, was = getattr(state, name), getattr(before, name)
        if name not in _NESTED:
            changes.append(_change([name], state, name, encoding))
        elif now is None or was is None:
            changes.append(_change([name], stub_of(state), name, encoding))
        else:
            for field in _differing(now.__class__, name)(now, was):  # (most steps: none)
                changes.append(_change([name, field], now, field, encoding))  # noqa: PERF401
    return changes


@functools.cache
def _differing(cls: type, owner: str) -> Callable[[Any, Any], list[str]]:
    """Which fields of two ``cls`` records a change may name hold values that are not the
    same object: those of ``owner``'s record less what has records of its own
    (``_NESTED``)."""
    skipped = _NESTED.get(owner, frozenset())
    return differ(cls, tuple(field.name for field in field_plan(cls) if field.name not in skipped))


_STATE_FIELDS: Final = _differing(AgentState, "")


def _change(path: list[str], record: Any, name: str, encoding: Encoding | None) -> list[Any]:
    value = compact_field(record, name, encoding)
    return [path] if value is OMITTED else [path, value]


def request_shape(request: InferenceRequest, encoding: Encoding | None = None) -> dict[str, Any]:
    """What a request offered the model besides its messages — the tool schemas, the model,
    the response format and the options (secrets redacted) — as a step record keeps it
    (``request``), when it changed since the run's step before: what a regression test
    compares (``agents.testing.regress``); ``encoding`` notes an odd float."""
    return {
        "model": request.model,
        "options": encode_value(request.options, encoding),
        "response_format": encode_value(request.response_format, encoding),
        "tools": encode_value(request.tools, encoding),
    }


def step_payload(
    step_execution: StepExecution,
    state: AgentState,
    before: AgentState | None,
    encoding: Encoding | None = None,
    head: tuple[Any, ...] | None = None,
) -> dict[str, Any]:
    """A step record: the step, compact (its input messages as a reference into the
    conversation where they are one, as in an encoded state), and the state after it as a
    change (the messages it added left out when they are the step's output messages and
    its input is in what the conversation kept: the reader adds them after the step).
    ``encoding`` notes an odd float; ``head``: the context's head, when the caller has it
    (``Heads``)."""
    if encoding is None:
        encoding = Encoding(None)
    written = compact_step(step_execution, state.context, encoding, head)
    outputs = step_execution.step.output_messages
    change = state_change(state, before, outputs, encoding)
    kept = change["sections"].get("messages")
    if kept is not None and "add" not in kept:
        given = written["step"]["input_messages"]  # a MessagesRef's prefix, or messages
        if type(given) is int and given > kept["keep"]:  # refers past what was kept
            change = state_change(state, before, None, encoding)
    change["step_execution"] = written
    return change
