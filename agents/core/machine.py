"""The step machine: one execution as a generator of effects (docs/design/loop.md).

``execute`` walks the phases BeforeExecution → [BeforeStep → UseTools → AfterStep →
ShouldStop] → AfterExecution (``agents.core.phases`` around the steps,
``agents.core.step_phases`` within one). It calls hooks (synchronous functions of their
input, like workflow code) and yields ``Infer``, ``InvokeTools`` and ``Progress``; the
runner performs them and sends back the results. The machine never calls a model or a
tool, never reads the wall clock (the clock and id factory are injected) and never raises
for a failure inside the run: failures are recorded in the state it returns.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

from agents.core.cancellation import CancellationToken
from agents.core.phases import after_execution, before_execution, before_step, resumed_step
from agents.core.run import Emit, Machine, MachineFailure, Run
from agents.core.step_phases import Effect, step
from agents.errors import ConfigurationError
from agents.records.effects import Progress
from agents.records.encoding import unrecordable
from agents.records.state import AgentState

__all__ = ["Effect", "Emit", "Machine", "MachineFailure", "execute"]


def execute(
    state: AgentState,
    machine: Machine,
    emit: Emit | None = None,
    cancellation: CancellationToken | None = None,
    *,
    progress: bool = True,
    step_events: bool = True,
    detail_events: bool = True,
) -> Generator[Effect, Any, AgentState]:
    """Run one execution of ``state``; yields effects, returns the final state.

    With ``progress=False`` no ``Progress`` effect is yielded (``run`` does not need one);
    with ``step_events=False`` only run-level events are built (nobody wants the
    step-level ones: no listener, and the log filters debug out); with
    ``detail_events=False`` no ``InferenceCompleted`` or ``ToolCall*`` event is (the
    listeners declared the events they act on, none of those).
    """
    run = Run(machine, emit, cancellation, step_events, detail_events)
    given = state
    try:
        state = before_execution(run, state)
        state, resuming = resumed_step(run, state)  # a step suspended for approvals, if any
        while not run.stopping:
            assert state.execution is not None
            number = len(state.execution.step_executions) + 1
            started = run.now()
            if resuming is None:  # a step suspended for approvals has passed BeforeStep
                state = before_step(run, state, number, started)
                if run.stopping:  # set by before_step
                    break  # type: ignore[unreachable]  # mypy keeps the while's narrowing
            state = yield from step(run, state, number, started, resuming)
            resuming = None
            if progress and not run.stopping:
                yield Progress(state)
        return after_execution(run, state)
    except Exception as exc:
        # Failures inside the run are recorded, not raised: what escapes is the engine's
        # own error, which a state built by hand with a value of another type causes
        # (``attrs.evolve(state, goal="...")``). Said so, naming the field: checking every
        # given state before running would cost each run its whole history's walk.
        problem = unrecordable(given)
        if problem is None:
            raise
        raise ConfigurationError(
            f"the state given to the run cannot be recorded: {problem}"
        ) from exc
