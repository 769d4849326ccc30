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
  ids of its own, so every example starts from the same time and ids;
- ``agent_recording``: with the marker ``@pytest.mark.agent_recordings(FOLDER)``, the test
  runs once per recorded run in ``FOLDER`` (relative to the test's file), and
  ``agent_recording.check(agent)`` fails when the agent now behaves differently
  (``agents.testing.regress``); ``pytest --agents-accept`` writes the new runs over the
  recordings instead, so that the change shows in a code review.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agents.drivers.scripted import ScriptedDriver, ScriptStep
from agents.shell.loop import AgentLoop
from agents.testing.clocks import SequentialIds, TickingClock
from agents.testing.events import EventRecorder

__all__ = [
    "Recording",
    "agent_clock",
    "agent_ids",
    "agent_recording",
    "captured_events",
    "pytest_addoption",
    "pytest_configure",
    "pytest_generate_tests",
    "scripted_loop",
    "scripted_loops",
]

MARKER = "agent_recordings"


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--agents-accept``: recordings that changed are rewritten with the new runs."""
    parser.getgroup("agents").addoption(
        "--agents-accept",
        action="store_true",
        help="write the new runs over the recordings that changed (agent_recording)",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Declare the marker."""
    config.addinivalue_line(
        "markers",
        f"{MARKER}(folder): run the test once per recorded run in folder (agent_recording)",
    )


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """One test per recording of the marker's folder, for tests asking for
    ``agent_recording``."""
    if "agent_recording" not in metafunc.fixturenames:
        return
    marker = metafunc.definition.get_closest_marker(MARKER)
    if marker is None or not marker.args:
        raise pytest.UsageError(
            f"{metafunc.definition.nodeid}: agent_recording needs @pytest.mark.{MARKER}(FOLDER)"
        )
    from agents.testing.regression import recording_files  # only for the suites asking

    folder = Path(metafunc.definition.path).parent / str(marker.args[0])
    found = list(recording_files(folder))
    if not found:
        raise pytest.UsageError(f"{folder}: no recordings (*.jsonl, *.json) in this folder")
    ids = [str(p.relative_to(folder)) for p in found]
    metafunc.parametrize("agent_recording", found, ids=ids, indirect=True)


class Recording:
    """One recorded run, for a test: ``check(agent, **options)`` regresses it (options as
    ``regress`` takes them) and fails the test on a change — or, under ``--agents-accept``,
    writes the new run over the recording."""

    def __init__(self, path: Path, accepting: bool) -> None:
        self.path = path
        self.accepting = accepting

    def check(self, agent: Any, **options: Any) -> Any:
        """The ``RegressionReport`` of this recording through ``agent``."""
        from agents.testing.regression import NotAccepted, accept, regress

        if self.accepting:
            try:
                return accept(agent, self.path, **options)
            except NotAccepted as exc:  # one line saying what to do, not a traceback
                pytest.fail(str(exc), pytrace=False)
        report = regress(agent, [self.path], **options)
        if not report.ok:
            pytest.fail(
                f"{report.summary()}\n\n(pytest --agents-accept writes the new run over the "
                "recording)",
                pytrace=False,
            )
        return report

    def __repr__(self) -> str:
        return f"Recording({str(self.path)!r})"


@pytest.fixture
def agent_recording(request: pytest.FixtureRequest) -> Recording:
    """A recorded run of the folder the test's ``agent_recordings`` marker names."""
    return Recording(Path(request.param), bool(request.config.getoption("--agents-accept")))


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
