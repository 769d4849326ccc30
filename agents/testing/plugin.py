"""The pytest plugin (registered through the ``pytest11`` entry point as ``agents``).

It only adds fixtures — nothing runs, and nothing changes for test suites that do not ask for
them:

- ``agent_clock``: a ``TickingClock`` (1 ms per reading from 2025-01-01 UTC);
- ``agent_ids``: ``SequentialIds()``;
- ``scripted_loop``: a factory ``scripted_loop(*steps, tools=(), **options)`` returning an
  ``AgentLoop`` over a ``ScriptedDriver`` with that clock and those ids;
- ``captured_events``: an ``EventRecorder`` (pass it in ``listeners=``);
- ``scripted_loops``: like ``scripted_loop``, but session-scoped, so it works in tests that
  Hypothesis runs with ``@given`` (function-scoped fixtures are not reset between the
  examples of one test, and Hypothesis refuses them); every loop it builds has a clock and
  ids of its own, so every example starts from the same time and ids.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agents.drivers.scripted import ScriptedDriver, ScriptStep
from agents.shell.loop import AgentLoop
from agents.testing.clocks import SequentialIds, TickingClock
from agents.testing.events import EventRecorder

__all__ = ["agent_clock", "agent_ids", "captured_events", "scripted_loop", "scripted_loops"]


@pytest.fixture
def agent_clock() -> TickingClock:
    """A deterministic clock: 2025-01-01T00:00:00Z, then 1 ms later at every reading."""
    return TickingClock()


@pytest.fixture
def agent_ids() -> SequentialIds:
    """Deterministic ids: ``agent-1``, ``execution-1``, ``step-1``, ``tool-1``, …"""
    return SequentialIds()


@pytest.fixture
def captured_events() -> EventRecorder:
    """A listener keeping every event of the runs it is given to."""
    return EventRecorder()


@pytest.fixture
def scripted_loop(agent_clock: TickingClock, agent_ids: SequentialIds) -> Callable[..., AgentLoop]:
    """``scripted_loop(*steps, tools=(), **options)``: a loop over a scripted model."""

    def build(*steps: ScriptStep, tools: Any = (), **options: Any) -> AgentLoop:
        options.setdefault("clock", agent_clock)
        options.setdefault("ids", agent_ids)
        return AgentLoop(ScriptedDriver(steps), tools=tools, **options)

    return build


@pytest.fixture(scope="session")
def scripted_loops() -> Callable[..., AgentLoop]:
    """``scripted_loops(*steps, tools=(), **options)``: a loop over a scripted model with a
    new ``TickingClock`` and new ``SequentialIds`` (safe under ``@given``)."""

    def build(*steps: ScriptStep, tools: Any = (), **options: Any) -> AgentLoop:
        options.setdefault("clock", TickingClock())
        options.setdefault("ids", SequentialIds())
        return AgentLoop(ScriptedDriver(steps), tools=tools, **options)

    return build
