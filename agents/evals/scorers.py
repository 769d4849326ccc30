"""Scorers (docs/how-to/evals.md): each ``(case, final_state) -> Score``, named, with no model
call but the judge's. Those that compare the final answer with ``case.expected`` take a
value of their own instead when given one."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import attrs

from agents.errors import InvalidArgument
from agents.evals.dataset import Case
from agents.evals.judging import judge
from agents.evals.report import Score, check_limit
from agents.records.arguments import names as tool_names
from agents.records.arguments import switch, text
from agents.records.execution import ExecutionStatus
from agents.records.frozen import NestingError, deep_freeze, deep_thaw
from agents.records.output import check_output, output_validator
from agents.records.signals import StopReason
from agents.records.state import AgentState
from agents.testing.invariants import check_invariants

__all__ = [
    "completed",
    "contains",
    "equals",
    "invariant",
    "json_schema",
    "judge",
    "matches",
    "scorer",
    "tool_called",
    "trajectory",
    "within",
]

_UNSET: Final[Any] = object()


@attrs.frozen
class _Named:
    """A scorer: a function of ``(case, state)`` and the name reports give it."""

    name: str
    function: Callable[[Case, AgentState], Score] = attrs.field(repr=False)

    def __call__(self, case: Case, state: AgentState) -> Score:
        return self.function(case, state)


def scorer(name: str) -> Callable[[Callable[[Case, AgentState], Score]], _Named]:
    """Name a scorer function: ``@scorer("polite")``."""
    return lambda function: _Named(name, function)


def _answer(state: AgentState) -> str:
    return state.final_response or ""


def _wanted(value: Any, case: Case, scorer_name: str) -> Any:
    wanted = case.expected if value is _UNSET else value
    if wanted is None:
        raise InvalidArgument(f"{scorer_name}: case {case.name!r} has no expected answer")
    return wanted


def _score(passed: bool, explanation: str = "") -> Score:
    return Score(1.0 if passed else 0.0, passed, explanation)


def equals(value: Any = _UNSET) -> _Named:
    """The final answer is the expected one: text equal once trimmed of surrounding white
    space, or, for an expected JSON value, the structured output (or the answer read as
    JSON) equal to it. A value no JSON holds (a set, NaN, an object) is refused here, not
    by each trial it would score."""
    try:
        given = value if value is _UNSET else deep_freeze(value)
    except NestingError as exc:
        raise InvalidArgument(f"equals: the expected value: {exc}") from None

    def score(case: Case, state: AgentState) -> Score:
        wanted = _wanted(given, case, "equals")
        if isinstance(wanted, str):
            got: Any = _answer(state).strip()
            return _score(got == wanted.strip(), f"answered {got[:200]!r}")
        got = state.final_output
        if got is None:
            got, _ = check_output(_answer(state), output_validator({}))
        got = deep_thaw(deep_freeze(got))  # as JSON holds them: lists and dicts
        return _score(_same_json(got, deep_thaw(deep_freeze(wanted))), f"answered {got!r:.200}")

    return _Named("equals", score)


def _same_json(a: Any, b: Any) -> bool:
    """Whether two JSON values are equal as JSON tells them apart: ``true`` and ``false``
    are no numbers (Python's ``True == 1`` holds), while ``1`` and ``1.0`` are one number
    (an answer's number, however written: ``frozen.same_value`` tells them apart, as a
    record's JSON text does)."""
    if type(a) is bool or type(b) is bool:
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_json(a[key], b[key]) for key in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(map(_same_json, a, b))
    return type(a) in _PLAIN and type(b) in _PLAIN and bool(a == b)


_PLAIN: Final = frozenset({str, int, float, type(None)})


def contains(value: Any = _UNSET, *, case_sensitive: bool = True) -> _Named:
    """The final answer contains the expected text."""
    switch(case_sensitive, "contains: case_sensitive")

    def score(case: Case, state: AgentState) -> Score:
        wanted, got = str(_wanted(value, case, "contains")), _answer(state)
        if not case_sensitive:
            wanted, got = wanted.casefold(), got.casefold()
        found = wanted in got
        return _score(found, f"{wanted[:80]!r} {'found' if found else 'not found'}")

    return _Named("contains", score)


def matches(pattern: str) -> _Named:
    """The final answer matches the regular expression ``pattern`` (``re.search``)."""
    text(pattern, "matches: a pattern")
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise InvalidArgument(f"matches: not a regular expression ({exc})") from None

    def score(_: Case, state: AgentState) -> Score:
        found = compiled.search(_answer(state)) is not None
        return _score(found, f"/{pattern[:80]}/ {'matched' if found else 'not matched'}")

    return _Named("matches", score)


def json_schema(schema: Mapping[str, Any]) -> _Named:
    """The final answer is JSON following ``schema``."""
    validator = output_validator(dict(schema))

    def score(_: Case, state: AgentState) -> Score:
        _, problem = check_output(_answer(state), validator)
        return _score(problem is None, problem or "follows the schema")

    return _Named("json_schema", score)


def tool_called(name: str, where: Callable[[Mapping[str, Any]], bool] | None = None) -> _Named:
    """The run called tool ``name`` (with arguments ``where`` accepts, when given)."""
    text(name, "tool_called: a tool's name")

    def score(_: Case, state: AgentState) -> Score:
        calls = [e.tool_call for e in state.tool_executions if e.tool_call.name == name]
        if where is not None:
            calls = [c for c in calls if where(deep_thaw(c.arguments))]
        return _score(bool(calls), f"{len(calls)} call(s) of {name!r}")

    return _Named(f"tool_called:{name}", score)


def trajectory(names: Sequence[str], *, ordered: bool = True) -> _Named:
    """The run called the tools ``names``: in that order, others between them allowed
    (``ordered``), or each at least once. Its value is the share of ``names`` met."""
    wanted = list(tool_names(names, "trajectory"))
    switch(ordered, "trajectory: ordered")
    if not wanted:
        raise InvalidArgument("trajectory: name at least one tool")

    def score(_: Case, state: AgentState) -> Score:
        called = [e.tool_call.name for e in state.tool_executions]
        if ordered:
            met = 0
            for tool in called:
                if met < len(wanted) and tool == wanted[met]:
                    met += 1
        else:
            met = sum(1 for tool in wanted if tool in called)
        return Score(met / len(wanted), met == len(wanted), f"called {called[:20]}")

    return _Named("trajectory", score)


def _completed(_: Case, state: AgentState) -> Score:
    status = state.status.value if state.status else "not run"
    reason = state.stop_reason
    done = state.status is ExecutionStatus.COMPLETED and reason in (
        StopReason.COMPLETED,
        StopReason.FINISH_REASON,
    )
    return _score(done, f"{status} ({reason.value if reason else 'no stop reason'})")


completed: Final = _Named("completed", _completed)
"""The run completed with an answer (not failed, suspended or stopped by a limit)."""


def within(
    *, steps: int | None = None, tokens: int | None = None, cost: float | None = None
) -> _Named:
    """The run took at most ``steps`` steps, ``tokens`` tokens and ``cost`` dollars."""
    if steps is None and tokens is None and cost is None:
        raise InvalidArgument("within: give steps=, tokens= or cost=")
    for name, limit in (("steps", steps), ("tokens", tokens), ("cost", cost)):
        check_limit(f"within: {name}", limit, whole=name != "cost")

    def score(_: Case, state: AgentState) -> Score:
        usage = state.usage
        over = [
            f"{label} {got} > {limit}"
            for label, got, limit in (
                ("steps", state.step_count, steps),
                ("tokens", usage.total_tokens, tokens),
                ("cost", usage.cost, cost),
            )
            if limit is not None and got > limit
        ]
        return _score(not over, "; ".join(over) or "within its limits")

    return _Named("within", score)


def invariant(check: Callable[[AgentState], Sequence[str]] = check_invariants) -> _Named:
    """The final state keeps ``check``'s invariants (``agents.testing``'s by default): the
    check gives the problems it finds, or raises ``AssertionError``."""

    def score(_: Case, state: AgentState) -> Score:
        try:
            problems = list(check(state) or ())
        except AssertionError as exc:
            problems = [str(exc) or "an assertion failed"]
        return _score(not problems, "; ".join(problems)[:500] or "every invariant holds")

    return _Named(getattr(check, "__name__", "invariant"), score)
