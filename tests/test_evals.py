"""Evaluations (docs/how-to/evals.md): datasets from files, scorers, trials run and scored,
budgets, failures recorded, runs kept for re-scoring with no model call, comparisons."""

from __future__ import annotations

import json
import random

import pytest
from helpers import add
from llm_server import LLMServer, answer

from agents import (
    AgentLoop,
    InferenceRequest,
    InferenceResponse,
    LiteLLMDriver,
    ToolCall,
    Usage,
)
from agents.evals import Budget, Case, Dataset, DatasetError, compare, evaluate, rescore
from agents.evals import scorers as s
from agents.testing import FunctionDriver


def arithmetic(request: InferenceRequest):
    """Adds the two numbers of the question with the add tool, then says the sum."""
    last = request.messages[-1]
    if last.role.value == "tool":
        return f"The sum is {last.text}."
    a, b = (int(x) for x in last.text.split("+"))
    return [ToolCall(id="c1", name="add", arguments={"a": a, "b": b})]


CASES = [Case("small", "1+2", "The sum is 3."), Case("big", "40+2", "The sum is 42.")]


def adder() -> AgentLoop:
    return AgentLoop(FunctionDriver(arithmetic), tools=[add])


def test_scorers_read_the_final_state():
    report = evaluate(
        adder(),
        Dataset(CASES, name="sums"),
        [
            s.equals(),
            s.contains("sum"),
            s.matches(r"\d+\.$"),
            s.tool_called("add", where=lambda args: args["b"] > 0),
            s.trajectory(["add"]),
            s.completed,
            s.within(steps=2),
            s.invariant(),
        ],
        trials=3,
    )
    assert [case.name for case in report.cases] == ["small", "big"]
    assert report.pass_rate == 1.0 and report.run == 6
    small = report.case("small")
    assert small.passes == 3 and small.pass_at_k(2) == 1.0 and small.pass_hat_k(3) == 1.0
    assert small.interval == (pytest.approx(0.43850, abs=1e-5), 1.0)
    failing = evaluate(adder(), CASES, [s.within(steps=1), s.json_schema({"type": "object"})])
    (trial,) = failing.case("big").trials
    scores = dict(trial.scores)
    assert not trial.passed and scores["within"].explanation == "steps 2 > 1"
    assert not scores["json_schema"].passed


def test_the_report_is_the_same_json_for_the_same_trials():
    first = evaluate(adder(), CASES, [s.equals()], trials=2).to_json()
    assert first == evaluate(adder(), CASES, [s.equals()], trials=2, concurrency=1).to_json()
    data = json.loads(first)
    assert data["passes"] == 4 and data["cases"][1]["interval"][1] == 1.0


def test_a_failed_run_and_a_raising_scorer_fail_their_trial_and_nothing_else():
    def flaky(request):
        if "40" in request.messages[-1].text:
            raise ConnectionError("the provider is down")
        return arithmetic(request)

    def broken(case, state):
        raise ValueError("the scorer broke")

    report = evaluate(AgentLoop(FunctionDriver(flaky), tools=[add]), CASES, [s.equals(), broken])
    small, big = (case.trials[0] for case in report.cases)
    assert "scorer 'broken' raised ValueError: the scorer broke" in small.error
    assert big.error.startswith("the run failed:") and "provider is down" in big.error
    assert report.passes == 0 and report.run == 2


def test_a_spent_budget_starts_no_more_trials_and_the_report_says_which():
    free = evaluate(adder(), CASES, [s.equals()], trials=2, budget=Budget(tokens=10))
    assert free.not_run == []  # no usage reported: nothing spent

    def costly(request):
        return InferenceResponse(content="ok", usage=Usage(input_tokens=5, cost=0.1))

    agent = AgentLoop(FunctionDriver(costly))
    report = evaluate(
        agent, CASES, [s.completed], trials=4, concurrency=1, budget=Budget(cost=0.25)
    )
    assert report.run == 3 and report.passes == 3
    assert report.not_run == [("small", 3), ("big", 0), ("big", 1), ("big", 2), ("big", 3)]
    assert json.loads(report.to_json())["not_run"][0] == ["small", 3]
    tokens = evaluate(agent, CASES, [s.completed], concurrency=1, budget=Budget(tokens=5))
    assert tokens.not_run == [("big", 0)]


def test_runs_kept_in_a_folder_are_rescored_with_no_model_call(tmp_path):
    calls = []

    def counted(request):
        calls.append(1)
        return arithmetic(request)

    agent = AgentLoop(FunctionDriver(counted), tools=[add])
    report = evaluate(agent, Dataset(CASES, name="sums"), [s.equals()], trials=2, out=tmp_path)
    made = len(calls)
    assert made == 8 and (tmp_path / "report.json").read_text() == report.to_json()
    again = rescore(tmp_path, [s.equals()])
    assert len(calls) == made and again.to_json() == report.to_json()
    assert rescore(tmp_path, [s.equals()]).to_json() == again.to_json()
    other = rescore(tmp_path, [s.contains("42")])
    assert [c.pass_rate for c in other.cases] == [0.0, 1.0] and len(calls) == made
    assert compare(tmp_path, other).cases[0].difference == -1.0


def test_a_dataset_file_names_the_file_line_and_field_of_an_error(tmp_path):
    good = tmp_path / "cases.yaml"
    good.write_text(
        "- name: small\n  input: 1+2\n  expected: The sum is 3.\n- name: big\n  input: 40+2\n"
    )
    dataset = Dataset.load(good)
    assert dataset.name == "cases" and [c.name for c in dataset.cases] == ["small", "big"]
    lines = tmp_path / "cases.jsonl"
    first = '{"name": "a", "input": "1+2", "metadata": {"k": 1}}'
    lines.write_text(first + '\n\n{"name": "b", "input": ["x", "y"]}\n')
    assert [c.input for c in Dataset.load(lines).cases] == ["1+2", ("x", "y")]
    bad = [
        ("- name: a\n  input: 1\n  colour: red\n", "cases.yaml:3: colour: unknown"),
        ("- name: a\n- name: b\n  input: x\n", "cases.yaml:1: input: missing"),
        ("- name: a\n  input: x\n- name: a\n  input: y\n", "cases.yaml:3: name: 'a' names"),
        ("name: a\n", "cases.yaml:1: expected a list of cases"),
        ("- name: a\n  input: [1\n", "cases.yaml:3: not valid YAML"),
        ('{"name": "a", "input": "x"}\n{"name": 1, "input": "y"}\n', "cases.jsonl:2: name:"),
        (
            '{"name": "a", "input": {"state": {"kind": "AgentState"}}}\n',
            "cases.jsonl:1: input.state",
        ),
        ('{"name": "a", "input": "x"}\n{"name": "b", "input": NaN}\n', "cases.jsonl:2: "),
    ]
    for text, said in bad:
        path = tmp_path / (said.split(":")[0])
        path.write_text(text)
        with pytest.raises(DatasetError) as caught:
            Dataset.load(path)
        assert str(caught.value).startswith(str(tmp_path / said)), (str(caught.value), said)


def test_an_eval_through_litellm_against_a_local_server():
    """A seeded stochastic model behind the chat-completions server, reached by
    LiteLLMDriver over HTTP: the trials' answers are scored as they came."""
    rng = random.Random(5)
    answers = [rng.random() < 0.7 for _ in range(10)]
    with LLMServer() as server:
        server.plan(*(answer("yes" if right else "no") for right in answers))
        driver = LiteLLMDriver("openai/test", api_base=server.base_url, api_key="k", num_retries=0)
        report = evaluate(
            AgentLoop(driver), [Case("q", "Is it?", "yes")], [s.equals()], trials=10, concurrency=1
        )
    assert [trial.passed for trial in report.cases[0].trials] == answers
    assert report.cases[0].passes == sum(answers)
