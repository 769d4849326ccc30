"""Evaluations (docs/how-to/evals.md): datasets from files, scorers, trials run and scored,
budgets, failures recorded, runs kept for re-scoring with no model call, comparisons."""

from __future__ import annotations

import json
import random
import runpy
from pathlib import Path

import pytest
from helpers import add
from llm_server import LLMServer, answer

from agents import (
    AgentLoop,
    AgentState,
    ImagePart,
    InferenceRequest,
    InferenceResponse,
    LiteLLMDriver,
    ToolCall,
    Usage,
)
from agents.errors import InvalidArgument, InvalidType
from agents.evals import Budget, Case, Dataset, DatasetError, compare, evaluate, rescore
from agents.evals import scorers as s
from agents.testing import FunctionDriver

ROOT = Path(__file__).resolve().parent.parent


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


@pytest.mark.parametrize(
    ("expected", "answer", "passed"),
    [
        (1, "true", False),  # Python's True == 1 passed these three
        (True, "1", False),
        ({"ok": 0}, '{"ok": false}', False),
        ([1, 2], "[1.0, 2]", True),  # JSON has one kind of number
        (True, "true", True),
        ({"a": [1, {"b": None}]}, '{"a": [1, {"b": null}]}', True),
    ],
)
def test_equals_tells_true_and_false_from_numbers(expected, answer, passed):
    state = AgentLoop(FunctionDriver(lambda request: answer)).run(
        AgentState.initial(messages=["q"])
    )
    assert s.equals()(Case("c", "q", expected), state).passed is passed


def test_equals_refuses_an_expected_value_no_json_holds_when_made():
    """``equals({1, 2})`` was taken, and every trial it scored then failed, each saying
    "scorer 'equals' raised NestingError"; it is refused where it is given, naming it."""
    for value in ({1, 2}, float("nan"), object(), {"a": b"bytes"}, {1: "key"}):
        with pytest.raises(InvalidArgument, match=r"^equals: the expected value: "):
            s.equals(value)
    assert s.equals({"a": (1, 2)})(Case("c", "q"), _answered('{"a": [1, 2]}')).passed


def _answered(answer: str) -> AgentState:
    return AgentLoop(FunctionDriver(lambda request: answer)).run(AgentState.initial(messages=["q"]))


def test_evaluate_refuses_cases_and_scorers_it_could_not_run_when_called():
    """``evaluate(loop, [5], ...)`` raised a bare ``AttributeError``; two cases of one name
    in a list were taken (a comparison matches cases by name); a lone scorer raised a
    bare ``TypeError``, a text was read as scorers named "str", ``[5]`` and
    ``initial=5`` were taken and failed every trial. Each is refused by ``evaluate``."""
    for dataset, said in (
        (5, "evaluate: dataset is a list, not int"),
        ("ab", "evaluate: dataset is a list, not the text 'ab'"),
        ([5], "expected a Case, got int"),
        ([Case("a", "1+2"), Case("a", "2+2")], "two cases are named 'a'"),
    ):
        with pytest.raises((InvalidType, DatasetError), match=said):
            evaluate(adder(), dataset, [s.equals()])
    for scorers, said in (
        (s.equals(), "scorers is a list, not _Named"),
        ("equals", "scorers is a list, not the text 'equals'"),
        ([5], "a scorer is a function of a case and a state, not 5"),
    ):
        with pytest.raises(InvalidType, match=said):
            evaluate(adder(), CASES, scorers)
    with pytest.raises(InvalidType, match="initial is a function of a case, not int"):
        evaluate(adder(), CASES, [s.equals()], initial=5)
    with pytest.raises(InvalidType, match="a dataset's cases is a list, not int"):
        Dataset(5)


def test_within_refuses_a_limit_nothing_is_past():
    """``within(cost=nan)`` passed every run (nothing compares above NaN)."""
    for limits in ({"cost": float("nan")}, {"steps": 2.5}, {"tokens": "10"}, {"cost": -1}):
        with pytest.raises(InvalidArgument, match=f"within: {next(iter(limits))}"):
            s.within(**limits)


def test_the_report_is_the_same_json_for_the_same_trials():
    first = evaluate(adder(), CASES, [s.equals()], trials=2).to_json()
    assert first == evaluate(adder(), CASES, [s.equals()], trials=2, concurrency=1).to_json()
    data = json.loads(first)
    assert data["passes"] == 4 and data["cases"][1]["interval"][1] == 1.0


def test_a_score_is_a_number_not_a_text_or_a_switch():
    """``Score("0.9", True)`` was taken as 0.9 and ``Score(True, True)`` as 1.0: the value
    was made a float before the check that refuses what is no number could see it, so a
    scorer's text (a judge's words, say) counted as a score. Numbers still pass, an int as
    a float; a scorer that gives anything else fails its trial, saying so."""
    from agents.evals import Score

    for wrong in ("0.9", True, b"1", None):
        with pytest.raises(InvalidType, match="a score's value is a number, not"):
            Score(wrong, True)
    assert Score(1, True).value == 1.0 and type(Score(1, True).value) is float
    assert Score(0.25, False) == Score(0.25, False)
    with pytest.raises(InvalidArgument, match="a score's value is a number in"):
        Score(1.5, True)

    def wordy(case, state):
        return Score("0.9", True, "close enough")

    (trial,) = evaluate(adder(), CASES[:1], [wordy]).cases[0].trials
    assert not trial.passed and "scorer 'wordy' raised InvalidType" in trial.error


def test_a_score_holds_what_its_report_reads_back(tmp_path):
    """``Score(1.0, True, 5)`` was taken, and its evaluation's report then failed to load
    ("explanation is not text"): written, it could not be read back; ``Score(0.5, "yes")``
    raised attrs' bare ``TypeError``, its message a repr of the field. Both are
    ``InvalidType``s naming the field; a scorer giving one fails its trial, and the report
    of the evaluation loads."""
    from agents.evals import EvalReport, Score

    for made, field in (
        (lambda: Score(1.0, True, 5), "explanation"),
        (lambda: Score(1.0, True, None), "explanation"),
        (lambda: Score(0.5, "yes"), "passed"),
        (lambda: Score(0.5, 1), "passed"),
    ):
        with pytest.raises(InvalidType, match=f"a score's {field} is a"):
            made()

    def counted(case, state):
        return Score(1.0, True, len(case.name))

    report = evaluate(adder(), CASES, [counted], out=tmp_path / "run")
    assert report.passes == 0 and "raised InvalidType" in report.cases[0].trials[0].error
    loaded = EvalReport.load(tmp_path / "run")
    errors = [[trial.error for trial in case.trials] for case in report.cases]
    assert [[trial.error for trial in case.trials] for case in loaded.cases] == errors


def test_a_case_holds_only_what_its_evaluation_folder_reads_back(tmp_path):
    """A ``Case`` made in code took what a dataset file may not hold: a name that is no
    text or is empty, and metadata that is no mapping, were written into the evaluation's
    folder, which ``rescore`` (and, for a name, ``EvalReport.load``) then refused; an input
    that is no text or part made ``evaluate(..., out=...)`` raise a bare
    ``AttributeError``. Each is refused where the case is made, naming the field."""
    wrong = (
        (lambda: Case(5, "1+2"), InvalidType, "a case's name is text, not int"),
        (lambda: Case("", "1+2"), InvalidArgument, "a case's name is not empty"),
        (lambda: Case("n", 5), InvalidType, "a case's input: content is text"),
        (lambda: Case("n", None), InvalidType, "a case's input: content is text"),
        (lambda: Case("n", {"a": 1}), InvalidType, "a case's input: content is text"),
        (lambda: Case("n", ["1+2", 5]), InvalidType, "not a list holding int"),
        (lambda: Case("n", []), InvalidArgument, "a case's input is text"),
        (lambda: Case("n", "1+2", metadata=[1]), InvalidType, "metadata is a mapping, not list"),
        (lambda: Dataset([], name=["d"]), InvalidType, "a dataset's name is text, not list"),
    )
    for made, error, words in wrong:
        with pytest.raises(error, match=words):
            made()
    cases = [Case("small", ["1+2"], "The sum is 3.", {"tag": "x"}), CASES[1]]
    report = evaluate(adder(), cases, [s.equals()], out=tmp_path / "run")
    assert report.passes == 2
    assert rescore(tmp_path / "run", [s.equals()]).to_json() == report.to_json()


def test_a_scorer_or_gate_read_from_a_configuration_is_taken_as_written_or_refused():
    """``contains(case_sensitive="false")`` compared case by case (a non-empty text is
    true), and ``trajectory(..., ordered="false")`` asked for the order; ``matches(5)`` and
    ``assert_pass_rate(report, "0.9")`` raised bare ``TypeError``s, ``tool_called(["add"])``
    never passed, and ``assert_pass_rate(report, True)`` asked for a rate of 1. Each is an
    ``InvalidType`` naming the argument."""
    from agents.evals.gates import assert_pass_rate

    report = evaluate(adder(), CASES, [s.contains("THE SUM", case_sensitive=False)])
    assert report.passes == 2
    for made, words in (
        (lambda: s.contains("THE SUM", case_sensitive="false"), "case_sensitive is True or"),
        (lambda: s.trajectory(["add"], ordered="false"), "ordered is True or False"),
        (lambda: s.matches(5), "matches: a pattern is text, not int"),
        (lambda: s.tool_called(["add"]), "tool_called: a tool's name is text, not list"),
        (lambda: assert_pass_rate(report, "0.9"), "at_least is a number, not '0.9'"),
        (lambda: assert_pass_rate(report, True), "at_least is a number, not True"),
    ):
        with pytest.raises(InvalidType, match=words):
            made()
    assert_pass_rate(report, 0.1)


def test_a_judge_and_a_comparison_take_their_settings_as_written_or_refuse_them():
    """``judge(driver, 5)`` was taken, and with ``out=`` every trial it scored then failed
    with "raised AttributeError: 'int' object has no attribute 'encode'"; ``compare(...,
    alpha="0.05")`` (and ``assert_not_worse``) raised a bare ``TypeError``. Each is an
    ``InvalidType`` naming the setting, where it is given."""
    from agents.evals.judging import judge

    report = evaluate(adder(), CASES, [s.equals()])
    model = FunctionDriver(lambda request: "never asked")
    for made, words in (
        (lambda: judge(model, 5), "a judge's rubric is text, not int"),
        (lambda: judge(model, "polite", name=None), "a judge's name is text, not NoneType"),
        (lambda: compare(report, report, alpha="0.05"), "alpha is a number, not '0.05'"),
    ):
        with pytest.raises(InvalidType, match=words):
            made()
    assert compare(report, report, alpha=0.1).verdict == "no evidence"


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


def test_a_budget_that_could_never_be_spent_or_compared_is_refused_by_name():
    """A NaN cost was never spent (every comparison with NaN is false: the evaluation ran
    past it), a text of seconds failed mid-run with a bare TypeError, and a mapping for a
    budget with an AttributeError; each is refused before anything runs."""
    for limits, named in (
        ({"cost": float("nan")}, "cost"),
        ({"cost": -0.5}, "cost"),
        ({"seconds": "10"}, "seconds"),
        ({"seconds": float("inf")}, "seconds"),
        ({"tokens": 2.5}, "tokens"),
        ({"tokens": True}, "tokens"),
    ):
        with pytest.raises(InvalidArgument, match=f"budget's {named}"):
            Budget(**limits)
    with pytest.raises(InvalidType, match="budget is a Budget, not dict"):
        evaluate(adder(), CASES, [s.equals()], budget={"tokens": 10})
    assert Budget(tokens=0, cost=0, seconds=0.5) == Budget(0, 0.0, 0.5)


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


@pytest.mark.parametrize(
    ("line", "text", "said"),
    [
        (0, '{"dataset": "sums"}', "not the header"),  # it raised KeyError from the CLI
        (0, '{"dataset": "sums", "trials": "2"}', "not the header"),
        (0, '{"dataset": "sums", "trials": true}', "not the header"),
        (0, '{"dataset": "sums", "trials": 10000000000}', "not the header"),  # counted for ever
        (0, '{"dataset": ["sums"], "trials": 2}', "not the header"),
        (0, "[]", "not the header"),
        (1, '{"name": "small"}', "input: missing"),
        (1, '{"name": 5, "input": "1+2"}', "name: a case's name is text"),
        (1, '{"name": "small", "input": "1+2", "metadata": 5}', "metadata: a mapping"),
        (1, "{nope", "not valid JSON"),
    ],
)
def test_rescore_names_the_line_of_a_folder_that_is_no_evaluation(
    tmp_path, capsys, line, text, said
):
    from agents.cli import main

    evaluate(adder(), Dataset(CASES, name="sums"), [s.equals()], trials=2, out=tmp_path)
    cases = tmp_path / "cases.jsonl"
    lines = cases.read_text().splitlines()
    lines[line] = text
    cases.write_text("\n".join(lines) + "\n")
    with pytest.raises(DatasetError, match=f"cases.jsonl:{line + 1}: .*{said}"):
        rescore(tmp_path, [s.equals()])
    scorers = tmp_path / "scorers.py"
    scorers.write_text("from agents.evals import scorers as s\nSCORERS = [s.completed]\n")
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(tmp_path))
        assert main(["eval", "rescore", str(tmp_path), "--scorers", "scorers:SCORERS"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("agents eval: ") and err.count("\n") == 1 and said in err


def test_a_report_that_cannot_be_written_names_the_users_path(tmp_path, capsys):
    """``write_html`` (and ``agents eval --report``) into a missing folder named the
    temporary file it was writing (``.r.html.<hex>.part``), a path the user never gave."""
    from agents.cli import main

    report = evaluate(adder(), Dataset(CASES, name="sums"), [s.equals()], out=tmp_path / "out")
    target = tmp_path / "missing" / "r.html"
    with pytest.raises(FileNotFoundError) as raised:
        report.write_html(target)
    assert raised.value.filename == str(target) and ".part" not in str(raised.value)
    (tmp_path / "cases.jsonl").write_text('{"name": "one", "input": "hi"}\n')
    (tmp_path / "answering.py").write_text(
        "from agents import AgentLoop\n"
        "from agents.evals import scorers as s\n"
        "from agents.testing import FunctionDriver\n"
        "AGENT = AgentLoop(FunctionDriver(lambda request: 'hello'))\n"
        "SCORERS = [s.completed]\n"
    )
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(tmp_path))
        command = ["eval", str(tmp_path / "cases.jsonl"), "answering:AGENT"]
        assert main([*command, "--scorers", "answering:SCORERS", "--report", str(target)]) == 2
    err = capsys.readouterr().err
    assert str(target) in err and ".part" not in err and err.count("\n") == 1


def test_a_judge_says_why_it_gave_no_grade_and_a_forged_one_is_refused(tmp_path):
    """A judge whose model keeps answering off the schema fails its trial saying why (it
    said "no grade in its answer"); a recorded judgement edited to ``"passed": "false"``
    is refused when rescored (``bool`` of it was a pass)."""
    off = s.judge(
        FunctionDriver(lambda r: '{"score": 1, "passed": "false", "explanation": ""}'), "r"
    )
    report = evaluate(AgentLoop(FunctionDriver(lambda r: "Paris")), [Case("c", "q")], [off])
    error = report.cases[0].trials[0].error
    assert "passed: expected boolean, got string" in error and "no valid structured" in error
    grade = json.dumps({"score": 0.1, "passed": False, "explanation": "no"})
    judge = s.judge(FunctionDriver(lambda r: grade), "r")
    agent = AgentLoop(FunctionDriver(lambda r: "Paris"))
    report = evaluate(agent, [Case("c", "q")], [judge], out=tmp_path)
    assert report.cases[0].trials[0].scores[0][1].passed is False
    (judged,) = (tmp_path / "judged").glob("*.jsonl")
    judged.write_text(judged.read_text().replace('"passed":false', '"passed":"false"'))
    trial = rescore(tmp_path, [judge]).cases[0].trials[0]
    assert trial.scores[0][1].passed is False
    assert "the judge's grade is not one" in trial.error


def test_two_judges_keep_their_own_judgements(tmp_path):
    """Two judges of one rubric (two models compared) were recorded in one file: the
    second read the first's judgement as its own (a harsh judge passed everything the kind
    one did), and a judge of another rubric had its first judgement called "re-judged
    (the rubric changed)". Each judge's are its own, kept apart by its name."""

    def grader(passed: bool) -> FunctionDriver:
        grade = {"score": float(passed), "passed": passed, "explanation": f"passed={passed}"}
        return FunctionDriver(lambda request: json.dumps(grade))

    judges = [
        s.judge(grader(True), "Is it right?", name="kind"),
        s.judge(grader(False), "Is it right?", name="harsh"),
        s.judge(grader(True), "Is it short?", name="brief"),
    ]
    agent = AgentLoop(FunctionDriver(lambda request: "4"))
    report = evaluate(agent, [Case("c", "2+2", "4")], judges, out=tmp_path, concurrency=1)
    scores = dict(report.cases[0].trials[0].scores)
    assert {name: score.explanation for name, score in scores.items()} == {
        "kind": "passed=True",
        "harsh": "passed=False",
        "brief": "passed=True",
    }
    assert len(list((tmp_path / "judged").glob("*.jsonl"))) == 3
    assert rescore(tmp_path, judges).to_json() == report.to_json()


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("ran", "false", "ran is not true or false"),  # a trial not run was counted as run
        ("trial", "0", "trial is not a whole number"),
        ("error", 5, "error is not text or null"),
        ("scores", "equals", "scores is not an object"),  # it raised AttributeError
    ],
)
def test_a_baseline_report_whose_trial_is_forged_is_refused(tmp_path, field, value, said):
    from agents.errors import StateDecodeError
    from agents.evals import EvalReport

    report = evaluate(adder(), Dataset(CASES, name="sums"), [s.equals()], trials=2)
    data = json.loads(report.to_json())
    data["cases"][0]["trials"][1][field] = value
    path = tmp_path / "report.json"
    path.write_text(json.dumps(data))
    with pytest.raises(StateDecodeError, match=f"report.json: .*'small', trial .*: {said}"):
        compare(path, report)
    read = EvalReport.from_json(report.to_json())  # as written: read
    assert [c.passes for c in read.cases] == [c.passes for c in report.cases]


def test_a_yaml_dataset_reads_yes_no_and_times_as_text(tmp_path):
    """YAML 1.1, as PyYAML reads it, made ``expected: yes`` the boolean true (every trial
    answering "yes" failed), ``1:20`` the number 80, ``012`` ten and ``2024-01-01`` a date
    (a load error); a dataset's scalars are read by YAML 1.2's core schema."""
    path = tmp_path / "answers.yaml"
    path.write_text(
        "- {name: a, input: Is it so, expected: yes}\n"
        "- {name: b, input: when, expected: 1:20}\n"
        "- {name: c, input: x, expected: [no, On, off, 012, 0o12, 0x1F, 1_000, 2024-01-01]}\n"
        "- {name: d, input: x, expected: [true, False, -3, 1.5, .5, 1e3, null, ~]}\n"
    )
    cases = Dataset.load(path).cases
    assert [case.expected for case in cases[:2]] == ["yes", "1:20"]
    assert list(cases[2].expected) == ["no", "On", "off", 12, 10, 31, "1_000", "2024-01-01"]
    assert list(cases[3].expected) == [True, False, -3, 1.5, 0.5, 1000.0, None, None]
    yes = AgentLoop(FunctionDriver(lambda request: "yes"))
    assert evaluate(yes, [cases[0]], [s.equals()]).pass_rate == 1.0


def test_cases_holding_unicode_line_breaks_load_and_rescore(tmp_path):
    """A JSON Lines dataset holding U+2028 or NEL raw in a string (valid JSON) failed to
    load, and an evaluation of such a case could not be rescored: both were split into
    lines with ``str.splitlines``, which splits at those too."""
    path = tmp_path / "cases.jsonl"
    path.write_text(
        json.dumps({"name": "a\u2028b", "input": "x\x85y", "expected": "z"}, ensure_ascii=False)
        + "\n",
        encoding="utf-8",
    )
    loaded = Dataset.load(path)
    assert [(c.name, c.input) for c in loaded.cases] == [("a\u2028b", "x\x85y")]
    agent = AgentLoop(FunctionDriver(lambda request: "z"))
    made = [Case("a\u2028b", "x\x85y", "z")]  # the rescore's own failure, without the load's
    report = evaluate(agent, made, [s.equals()], out=tmp_path / "out")
    assert report.pass_rate == 1.0
    assert rescore(tmp_path / "out", [s.equals()]).to_json() == report.to_json()


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
        ("- name: a\n  input: x\n  expected: .inf\n", "cases.yaml:3: expected: inf is not"),
        ("- name: a\n  input: x\n  metadata: {k: [.nan]}\n", "cases.yaml:3: metadata: nan"),
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


def test_a_dataset_file_holds_images_and_documents_by_path_or_url(tmp_path):
    """A case's input in a file may hold parts, ``{type, path or url, media_type?}``: a
    path is a file in the dataset's folder (or below it), read once and sent to the model
    as its bytes; one outside it (``..``, absolute, a link out), a part that is not one and
    a file that is not its type are a ``DatasetError`` naming the file, line and item."""
    png = b"\x89PNG\r\n\x1a\n" + bytes(64)
    (tmp_path / "images").mkdir()
    (tmp_path / "images" / "cat.png").write_bytes(png)
    (tmp_path / "secret.png").write_bytes(png)
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "images").symlink_to(tmp_path / "images")  # a folder linked in: out of it
    (folder / "cat.png").write_bytes(png)
    (folder / "fake.png").write_bytes(b"not a png")
    good = folder / "cases.yaml"
    good.write_text(
        "- name: cat\n"
        "  input:\n"
        "    - What animal is this?\n"
        "    - {type: image, path: cat.png}\n"
        "    - {type: document, url: 'https://a.test/terms', media_type: application/pdf}\n"
        "  expected: cat\n"
    )
    (case,) = Dataset.load(good).cases
    said: list[str] = []

    def model(request: InferenceRequest) -> str:
        media = [p for p in request.messages[-1].parts if hasattr(p, "media_type")]
        said.append(", ".join(f"{p.media_type} {p.name or p.url}" for p in media))
        return "cat" if media[0].data() == png else "no idea"

    report = evaluate(AgentLoop(FunctionDriver(model)), Dataset.load(good), [s.equals()])
    assert report.cases[0].passes == 1
    assert said == ["image/png cat.png, application/pdf https://a.test/terms"]
    assert case.input[1].blob.sha256 == ImagePart.from_bytes(png, "image/png").blob.sha256
    bad = [
        (
            "{type: image, path: ../secret.png}",
            f"not in the folder of the file naming it ({folder})",
        ),
        (f"{{type: image, path: {tmp_path / 'secret.png'}}}", "not in the folder of the file"),
        ("{type: image, path: images/cat.png}", "not in the folder of the file"),
        ("{type: image, path: fake.png}", "image/png"),
        ("{type: image, path: missing.png}", "No such file"),
        ("{type: video, path: cat.png}", "a part of type image, audio, document, file"),
        ("{type: image, path: cat.png, url: 'https://a.test/x.png'}", "a path or a url"),
        ("{type: image, path: [cat.png]}", "a path or a url"),
        ("{type: image, url: 'ftp://a.test/x.png'}", "http(s)"),
    ]
    for item, words in bad:
        path = folder / "bad.yaml"
        path.write_text(f"- name: a\n  input:\n    - look\n    - {item}\n")
        with pytest.raises(DatasetError) as caught:
            Dataset.load(path)
        message = str(caught.value)
        assert message.startswith(f"{path}:2: input[1]: ") and words in message, message


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


def test_a_judge_grades_through_litellm_and_rescore_reads_its_judgements(tmp_path):
    """The agent and the judge on the local server: the judge's request asks for the grade
    as structured output; rescore reads the recorded judgements (no request) unless the
    rubric changed, which is judged again and said so."""

    def grade(score: float, passed: bool, why: str):
        return answer(json.dumps({"score": score, "passed": passed, "explanation": why}))

    with LLMServer() as server:
        driver = LiteLLMDriver("openai/test", api_base=server.base_url, api_key="k", num_retries=0)
        agent = AgentLoop(driver)
        strict = s.judge(driver, "The capital of France, in one word.")
        server.plan(
            answer("Paris"), grade(1.0, True, "right"), answer("Lyon"), grade(0, False, "no")
        )
        case = Case("capital", "What is the capital of France?", "Paris")
        report = evaluate(agent, [case], [strict], trials=2, concurrency=1, out=tmp_path)
        asked = server.requests[1]
        assert asked["response_format"]["type"] == "json_schema"
        assert "Expected answer: Paris" in asked["messages"][-1]["content"]
        assert [t.passed for t in report.cases[0].trials] == [True, False]
        made = len(server.requests)
        assert rescore(tmp_path, [strict]).to_json() == report.to_json()
        assert len(server.requests) == made
        server.plan(grade(0.5, True, "close"), grade(0.5, True, "close"))
        lenient = s.judge(driver, "A city in France.")
        again = rescore(tmp_path, [lenient])
        assert len(server.requests) == made + 2
        scores = [dict(t.scores)["judge"] for t in again.cases[0].trials]
        assert all(
            score.explanation.startswith("re-judged (the rubric changed)") for score in scores
        )
        assert rescore(tmp_path, [lenient]).to_json() == again.to_json().replace(
            "re-judged (the rubric changed): ", ""
        )


# -- the command ----------------------------------------------------------------------------


def test_the_command_evaluates_compares_and_exits_as_documented(tmp_path):
    """``agents eval`` on the docs' dataset and agent: 0 with no baseline; 1 for the careless
    agent against it; 0 for a rescore with other scorers; 2 and one line for bad input."""
    from helpers import agents_cli

    examples = tmp_path / "examples"
    examples.mkdir()
    for name in ("sums.yaml", "arithmetic.py"):
        (examples / name).write_text((ROOT / "examples" / name).read_text())
    base = agents_cli(
        "eval",
        "examples/sums.yaml",
        "examples.arithmetic:loop",
        "--trials",
        "30",
        "--out",
        "base",
        "--report",
        "base.html",
        cwd=tmp_path,
    )
    assert base.returncode == 0, base.stderr
    assert base.stdout.startswith("sums: ") and base.stderr == ""  # piped: no progress bar
    worse = agents_cli(
        "eval",
        "examples/sums.yaml",
        "examples.arithmetic:careless",
        "--trials",
        "30",
        "--baseline",
        "base",
        "--json",
        cwd=tmp_path,
    )
    assert worse.returncode == 1, worse.stderr
    assert json.loads(worse.stdout)["verdict"] == "worse"
    (tmp_path / "lenient.py").write_text(
        "from agents.evals.scorers import contains\nSCORERS = [contains('4')]\n"
    )
    again = agents_cli(
        "eval", "rescore", "base", "--scorers", "lenient:SCORERS", "--json", cwd=tmp_path
    )
    assert again.returncode == 0 and json.loads(again.stdout)["scorers"] == ["contains"]
    for bad in (
        ["missing.yaml", "examples.arithmetic:loop"],
        ["examples/sums.yaml", "nope:x"],
        ["examples/sums.yaml", "examples.arithmetic:loop", "--trials", "0"],
    ):
        refused = agents_cli("eval", *bad, cwd=tmp_path)
        assert refused.returncode == 2 and refused.stderr.count("\n") == 1, refused.stderr
        assert "Traceback" not in refused.stderr


@pytest.mark.skipif(
    __import__("helpers").CHROMIUM is None,
    reason="Chromium is not installed here (.ci/run installs Debian's chromium)",
)
def test_the_html_report_shows_cases_intervals_the_baseline_and_links_to_runs(tmp_path):
    """In headless Chromium: a row per case with its interval and verdict against the
    baseline, and each trial's link opening its run report."""
    from helpers import Browser

    arithmetic = runpy.run_path(str(ROOT / "examples" / "arithmetic.py"))
    dataset = Dataset.load(ROOT / "examples" / "sums.yaml")
    base = evaluate(arithmetic["loop"](), dataset, [s.equals()], trials=20, out=tmp_path / "base")
    new = evaluate(arithmetic["careless"](), dataset, [s.equals()], trials=20, out=tmp_path / "new")
    page = tmp_path / "report.html"
    new.write_html(page, compare(base, new), tmp_path / "new")
    browser = Browser(page.as_uri(), tmp_path / "profile")
    try:
        rows = browser.wait_for(
            "Array.from(document.querySelectorAll('#cases tr[id]')).map(r =>"
            " Array.from(r.cells).map(c => c.textContent.trim()))"
        )
        assert [row[0] for row in rows] == ["two", "three", "ten"]
        assert rows[1][7] == "worse" and "\u2013" in rows[1][3]  # the interval, low-high
        link = browser.evaluate("document.querySelector('#case-1 a.trial').href")
        browser.call("Page.navigate", url=link)
        browser.wait_for("document.title.includes('agents audit report')")
    finally:
        browser.close()


def test_a_test_gates_on_an_evaluation_rescored_offline(tmp_path):
    """Recorded once, then gated with no model: the interval's lower bound against a
    threshold, and the comparison with a baseline."""
    from agents.evals import assert_not_worse, assert_pass_rate

    arithmetic = runpy.run_path(str(ROOT / "examples" / "arithmetic.py"))
    dataset = Dataset.load(ROOT / "examples" / "sums.yaml")
    evaluate(arithmetic["loop"](), dataset, [s.equals()], trials=30, out=tmp_path / "base")
    evaluate(arithmetic["careless"](), dataset, [s.equals()], trials=30, out=tmp_path / "new")
    base = rescore(tmp_path / "base", [s.equals()])  # in CI: the folder, no model
    assert_pass_rate(base, 0.6)
    with pytest.raises(AssertionError, match=r"lower bound is below 0\.90"):
        assert_pass_rate(base, 0.9)
    with pytest.raises(AssertionError, match=r"case 'three'.*below 0\.50"):
        assert_pass_rate(rescore(tmp_path / "new", [s.equals()]), 0.5, case="three")
    assert_not_worse(base, base)
    with pytest.raises(AssertionError, match="cases: three"):
        assert_not_worse(tmp_path / "base", rescore(tmp_path / "new", [s.equals()]))


def test_a_trial_that_cannot_start_fails_alone_and_a_used_folder_is_refused(tmp_path):
    """``initial`` raising for one case fails that trial with its reason, the others run;
    an ``out`` folder holding an evaluation already is refused before any run (its runs
    and judgements would mix with the new ones)."""
    from agents.errors import InvalidArgument

    def initial(case):
        if case.name == "big":
            raise KeyError("no such fixture")
        return case.initial()

    report = evaluate(adder(), CASES, [s.equals()], initial=initial)
    small, big = (case.trials[0] for case in report.cases)
    assert small.passed and not big.passed
    assert big.error == "the trial could not run: KeyError: 'no such fixture'"
    evaluate(adder(), CASES, [s.equals()], out=tmp_path)
    with pytest.raises(InvalidArgument, match="holds an evaluation already"):
        evaluate(adder(), CASES, [s.equals()], out=tmp_path)


def test_each_kept_trial_replays_offline_from_the_recording_of_its_model_calls(tmp_path):
    """``out``'s runs hold each trial's model calls: a ``ReplayDriver`` answers the same
    trial again, with no model, to the same final state."""
    from agents import ReplayDriver

    report = evaluate(adder(), CASES, [s.equals()], out=tmp_path)
    recording = tmp_path / "runs" / "1-0.calls.jsonl"
    again = AgentLoop(ReplayDriver.from_file(recording), tools=[add]).run(CASES[1].initial())
    assert again.final_response == "The sum is 42." and report.cases[1].trials[0].passed


def test_the_command_shows_progress_with_the_time_left_on_a_terminal_only(tmp_path):
    """stderr a terminal (a pseudo-terminal here): tqdm's bar, with its estimate of the
    time left; the result on stdout as when piped."""
    import fcntl
    import os
    import pty
    import struct
    import subprocess
    import sys
    import termios

    examples = tmp_path / "examples"
    examples.mkdir()
    for name in ("sums.yaml", "arithmetic.py"):
        (examples / name).write_text((ROOT / "examples" / name).read_text())
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # 100 wide
    try:
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "agents",
                "eval",
                "examples/sums.yaml",
                "examples.arithmetic:loop",
                "--trials",
                "50",
            ],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=follower,
            text=True,
            timeout=120,
            env={**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
        )
        os.close(follower)
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed: all of it read
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(leader)
    assert done.returncode == 0 and done.stdout.startswith("sums: ")
    text = shown.decode("utf-8", "replace")
    assert "0/150 [00:00<" in text and "trial/s]" in text, text  # the time left after "<"


def test_a_comparison_page_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    """Writing a comparison's page over an earlier one that fails half-way leaves the
    earlier page as it was (the file was emptied before the new page was made)."""
    from agents.evals import pages
    from agents.evals.comparing import Comparison

    comparison = Comparison("no evidence", 0, 0.0, 1.0, (0.0, 0.0), 0.05, ())
    page = tmp_path / "compare.html"
    comparison.write_html(page)
    written = page.read_text(encoding="utf-8")
    assert "no evidence" in written

    def failing(_: object) -> str:
        raise MemoryError("no room to render the page")

    monkeypatch.setattr(pages, "render_comparison", failing)
    with pytest.raises(MemoryError):
        comparison.write_html(page)
    assert page.read_text(encoding="utf-8") == written
    assert [p.name for p in tmp_path.iterdir()] == ["compare.html"]


REPORT_PAST_THE_LIMIT = """
import resource, signal, sys
from agents import AgentLoop
from agents.evals import Case, evaluate
from agents.evals import scorers as s
from agents.testing import FunctionDriver

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG
resource.setrlimit(resource.RLIMIT_FSIZE, (32_768, 32_768))  # each trial's log fits
cases = [Case(f"case {i}", "hi", "hi") for i in range(40)]
agent = AgentLoop(FunctionDriver(lambda request: "hi"))
try:
    evaluate(agent, cases, [s.equals()], trials=3, out=sys.argv[1])  # a 56 KB report
except OSError as exc:
    print("refused", exc.errno)
"""


def test_a_report_that_cannot_be_written_whole_is_not_written(tmp_path):
    """``evaluate(out=...)`` whose report fails half-way (here: past the file-size limit,
    as on a full disk) raises, and leaves no torn ``report.json`` that a later ``load``
    or gate would meet; the runs stay, for ``rescore`` to score again."""
    import errno
    import subprocess
    import sys

    folder = tmp_path / "out"
    child = subprocess.run(
        [sys.executable, "-c", REPORT_PAST_THE_LIMIT, str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert child.stdout.strip() == f"refused {errno.EFBIG}", child.stderr[-2000:]
    assert len(list((folder / "runs").glob("*.jsonl"))) == 240  # a log and calls a trial
    assert sorted(p.name for p in folder.iterdir()) == ["cases.jsonl", "runs"]
    again = rescore(folder, [s.equals()])
    assert [len(case.trials) for case in again.cases] == [3] * 40
