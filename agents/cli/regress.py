"""``agents regress``: recorded runs through new agent code, without calling a model.

Exit 0 when every run went as recorded, 1 when one changed, 2 for bad input (a target that
is no agent, a file that is no recording)."""

from __future__ import annotations

import argparse
import os
from typing import Any, TextIO

from agents.cli.common import (
    DIFFERENT,
    OK,
    load_attribute,
    refuse_overwriting,
    write_atomically,
)

__all__ = ["regress"]


def regress(args: argparse.Namespace, out: TextIO) -> int:
    """``agents regress MODULE:ATTR|FILE RUNS... [--tools live|record] [--json] [--report
    OUT.html] [--continue-with MODEL] [--exact] [--registry MODULE:ATTR]``."""
    from agents.errors import ConfigurationError
    from agents.testing.regression import regress as run_regression

    if args.report:
        refuse_overwriting(args.report, list(args.runs), (".jsonl", ".json"))
    agent = agent_of(args.target)
    registry = load_attribute(args.registry) if args.registry else None
    continue_with = None
    if args.continue_with:
        from agents.drivers.litellm import LiteLLMDriver

        continue_with = LiteLLMDriver(args.continue_with)
    try:
        report = run_regression(
            agent,
            args.runs,
            tools=args.tools,
            exact=args.exact,
            continue_with=continue_with,
            registry=registry,
        )
    except TypeError as exc:
        raise ConfigurationError(str(exc)) from None
    if args.report:
        write_atomically(args.report, report.to_html())
    out.write(report.to_json() if args.json else report.summary())
    out.write("\n")
    return OK if report.ok else DIFFERENT


def agent_of(target: str) -> Any:
    """The agent a command names: a definition file, or ``MODULE:ATTR`` holding an
    ``AgentLoop``, a ``(loop, state)`` pair, an ``AgentDefinition``, or a function
    returning one of them (as ``regress`` takes it)."""
    from agents.definitions import SUFFIXES, AgentDefinition
    from agents.errors import ConfigurationError
    from agents.shell.loop import AgentLoop, loop_and_state

    if os.path.splitext(target)[1].lower() in SUFFIXES:
        return AgentDefinition.load(target)
    found = load_attribute(target)
    if callable(found) and not isinstance(found, AgentLoop | AgentDefinition):
        try:
            found = found()
        except Exception as exc:  # the user's factory may fail in any way
            raise ConfigurationError(f"{target}() failed: {type(exc).__name__}: {exc}") from None
    pair = loop_and_state(found)
    if pair is not None:
        return pair
    if not isinstance(found, AgentLoop | AgentDefinition):
        raise ConfigurationError(
            f"{target} is not an AgentLoop, a (loop, state) pair or an AgentDefinition "
            "(or a function making one)"
        )
    return found
