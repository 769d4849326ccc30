"""Record and replay model answers: ``RecordingInterceptor`` and ``ReplayDriver``
(docs/design/drivers.md).

A recording is a JSONL file, one line per inference: the request (with its canonical
SHA-256), and the response or the error. ``ReplayDriver`` answers from a recording or from a
history (an ``AgentState``, or a state JSON file) without any network, and checks that each
request is the one recorded: what the model saw, message by message (role, content, tool
calls, tool call id, name; not metadata). A different request is a ``ReplayDivergence``
naming the step and the first differing field; the run then ends FAILED with it.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar, Final

import attrs

from agents.errors import AgentError, ConfigurationError, InvalidType, StateDecodeError
from agents.records.arguments import path as checked_path
from agents.records.codec import from_dict, from_json, to_dict
from agents.records.encoding import unrecordable
from agents.records.error_info import ErrorInfo, ReplayDivergence
from agents.records.inference import InferenceRequest, InferenceResponse
from agents.records.json_text import json_lines, loads, utf8_safe
from agents.records.messages import Message
from agents.records.state import AgentState
from agents.records.step import AgentStep
from agents.shell.files import UnreadableFile, read_text

__all__ = [
    "RecordedInference",
    "RecordingInterceptor",
    "ReplayDriver",
    "ReplayedFailure",
    "first_message_difference",
    "recorded_inferences",
    "request_hash",
]

RECORD_KIND: Final = "InferenceRecord"


def _canonical(data: Any) -> str:
    return utf8_safe(json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False))


def request_hash(request: InferenceRequest) -> str:
    """SHA-256 of the request's canonical JSON (sorted keys, no spaces, UTF-8)."""
    return hashlib.sha256(_canonical(to_dict(request)).encode("utf-8")).hexdigest()


@attrs.frozen
class RecordedInference:
    """One recorded inference: what the model saw and what it answered (or how it failed);
    ``what`` is ``"compaction."`` for a summary's call."""

    step: int
    messages: tuple[Message, ...] | None
    response: InferenceResponse | None
    error: ErrorInfo | None
    what: str = ""  # "compaction." for a summariser's call: prefixes a divergence's field


class ReplayedFailure(AgentError):
    """The recorded inference failed: raising it again reproduces the same history."""

    def __init__(self, error: ErrorInfo) -> None:
        super().__init__(error.describe())
        self.error_info = error


class ReplayDriver:
    """Answers with recorded responses, in order, checking each request against the record.

    Build it with ``from_state(state)`` (the current execution's steps) or
    ``from_file(path)`` (a recording, or a state JSON file).
    """

    __slots__ = ("_lock", "_position", "_recorded")
    answers_checked: ClassVar[bool] = True  # each recorded answer checked here, once

    def __init__(self, recorded: Iterable[RecordedInference]) -> None:
        self._recorded: tuple[RecordedInference, ...] = tuple(recorded)
        for index, inference in enumerate(self._recorded, start=1):
            response = inference.response
            if response is not None and type(response) is not InferenceResponse:
                problem: str | None = f"a {type(response).__name__}, not an InferenceResponse"
            else:
                problem = unrecordable(response)
            if problem is not None:
                raise ConfigurationError(
                    f"recorded inference {index} cannot be recorded again: {problem}"
                )
        self._position = 0
        self._lock = threading.Lock()

    @classmethod
    def from_state(cls, state: AgentState, *, after: int = 0) -> ReplayDriver:
        """Replay the inferences of ``state``'s execution (those of the steps after step
        ``after``: a replay resuming from a state that holds the earlier ones)."""
        if not isinstance(state, AgentState):
            raise InvalidType(
                f"ReplayDriver.from_state takes an AgentState, not {type(state).__name__}"
            )
        return cls(recorded_inferences(state, after=after))

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> ReplayDriver:
        """Replay a recording (JSONL of ``RecordingInterceptor``) or a state JSON file."""
        checked_path(path, "ReplayDriver.from_file: path")
        try:
            text = read_text(path)
        except UnreadableFile as exc:
            raise StateDecodeError(f"{path}: {exc.strerror}", "$") from None
        except UnicodeDecodeError as exc:
            raise StateDecodeError(f"{path}: not UTF-8 (byte {exc.start})", "$") from None
        stripped = text.lstrip()
        if not stripped:
            raise StateDecodeError(f"{path} is empty", "$")
        first_line = json_lines(stripped)[0]
        try:
            head = loads(first_line)
        except StateDecodeError:  # not a recording: the state's reader says what it is
            head = None
        if isinstance(head, dict) and head.get("kind") == RECORD_KIND:
            return cls(_read_recording(text, str(path)))
        try:
            state = from_json(text, AgentState)
        except StateDecodeError as exc:
            raise StateDecodeError(f"{path}: {exc.reason}", exc.path) from None
        return cls.from_state(state)

    @property
    def remaining(self) -> int:
        """Recorded answers not used yet."""
        return len(self._recorded) - self._position

    def infer(self, request: InferenceRequest) -> InferenceResponse:
        """The next recorded answer, if the request is the recorded one."""
        with self._lock:
            position = self._position
            if position >= len(self._recorded):
                raise _divergence(
                    position + 1,
                    "steps",
                    f"the recording has {len(self._recorded)} inferences and "
                    "the run asked for another",
                )
            self._position = position + 1
        recorded = self._recorded[position]
        if recorded.messages is not None:
            field = first_message_difference(request.messages, recorded.messages)
            if field is not None:
                field = recorded.what + field
                raise _divergence(
                    recorded.step,
                    field,
                    f"step {recorded.step}: the request differs from the recording at {field}",
                )
        if recorded.error is not None:
            raise ReplayedFailure(recorded.error)
        assert recorded.response is not None
        return recorded.response

    async def ainfer(self, request: InferenceRequest) -> InferenceResponse:
        """``infer`` for the async runners."""
        return self.infer(request)

    def __repr__(self) -> str:
        return f"ReplayDriver({len(self._recorded)} inferences, {self.remaining} left)"


def recorded_inferences(state: AgentState, *, after: int = 0) -> list[RecordedInference]:
    """The inferences ``state``'s execution recorded, in order (those of the steps after
    step ``after``), a suspended step's included (the model had answered it)."""
    recorded: list[RecordedInference] = []
    steps = [(se.number, se.step) for se in state.step_executions]
    execution = state.execution
    if execution is not None and execution.current_step is not None:
        steps.append((len(steps) + 1, execution.current_step))
    for number, step in steps:
        if number > after:
            recorded.extend(_inferences(number, step))
    return recorded


def _inferences(number: int, step: AgentStep) -> list[RecordedInference]:
    """What step ``number`` asked the model: a summary (compaction) first, then its own
    request, unless the summary failed."""
    found = []
    compaction = step.compaction
    if compaction is not None and compaction.request is not None:
        found.append(
            RecordedInference(
                number,
                tuple(compaction.request.messages),
                compaction.response,
                # an answer that is no summary was answered: the engine finds its error again
                compaction.error if compaction.response is None else None,
                "compaction.",
            )
        )
        if compaction.error is not None:
            return found  # the step failed there: its own request was never sent
    error = None
    if step.response is None:
        error = (
            step.errors[0]
            if step.errors
            else ErrorInfo(
                type="ReplayError", message="the recorded step has neither answer nor error"
            )
        )
    found.append(RecordedInference(number, tuple(step.input_messages), step.response, error))
    return found


def _divergence(step: int, field: str, message: str) -> ReplayDivergence:
    return ReplayDivergence(message, step=step, field=field)


_COMPARED: Final = ("role", "content", "tool_call_id", "name")


def first_message_difference(sent: Sequence[Message], recorded: Sequence[Message]) -> str | None:
    """The path of the first difference in what the model saw (``messages[4].content``;
    ``messages`` when the counts differ), or ``None``."""
    if len(sent) != len(recorded):
        return "messages"
    for index, (mine, theirs) in enumerate(zip(sent, recorded, strict=True)):
        if mine is theirs or mine == theirs:  # (``==`` also compares what is not shown)
            continue
        for name in _COMPARED:
            if getattr(mine, name) != getattr(theirs, name):
                return f"messages[{index}].{name}"
        if len(mine.tool_calls) != len(theirs.tool_calls):
            return f"messages[{index}].tool_calls"
        for number, (a, b) in enumerate(zip(mine.tool_calls, theirs.tool_calls, strict=True)):
            for name in ("id", "name", "arguments", "raw_arguments", "provider_fields"):
                if getattr(a, name) != getattr(b, name):
                    return f"messages[{index}].tool_calls[{number}].{name}"
    return None


def _read_recording(text: str, where: str) -> list[RecordedInference]:
    recorded = []
    for number, line in enumerate(json_lines(text), start=1):
        if not line.strip():
            continue
        try:
            entry = loads(line)
        except StateDecodeError as exc:
            raise StateDecodeError(f"{where} line {number}: {exc.reason}", "$") from None
        if not isinstance(entry, dict) or entry.get("kind") != RECORD_KIND:
            raise StateDecodeError(f"{where} line {number}: not an {RECORD_KIND}", "kind")
        step = entry.get("step", number)
        if type(step) is not int or step < 1:
            raise StateDecodeError(f"{where} line {number}: a step is a number from 1", "step")
        try:
            request = from_dict(entry["request"], InferenceRequest)
            response = (
                from_dict(entry["response"], InferenceResponse)
                if entry.get("response") is not None
                else None
            )
            error = from_dict(entry["error"], ErrorInfo) if entry.get("error") is not None else None
        except KeyError as exc:
            raise StateDecodeError(f"{where} line {number}: missing {exc}", "$") from None
        except StateDecodeError as exc:
            raise StateDecodeError(f"{where} line {number}: {exc.reason}", exc.path) from None
        if response is None and error is None:
            raise StateDecodeError(f"{where} line {number}: neither response nor error", "response")
        recorded.append(RecordedInference(step, tuple(request.messages), response, error))
    return recorded


class RecordingInterceptor:
    """Writes every inference (request, its hash, and the response or error) to a JSONL
    file, one flushed and fsynced line each, so a crash loses at most the line in flight.
    Close it (or use it as a context manager) when done."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(checked_path(path, "RecordingInterceptor: path"))
        self._lock = threading.Lock()
        self._handle: Any = None
        self._count = 0

    def intercept_inference(
        self, request: InferenceRequest, call_next: Callable[[InferenceRequest], Any]
    ) -> Any:
        """Pass the request on and record what came back."""
        try:
            response = call_next(request)
        except Exception as exc:
            self._write(request, None, ErrorInfo.from_exception(exc))
            raise
        if isinstance(response, InferenceResponse):
            self._write(request, response, None)
        return response

    def _write(
        self, request: InferenceRequest, response: InferenceResponse | None, error: ErrorInfo | None
    ) -> None:
        with self._lock:
            self._count += 1
            entry = {
                "kind": RECORD_KIND,
                "schema_version": 1,
                "seq": self._count,
                "step": self._count,
                "request_hash": request_hash(request),
                "request": to_dict(request),
                "response": None if response is None else to_dict(response),
                "error": None if error is None else to_dict(error),
            }
            if self._handle is None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._handle = self.path.open("a", encoding="utf-8")
            self._handle.write(_canonical(entry) + "\n")
            self._handle.flush()
            os.fsync(self._handle.fileno())

    def close(self) -> None:
        """Close the file."""
        with self._lock:
            if self._handle is not None:
                self._handle.close()
                self._handle = None

    def __enter__(self) -> RecordingInterceptor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RecordingInterceptor({str(self.path)!r})"
