"""An LLM judge (docs/how-to/evals.md): a model, through any driver, reads the question, the
expected answer and the agent's answer, and grades them against a rubric with structured
output. Each judgement is a run like any other; in an evaluation kept in a folder it is
recorded there, keyed by the rubric, so that ``rescore`` reads it again instead of asking
the model: only a changed rubric is judged again, and the score says so."""

from __future__ import annotations

import contextvars
import hashlib
import math
from pathlib import Path
from typing import Any, Final

import attrs

from agents.audit import AuditLog
from agents.errors import InvalidArgument
from agents.evals.dataset import Case
from agents.evals.report import Score
from agents.records.arguments import text
from agents.records.frozen import deep_thaw
from agents.records.state import AgentState
from agents.shell.loop import AgentLoop

__all__ = ["GRADE", "JUDGE_PROMPT", "Judge", "judge", "recording"]

GRADE: Final = {
    "type": "object",
    "properties": {
        "score": {"type": "number", "minimum": 0, "maximum": 1},
        "passed": {"type": "boolean"},
        "explanation": {"type": "string"},
    },
    "required": ["score", "passed", "explanation"],
}
"""The structured answer a judge gives: a score in [0, 1], whether the answer passes, why."""

JUDGE_PROMPT: Final = (
    "You grade an AI agent's answer to a question against a rubric. Answer with JSON "
    "holding a score between 0 and 1, whether the answer passes, and a short explanation."
)

recording: contextvars.ContextVar[tuple[Path, str] | None] = contextvars.ContextVar(
    "agents_evals_recording", default=None
)
"""Where the trial being scored keeps its judgements (its evaluation's folder, and the
trial's key): set by the evaluation around each trial's scoring."""


@attrs.frozen
class Judge:
    """A scorer asking a model (``loop``) to grade each trial against ``rubric``."""

    loop: AgentLoop = attrs.field(repr=False)
    rubric: str = attrs.field(validator=lambda _, __, value: text(value, "a judge's rubric"))
    name: str = attrs.field(
        default="judge", validator=lambda _, __, value: text(value, "a judge's name")
    )

    @property
    def key(self) -> str:
        """The rubric's fingerprint: a recorded judgement is read again for the same one."""
        return hashlib.sha256(self.rubric.encode("utf-8")).hexdigest()[:16]

    async def __call__(self, case: Case, state: AgentState) -> Score:
        where = recording.get()
        path = rejudged = None
        if where is not None:  # each judge's own: two judges may share a rubric
            folder, trial = where
            judge = hashlib.sha256(self.name.encode("utf-8")).hexdigest()[:8]
            path = folder / "judged" / f"{trial}.{judge}.{self.key}.jsonl"
            rejudged = not path.exists() and any(path.parent.glob(f"{trial}.{judge}.*.jsonl"))
        if path is not None and path.exists():
            graded = AuditLog.read(path)  # recorded: no model call
        else:
            loop = self.loop
            log = None
            if path is not None:
                path.parent.mkdir(parents=True, exist_ok=True)
                log = AuditLog.open(path, durability="none")
                loop = loop.with_listeners(log)
            try:
                graded = await loop.arun(self._question(case, state))
            finally:
                if log is not None:
                    log.close()
        return self._score(graded, rejudged)

    def _question(self, case: Case, state: AgentState) -> AgentState:
        asked = case.input if isinstance(case.input, str) else _first_user_text(state)
        expected = deep_thaw(case.expected)
        lines = [
            f"Rubric: {self.rubric}",
            f"Question: {asked}",
            *([f"Expected answer: {expected}"] if expected is not None else []),
            f"The agent's answer: {state.final_response or '(none)'}",
        ]
        return AgentState.initial(JUDGE_PROMPT, messages=["\n".join(lines)], response_format=GRADE)

    def _score(self, graded: AgentState, rejudged: bool | None) -> Score:
        grade = deep_thaw(graded.final_output)
        if not isinstance(grade, dict):
            error = graded.execution.error if graded.execution is not None else None
            signal = graded.stop_signal
            said = "no grade in its answer"
            if error is not None:
                said = error.describe()
            elif signal is not None and signal.message:  # a limit: why it gave up
                said = signal.message
            raise InvalidArgument(f"the judge gave no grade: {said}")
        score, passed, explanation = (grade.get(key) for key in ("score", "passed", "explanation"))
        if not (
            isinstance(score, int | float)
            and type(score) is not bool
            and math.isfinite(score)
            and type(passed) is bool
            and type(explanation) is str
        ):  # a recorded judgement edited by hand: the model's was checked against GRADE
            raise InvalidArgument(f"the judge's grade is not one (GRADE): {grade!r:.200}")
        note = "re-judged (the rubric changed): " if rejudged else ""
        return Score(min(1.0, max(0.0, float(score))), passed, note + explanation)


def judge(driver: Any, rubric: str, *, name: str = "judge") -> Judge:
    """A scorer asking ``driver``'s model to grade each trial against ``rubric`` (with
    structured output: ``GRADE``). ``driver``: any driver, or an ``AgentLoop`` to judge
    with (its clock, ids and limits)."""
    loop = driver if isinstance(driver, AgentLoop) else AgentLoop(driver, max_steps=3)
    return Judge(loop, rubric, name)


def _first_user_text(state: AgentState) -> str:
    for message in state.messages:
        if message.role.value == "user":
            return message.text
    return ""
