"""Structured output (a response format): a final answer is kept, sent back to the model
with what was wrong, or given up on after ``output_retries`` tries."""

from __future__ import annotations

from typing import Any

from agents.core.transitions import record_error
from agents.errors import ConfigurationError
from agents.records.compiled import replace_fields
from agents.records.error_info import ErrorInfo
from agents.records.frozen import deep_freeze, deep_thaw
from agents.records.inference import InferenceResponse
from agents.records.messages import Message
from agents.records.output import check_output, output_validator
from agents.records.signals import StopReason, StopSignal
from agents.records.state import AgentState

__all__ = ["Outputs", "check_final_output"]


class Outputs:
    """Structured output checks of one run: the validator (per schema) and failures so far."""

    __slots__ = ("failures", "retries", "schema", "validator")

    def __init__(self, retries: int) -> None:
        self.retries = retries
        self.failures = 0
        self.schema: object = None
        self.validator: Any = None

    def check(self, schema: Any, content: str) -> tuple[Any, str | None]:
        if schema is not self.schema:
            self.schema, self.validator = schema, output_validator(deep_thaw(schema))
        return check_output(content, self.validator)


def check_final_output(
    state: AgentState, response: InferenceResponse, outputs: Outputs, number: int
) -> tuple[AgentState, Message | None]:
    """A final answer under a response format: keep it, send it back, or give up."""
    execution = state.execution
    assert execution is not None
    if execution.continuation.stop_signals:
        return state, None  # the run stops anyway (a limit, an error): nothing to check
    try:
        value, problem = outputs.check(state.context.response_format, response.text)
    except ConfigurationError as exc:  # a schema no answer can be checked against
        error = ErrorInfo(type="ConfigurationError", message=f"response_format: {exc}")
        return record_error(state, error), None
    if problem is None:
        return replace_fields(
            state, execution=replace_fields(execution, final_output=deep_freeze(value))
        ), None
    if outputs.failures >= outputs.retries:
        return state.with_stop_signal(
            StopSignal(
                reason=StopReason.RETRY_LIMIT,
                message=f"no valid structured answer after {outputs.failures + 1} tries: {problem}",
                context={"output_retries": outputs.retries, "step": number},
                source="response_format",
            )
        ), None
    outputs.failures += 1
    feedback = Message.user(
        f"Your answer could not be used: {problem}. Answer again with only a JSON value "
        "that follows the requested schema."
    ).with_metadata("agents", "output_feedback")
    return state.with_execution_continued(), feedback
