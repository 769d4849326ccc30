"""Regressing a genuine run against the agent that made it finds no change (issue 18)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from runs import loop_of, perform, scenarios

from agents.runfiles import load_record
from agents.testing.regression import _regress_one, regress
from agents.testing.regression_fast import same_run


@settings(max_examples=60, deadline=None)
@given(scenarios)
def test_the_agent_that_made_a_run_tells_its_story_again(scenario):
    """Random runs over every feature (approvals, steering, follow-ups, goals, sub-agents,
    compaction, structured output, failures): the same agent, with a fresh clock and ids
    like the recording's, gives the same JSON byte for byte; with other tools answers
    from the record, the same story."""
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "run.jsonl"
        perform(scenario, log)
        report = regress(loop_of(scenario), [log], exact=True)
        assert report.ok, report.summary()
        assert regress(loop_of(scenario), [log], tools="record").ok


@settings(max_examples=60, deadline=None)
@given(scenarios)
def test_the_short_way_vouches_only_for_what_the_general_way_finds_the_same(scenario):
    """Random runs over every feature: wherever ``regression_fast.same_run`` says a run
    went the same way, the general way (the record read whole) says so too, with the
    same final state."""
    with tempfile.TemporaryDirectory() as folder:
        log = Path(folder) / "run.jsonl"
        perform(scenario, log)
        state = same_run(loop_of(scenario), None, log.read_bytes())
        if state is None:
            return
        outcome, expected = _regress_one(
            loop_of(scenario), None, str(log), load_record(str(log)), "record", False, None
        )
        assert outcome.same
        assert state.to_json() == expected.to_json()
