"""Deterministic doubles and helpers for testing agents (SPEC §15).

Hypothesis strategies live in ``agents.testing.strategies`` (the only module importing
hypothesis), so importing this package does not need hypothesis.
"""

from agents.drivers.function import FunctionDriver
from agents.drivers.scripted import ScriptedDriver, ScriptStep, call, calls, fail, reply
from agents.testing.clocks import FixedClock, SequentialIds, TickingClock
from agents.testing.events import EventRecorder, capture_events
from agents.testing.invariants import assert_invariants, check_invariants

__all__ = [
    "EventRecorder",
    "FixedClock",
    "FunctionDriver",
    "ScriptStep",
    "ScriptedDriver",
    "SequentialIds",
    "TickingClock",
    "assert_invariants",
    "call",
    "calls",
    "capture_events",
    "check_invariants",
    "fail",
    "reply",
]
