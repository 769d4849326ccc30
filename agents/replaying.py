"""Replaying a recorded run through the engine, and comparing it with its record.

A run is recorded as one or more *segments*: an execution starts, and each time it is
resumed after a suspension (approvals given, steering added) it starts again from the state
the application handed back. An audit log holds every segment's starting state and ending
state exactly (``AuditLog.read_run``); a state document holds only the end, and its start is
rewound with ``at_step(0)`` (``RunRecord.from_state``).

``replay(record)`` runs each segment again from its recorded start: the model's answers come
from the record (``ReplayDriver``, which checks that every request is the one recorded),
tool results from the record (by call), compactions and message windows from the record.
What the engine decides is decided again — the messages it appends, tool messages, stop
signals and whether to go on, goal prompts and output feedback, the approval gate — and
the result is compared with the record, ids and timestamps aside. What the record shows the
engine could not have decided by itself is given back to it: the limits and cancellations
that stopped the run (a replay has no wall clock to run out of), the output retry limit,
finish reasons and ``stop_on_tool_error`` when the record shows they acted, and which tools
needed approval. What the agent's own hooks did to requests or state cannot be replayed
without its code: such a run is reported as diverging where that first shows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, cast

import attrs

from agents.core.compaction import RecordedCompactions
from agents.core.hooks import HookContext, HookTrigger, hook, tool_interceptor
from agents.drivers.replay import ReplayDriver
from agents.errors import UsageError
from agents.records.codec import to_dict
from agents.records.compiled import replace_fields
from agents.records.execution import ExecutionStatus
from agents.records.inputs import InputAnswer
from agents.records.messages import ToolCall
from agents.records.signals import StopReason, StopSignal
from agents.records.state import AgentState
from agents.records.step import AgentStep, StepExecution, ToolExecution
from agents.shell.loop import AgentLoop
from agents.tools.outcomes import waiting
from agents.tools.tool import Tool, tool

__all__ = [
    "END_OF_RECORD",
    "VOLATILE",
    "Replayed",
    "RunRecord",
    "Segment",
    "answered",
    "compare",
    "ended_signals",
    "recorded_answers",
    "recorded_cancellations",
    "recorded_signals",
    "recorded_stops",
    "recorded_tools",
    "replay",
    "run_segment",
    "strip_volatile",
]

# Left out when comparing histories: what differs between two runs of the same behaviour.
VOLATILE: Final = frozenset(
    {
        "agent_id",
        "parent_agent_id",
        "execution_id",
        "id",
        "started_at",
        "completed_at",
        "created_at",
        "updated_at",
        "duration",
        # Bookkeeping for rewinding (at_step), not behaviour: a replay without the loop's
        # message compiler records it where the original did not, and back.
        "conversation_length",
    }
)
# Signals a replay cannot raise by itself: limits (it has no wall clock, and is not told
# the loop's limits) and cancellations. Given back where the record shows them.
_GIVEN_BACK: Final = frozenset(
    {
        StopReason.STEPS_LIMIT,
        StopReason.TOKEN_LIMIT,
        StopReason.COST_LIMIT,
        StopReason.TIME_LIMIT,
        StopReason.USER_REQUESTED,
    }
)
END_OF_RECORD: Final = StopSignal(
    reason=StopReason.USER_REQUESTED, message="the record ends here", source="replay"
)
_MANY: Final = 1_000_000  # output retries when the record shows no limit was reached


@attrs.frozen
class Segment:
    """One stretch of an execution: the state it started from and the recorded state at
    its end (or as far as the record goes)."""

    start: AgentState
    end: AgentState


@attrs.frozen
class RunRecord:
    """A recorded run: its segments in order, and whether the record reaches the run's
    end (a crashed run's log does not: only its recorded steps are compared)."""

    segments: tuple[Segment, ...]
    complete: bool
    # What the steps' requests offered the model besides the messages (tool schemas, model,
    # response format, options), by step number, where the record says (an audit log's
    # step records say it when it changed: the steps between keep the last one).
    offered: Mapping[int, Any] = attrs.field(factory=dict)

    def offered_at(self, step: int) -> Any:
        """What step ``step``'s request offered besides the messages, as recorded (the
        latest recorded shape at or before it), or ``None`` when the record does not say."""
        known = [number for number in self.offered if number <= step]
        return self.offered[max(known)] if known else None

    @property
    def final(self) -> AgentState:
        """The recorded state at the end of the record."""
        return self.segments[-1].end

    @classmethod
    def from_state(cls, state: AgentState) -> RunRecord:
        """A record of which only the end is known: its start is ``at_step(0)``, and
        suspensions are answered with the decisions the state holds."""
        status = state.status
        complete = status is not None and status not in (
            ExecutionStatus.IN_PROGRESS,
            ExecutionStatus.PENDING,
        )
        start = state.at_step(0) if state.execution is not None else state
        return cls(segments=(Segment(start=start, end=state),), complete=complete)


@attrs.frozen
class Replayed:
    """The outcome of a replay: the replayed state, and the first difference from the
    record (``(step, field)``), or ``None`` when the replay tells the same story."""

    state: AgentState
    difference: tuple[int, str] | None


def replay(record: RunRecord) -> Replayed:
    """Run every segment of ``record`` again and compare each with its record."""
    final = record.final
    states = [state for segment in record.segments for state in (segment.start, segment.end)]
    loop = _replay_loop(final, states, record.complete, answered(record.segments[0].start))
    decisions = {d.call_id: d for d in final.execution.approvals} if final.execution else {}
    answers = recorded_answers(final)
    replayed = final
    last = len(record.segments) - 1
    for index, segment in enumerate(record.segments):
        if last == 0:
            replayed = run_segment(loop, segment.start, decisions, answers)
        else:
            replayed = run_segment(loop, segment.start, {})
        outcome = record.complete or index < last
        difference = compare(segment.end, replayed, outcome=outcome)
        if difference is not None:
            return Replayed(replayed, difference)
    return Replayed(replayed, None)


def run_segment(
    loop: AgentLoop,
    start: AgentState,
    decisions: Mapping[str, Any],
    answers: Mapping[str, Sequence[InputAnswer]] | None = None,
) -> AgentState:
    """``loop.run(start)``, its suspensions answered with the recorded ``decisions`` and
    ``answers`` (by call id) for as long as they hold an answer to every waiting call and
    question (a record with no resumptions of its own: its segments give no other
    answers)."""
    state = loop.run(start)
    answers = answers or {}
    while state.status is ExecutionStatus.SUSPENDED:
        questions = state.pending_inputs
        if not all(call.id in decisions for call in state.pending_approvals) or not all(
            len(answers.get(q.call_id, ())) > _given(state, q.call_id) for q in questions
        ):
            return state
        for call in state.pending_approvals:
            decision = decisions[call.id]
            state = state.with_approval(call.id, decision.approved, decision.reason)
        for question in questions:
            answer = answers[question.call_id][_given(state, question.call_id)]
            state = state.with_input(question.call_id, answer.content, action=answer.action)
        state = loop.run(state)
    return state


def _given(state: AgentState, call_id: str) -> int:
    """How many answers ``state`` holds for the questions of call ``call_id``."""
    execution = state.execution
    inputs = execution.inputs if execution is not None else None
    return sum(1 for a in inputs or () if a.call_id == call_id)


def recorded_answers(state: AgentState) -> dict[str, Sequence[InputAnswer]]:
    """The answers the record's tool calls were given (by call id), in the order asked."""
    return {
        execution.tool_call.id: execution.inputs
        for se in state.step_executions
        for execution in se.step.tool_executions
        if execution.inputs
    }


def answered(start: AgentState) -> int:
    """How many of the record's steps had asked the model before ``start`` (a suspended
    step in progress had)."""
    execution = start.execution
    if execution is None:
        return 0
    return len(execution.step_executions) + (1 if execution.current_step is not None else 0)


def _replay_loop(
    final: AgentState, states: Sequence[AgentState], complete: bool, before: int
) -> AgentLoop:
    """A loop answering from ``final``'s record (the steps after step ``before``) and given
    back what it cannot decide."""
    from agents.testing.clocks import SequentialIds, TickingClock  # not with import agents

    step_executions = list(final.step_executions)
    steps = {se.number: se.step for se in step_executions}
    current = final.execution.current_step if final.execution is not None else None
    if current is not None:
        steps[len(step_executions) + 1] = current  # suspended for approvals
    signals = _signals(final)
    ended = ended_signals(final) if complete else [END_OF_RECORD]
    retry_limits = [
        s.context.get("output_retries") for s in signals if s.reason is StopReason.RETRY_LIMIT
    ]
    finish_reasons = sorted(
        {
            str(s.context.get("finish_reason"))
            for s in signals
            if s.reason is StopReason.FINISH_REASON and s.context.get("finish_reason")
        }
    )
    compactions = RecordedCompactions.from_state(final)
    return AgentLoop(
        ReplayDriver.from_state(final, after=before),
        tools=_approval_gates(states),
        hooks=[
            _recorded_windows(steps),
            *recorded_signals(ended, answered(final), step_executions),
        ],
        interceptors=[recorded_tools(step_executions)],
        max_steps=None,
        output_retries=next((int(n) for n in retry_limits if isinstance(n, int)), _MANY),
        stop_on_finish_reasons=finish_reasons,
        stop_on_tool_error=any(s.source == "stop_on_tool_error" for s in signals),
        compaction=compactions or None,  # summaries answered from the record
        clock=TickingClock(),
        ids=SequentialIds("replay-"),
    )


def recorded_tools(step_executions: Sequence[StepExecution], *, as_made: bool = False) -> Any:
    """Tool calls answered from the record (the first recorded execution of a call id
    whose call is the same, else the last one), a human's questions asked again first.

    A replay has none of the agent's hooks: a call its hooks rewrote reaches the record
    as the model made it, and the recorded execution (the call as rewritten) answers it.
    ``as_made`` (a regression test, where the new agent's hooks run): a call that no
    recorded execution holds is answered by the last one holding the call as it is made
    now, so that the rewrite shows where it happens."""
    executions: dict[str, list[ToolExecution]] = {}
    for se in step_executions:
        for execution in se.step.tool_executions:
            executions.setdefault(execution.tool_call.id, []).append(execution)

    asked: dict[str, int] = {}  # questions asked again, by call

    @tool_interceptor
    def recorded_tools(call: ToolCall, call_next: Any) -> ToolExecution:
        found = executions.get(call.id, [])
        for index, execution in enumerate(found):
            if execution.tool_call == call or index == len(found) - 1:
                # A call that asked a human n questions was made n + 1 times: it asks
                # them again, in order, before its result.
                number = asked.get(call.id, 0)
                if execution.inputs and number < len(execution.inputs):
                    asked[call.id] = number + 1
                    request = execution.inputs[number].request
                    return waiting(execution.id, call, request, execution.started_at)
                asked.pop(call.id, None)
                execution = found.pop(index)
                if as_made and execution.tool_call != call:
                    return replace_fields(execution, tool_call=call)
                return execution
        return cast(ToolExecution, call_next(call))

    return recorded_tools


def _recorded_windows(steps: dict[int, AgentStep]) -> Any:
    """A request that left part of the conversation out (a message compiler's window,
    recorded with ``conversation_length``) was chosen by code the record does not hold:
    send what was recorded. Everything else is compiled again and compared."""

    @hook(HookTrigger.BEFORE_INFERENCE, name="recorded_windows")
    def recorded_windows(context: HookContext) -> HookContext:
        step = steps.get(len(context.state.step_executions) + 1)
        request = context.request
        if (
            step is None
            or step.conversation_length is None
            or request is None
            or len(step.input_messages) >= len(request.messages)
        ):
            return context
        return context.with_request(request.with_messages(tuple(step.input_messages)))

    return recorded_windows


def recorded_signals(
    ended: Sequence[StopSignal], recorded_count: int, step_executions: Sequence[StepExecution]
) -> list[Any]:
    """The hooks giving back the stop signals of a record that a new run cannot raise by
    itself: ``ended`` (``recorded_stops``: past the last of ``recorded_count`` steps; a
    suspended step had begun) and the cancellations after steps (``recorded_cancellations``)
    — each only when the record holds such signals, as a hook costs every step its call."""
    hooks = [recorded_stops(ended, recorded_count)] if ended else []
    if any(
        signal.reason is StopReason.USER_REQUESTED
        for se in step_executions
        for signal in se.continuation.stop_signals
    ):
        hooks.append(recorded_cancellations(step_executions))
    return hooks


def recorded_stops(ended: Sequence[StopSignal], recorded_count: int) -> Any:
    """Past the last recorded step: the limits or cancellation that ended the run, or the
    end of a record that stops short (a crash)."""

    @hook(HookTrigger.BEFORE_STEP, name="recorded_stops")
    def recorded_stops(context: HookContext) -> HookContext:
        state = context.state
        if len(state.step_executions) < recorded_count:
            return context
        for signal in ended:
            if not _has(state, signal):
                state = state.with_stop_signal(signal)
        return context.with_state(state)

    return recorded_stops


def recorded_cancellations(step_executions: Sequence[StepExecution]) -> Any:
    """A cancellation that reached the run after a step, as recorded on that step."""

    @hook(HookTrigger.AFTER_STEP, name="recorded_cancellations")
    def recorded_cancellations(context: HookContext) -> HookContext:
        state = context.state
        number = len(state.step_executions) + 1
        if number > len(step_executions):
            return context
        for signal in step_executions[number - 1].continuation.stop_signals:
            if signal.reason is StopReason.USER_REQUESTED and not _has(state, signal):
                state = state.with_stop_signal(signal)
        return context.with_state(state)

    return recorded_cancellations


def _signals(state: AgentState) -> list[StopSignal]:
    """Every stop signal the record holds: each step's, and the final ones."""
    found: list[StopSignal] = []
    for se in state.step_executions:
        found.extend(se.continuation.stop_signals)
    if state.execution is not None:
        found.extend(state.execution.continuation.stop_signals)
    return found


def ended_signals(state: AgentState) -> tuple[StopSignal, ...]:
    """The signals added after the last recorded step that a replay cannot raise by
    itself (a goal's budgets it raises: they follow from the recorded goal)."""
    execution = state.execution
    if execution is None:
        return ()
    last = execution.step_executions.last()
    before = last.continuation.stop_signals if last is not None else ()
    return tuple(
        signal
        for signal in execution.continuation.stop_signals
        if signal.reason in _GIVEN_BACK and signal.source != "goal" and signal not in before
    )


def _has(state: AgentState, signal: StopSignal) -> bool:
    return state.execution is not None and signal in state.execution.continuation.stop_signals


def _approval_gates(states: Iterable[AgentState]) -> list[Tool]:
    """Stand-ins for the tools whose calls waited for approval in any of ``states``: the
    replay must suspend where the run did. They never run (results come from the record)."""
    names: set[str] = set()
    for state in states:
        execution = state.execution
        if execution is None:
            continue
        waited = {d.call_id for d in execution.approvals}
        names.update(c.name for c in execution.pending_approvals)
        steps = [se.step for se in execution.step_executions]
        if execution.current_step is not None:
            steps.append(execution.current_step)
        for step in steps:
            names.update(c.name for c in step.requested_tool_calls if c.id in waited)
    return [_gate(name) for name in sorted(names)]


def _gate(name: str) -> Tool:
    def stand_in() -> None:
        raise UsageError(f"{name} is answered from the record")

    return tool(stand_in, name=name, description="(replayed)", requires_approval=True)


# -- comparing ----------------------------------------------------------------------------------


def strip_volatile(value: Any) -> Any:
    """Plain JSON data without the ``VOLATILE`` keys (ids and times), at any depth."""
    if isinstance(value, dict):
        return {k: strip_volatile(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [strip_volatile(item) for item in value]
    return value


def _first_difference(a: Any, b: Any, path: str) -> str | None:
    if type(a) is not type(b):
        return path
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return f"{path}.{key}"
            found = _first_difference(a[key], b[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(a, list):
        for index, (x, y) in enumerate(zip(a, b, strict=False)):
            found = _first_difference(x, y, f"{path}[{index}]")
            if found:
                return found
        return None if len(a) == len(b) else f"{path}.length"
    return None if a == b else path


def compare(a: AgentState, b: AgentState, *, outcome: bool = True) -> tuple[int, str] | None:
    """The first step (1-based) and field where two histories differ, ignoring ids and
    timestamps; ``None`` when they tell the same story. With ``outcome=False`` only the
    steps ``a`` holds are compared (``a`` is a record that stops short)."""
    steps_a = [strip_volatile(to_dict(se)) for se in a.step_executions]
    steps_b = [strip_volatile(to_dict(se)) for se in b.step_executions]
    for number, (x, y) in enumerate(zip(steps_a, steps_b, strict=False), start=1):
        field = _first_difference(x, y, "")
        if field:
            return number, field.lstrip(".")
    if not outcome:
        return None if len(steps_b) >= len(steps_a) else (len(steps_b) + 1, "steps")
    if len(steps_a) != len(steps_b):
        return min(len(steps_a), len(steps_b)) + 1, "steps"
    outcome_a = (a.status, a.stop_reason, a.final_output, _pending(a))
    outcome_b = (b.status, b.stop_reason, b.final_output, _pending(b))
    if outcome_a != outcome_b:
        return len(steps_a), "status"
    return None


def _pending(state: AgentState) -> Sequence[Any]:
    return [call.id for call in state.pending_approvals] + [
        (q.call_id, q.message) for q in state.pending_inputs
    ]
