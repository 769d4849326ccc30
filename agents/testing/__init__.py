"""Deterministic doubles and helpers for testing agents (docs/design/testing.md).

Hypothesis strategies live in ``agents.testing.strategies`` (the only module importing
hypothesis), so importing this package does not need hypothesis. ``regress`` (regression
tests on recorded runs, ``agents.testing.regression``) is loaded when first used.
"""

from typing import TYPE_CHECKING, Any

from agents.drivers.function import FunctionDriver
from agents.drivers.scripted import ScriptedDriver, ScriptStep, call, calls, fail, reply
from agents.testing.clocks import FixedClock, SequentialIds, TickingClock
from agents.testing.events import EventRecorder, capture_events
from agents.testing.invariants import assert_invariants, check_invariants

__all__ = [
    "EventRecorder",
    "FixedClock",
    "FunctionDriver",
    "RegressionReport",
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
    "regress",
    "reply",
]

if TYPE_CHECKING:  # loaded on first use (below); named here for type checkers and the docs
    from agents.testing.regression import RegressionReport, regress

_LAZY = {"regress", "RegressionReport"}  # they bring the audit log and the run files


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from agents.testing import regression

        return getattr(regression, name)
    raise AttributeError(f"module 'agents.testing' has no attribute {name!r}")
