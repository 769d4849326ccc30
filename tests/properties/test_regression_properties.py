"""Regressing a genuine run against the agent that made it finds no change (issue 18)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given, settings
from runs import loop_of, perform, scenarios

from agents.testing.regression import regress


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
