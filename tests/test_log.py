"""Logging (docs/design/events.md): structlog when the application set it up, silence otherwise, no
secrets."""

from __future__ import annotations

import structlog
from helpers import add, initial, make_loop
from structlog.testing import capture_logs

from agents import tool
from agents.shell.log import event_name
from agents.testing import call, capture_events, reply


def test_silent_when_structlog_is_not_configured(capsys):
    """With ``logger=None`` and no structlog set-up, a run prints nothing."""
    structlog.reset_defaults()
    assert not structlog.is_configured()
    make_loop(call("add", a=1, b=2), reply("3")).run(initial())
    assert capsys.readouterr() == ("", "")
    assert not structlog.is_configured()  # the library never configures structlog


def test_logs_through_the_library_logger_when_configured():
    """Run-level events log at info, step-level ones at debug, with the run's ids."""
    with capture_logs() as logs:
        final = make_loop(call("add", a=1, b=2), reply("3")).run(initial())
    names = [(entry["event"], entry["log_level"]) for entry in logs]
    assert names[0] == ("execution_started", "info")
    assert ("tool_call_completed", "debug") in names
    assert names[-1] == ("execution_completed", "info")
    assert all(entry["agent_id"] == final.agent_id for entry in logs)
    assert all(entry["execution_id"] == final.execution.execution_id for entry in logs)
    steps = {entry["step"] for entry in logs if entry["event"] == "step_completed"}
    assert steps == {1, 2}


def test_failures_log_at_warning():
    """A failed run logs ``execution_failed`` at warning."""
    with capture_logs() as logs:
        make_loop(call("add", a=1, b=2)).run(initial())
    failed = [entry for entry in logs if entry["event"] == "execution_failed"]
    assert failed and failed[0]["log_level"] == "warning"
    assert "ScriptExhausted" in failed[0]["error"]


def test_an_explicit_logger_is_used_as_given():
    """``logger=`` takes any structlog-like logger (one without ``is_enabled_for`` too)."""
    records: list[tuple[str, str, dict]] = []

    class Logger:
        def debug(self, event, **fields):
            records.append(("debug", event, fields))

        def info(self, event, **fields):
            records.append(("info", event, fields))

        def warning(self, event, **fields):
            records.append(("warning", event, fields))

    make_loop(reply("x"), logger=Logger()).run(initial())
    assert records[0][:2] == ("info", "execution_started")
    assert ("debug", "step_started") in [r[:2] for r in records]
    assert records[-1][2]["status"] == "completed"


def test_levels_the_logger_filters_out_are_not_built():
    """With debug filtered out (and no listener) no step-level event is logged or built."""
    import logging

    structlog.configure(
        processors=[structlog.testing.LogCapture()],
        wrapper_class=structlog.make_filtering_bound_logger(logging.INFO),
    )
    capture = structlog.get_config()["processors"][0]
    try:
        make_loop(call("add", a=1, b=2), reply("3")).run(initial())
    finally:
        structlog.reset_defaults()
    names = [entry["event"] for entry in capture.entries]
    assert names == ["execution_started", "stop_signal_received", "execution_completed"]


def test_secrets_in_arguments_never_reach_logs_or_events():
    """Tool arguments are not logged; listeners receive records, and the JSON is redacted."""

    @tool
    def login(user: str, password: str) -> str:
        """Log in."""
        return "ok"

    events = capture_events()
    with capture_logs() as logs:
        final = make_loop(
            call("login", user="ann", password="hunter2"),
            reply("in"),
            tools=[login, add],
            listeners=[events],
        ).run(initial())
    assert "hunter2" not in repr(logs)
    assert "hunter2" not in final.to_json()


def test_a_failing_listener_is_logged_at_warning():
    """A non-critical listener that raises is logged, and the run goes on."""

    def broken(event):
        raise RuntimeError("listener bug")

    with capture_logs() as logs:
        make_loop(reply("x"), listeners=[broken]).run(initial())
    warnings = [entry for entry in logs if entry["event"] == "listener_failed"]
    assert warnings and warnings[0]["log_level"] == "warning"
    assert "listener bug" in warnings[0]["error"]


def test_event_names_are_snake_case():
    """Log event names derive from the event classes."""
    events = capture_events()
    make_loop(reply("x"), listeners=[events]).run(initial())
    assert [event_name(e) for e in events.events][:2] == ["execution_started", "step_started"]
