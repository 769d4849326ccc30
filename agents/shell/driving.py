"""Driving the step machine: performing its effects until it returns (docs/design/index.md).

``drive`` is the one loop over effects that every blocking runner uses (``AgentLoop.run``
and ``iterate``, the durable runner, the replay); ``adrive`` is the same loop for the
async runners (``arun``, ``aiterate``; Python needs an ``async def`` to await). What differs
between runners is how an effect is performed: a ``Performer`` says it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Generator, Iterator
from typing import Any, Protocol, cast

from agents.core.machine import Effect
from agents.records.effects import Failed, Infer, InvokeTools, Progress
from agents.records.inference import InferenceResponse
from agents.records.state import AgentState
from agents.records.step import ToolExecution

__all__ = ["AsyncPerformer", "Performer", "adrive", "drive"]

Machine = Generator[Effect, Any, AgentState]


class Performer(Protocol):
    """How a blocking runner performs effects: the model's answer (or the failure as
    data), a tool batch's executions in call order (or ``Failed``)."""

    def infer(self, effect: Infer) -> InferenceResponse | Failed: ...

    def invoke(self, effect: InvokeTools) -> tuple[ToolExecution, ...] | Failed: ...

    def close(self) -> None: ...


class AsyncPerformer(Protocol):
    """``Performer`` for an event loop."""

    def infer(self, effect: Infer) -> Awaitable[InferenceResponse | Failed]: ...

    def invoke(self, effect: InvokeTools) -> Awaitable[tuple[ToolExecution, ...] | Failed]: ...

    def close(self) -> None: ...


def drive(machine: Machine, performer: Performer, *, progress: bool) -> Iterator[AgentState]:
    """Perform ``machine``'s effects with ``performer`` until it returns; yields the state
    of every ``Progress`` (when ``progress``) and then the final state."""
    infer, invoke = performer.infer, performer.invoke
    try:
        result: Any = None
        while True:
            try:
                effect = machine.send(result)
            except StopIteration as done:
                yield done.value
                return
            if type(effect) is Infer:
                result = infer(effect)
            elif type(effect) is InvokeTools:
                result = invoke(effect)
            else:
                result = None
                if progress:
                    yield cast(Progress, effect).state
    finally:
        performer.close()
        machine.close()


async def adrive(
    machine: Machine, performer: AsyncPerformer, *, progress: bool
) -> AsyncIterator[AgentState]:
    """``drive`` in an event loop."""
    infer, invoke = performer.infer, performer.invoke
    try:
        result: Any = None
        while True:
            try:
                effect = machine.send(result)
            except StopIteration as done:
                yield done.value
                return
            if type(effect) is Infer:
                result = await infer(effect)
            elif type(effect) is InvokeTools:
                result = await invoke(effect)
            else:
                result = None
                if progress:
                    yield cast(Progress, effect).state
    finally:
        performer.close()
        machine.close()
