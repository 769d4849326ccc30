"""Where a new run first differs from its record, and what kind of change that is
(``agents.testing.regress``): the request the model was asked, then each step's fields in
the order causes come before their effects, then how the run ended."""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Sequence
from typing import Any, Final

import attrs

from agents.audit.records import request_shape
from agents.drivers.replay import RecordedInference, first_message_difference
from agents.records.codec import encode_value, to_dict
from agents.records.compiled import replace_fields
from agents.records.frozen import History, to_pvector
from agents.records.inference import InferenceRequest
from agents.records.messages import Role
from agents.records.registry import RECORDS_BY_TYPE, field_plan
from agents.records.state import AgentState
from agents.replaying import VOLATILE, RunRecord, strip_volatile

__all__ = ["CHANGE_KINDS", "Change", "alike", "first_change", "request_change"]

CHANGE_KINDS: Final = (
    "request",  # the model was asked something else (part: system prompt, messages,
    #             tool schemas, parameters)
    "compaction",  # context compaction happened where it did not (or the reverse)
    "blocked",  # a hook blocked a call it used to let through
    "unblocked",  # a hook let through a call it used to block
    "rewritten",  # a hook (or an interceptor) changed a call
    "tool result",  # a tool's value or error differs
    "error",  # the step failed otherwise (or no longer fails)
    "stop reason",  # the run stopped elsewhere, or for another reason
    "final answer",  # the final answer or output differs
    "ids or times",  # only ids or timestamps differ (exact=True)
)
# The order a step's fields are compared in: causes before their effects.
_STEP_ORDER: Final = (
    "input_messages",
    "compaction",
    "response",
    "tool_executions",
    "errors",
    "output_messages",
)


def _text(value: Any) -> str:
    """A value as the diff shows it: text as it is, anything else as indented JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=str)


@attrs.frozen(kw_only=True)
class Change:
    """The first difference of a run: at which step (1-based), what kind (``CHANGE_KINDS``),
    about what (``part``: the request's part, or the tool), where (``field``, a path in the
    step as the codec writes it, ids and times left out) and the two values."""

    step: int
    kind: str
    part: str | None
    field: str
    recorded: Any
    new: Any

    def describe(self) -> str:
        """One line: where and what changed."""
        about = f" ({self.part})" if self.part else ""
        return f"{self.kind}{about} at step {self.step}: {self.field}"

    def diff(self, context: int = 2) -> str:
        """The recorded and the new value as a unified diff of their lines (text as it is,
        other values as indented JSON)."""
        recorded, new = _text(self.recorded).splitlines(), _text(self.new).splitlines()
        lines = difflib.unified_diff(recorded, new, "recorded", "new", n=context, lineterm="")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """The change as JSON data."""
        return {
            "step": self.step,
            "kind": self.kind,
            "part": self.part,
            "field": self.field,
            "recorded": self.recorded,
            "new": self.new,
            "diff": self.diff(),
        }


def request_change(
    request: InferenceRequest,
    recorded: RecordedInference | None,
    record: RunRecord,
    position: int,
    shape_of: Callable[[InferenceRequest], dict[str, Any]] = request_shape,
    verified: dict[int, tuple[Any, Any]] | None = None,
) -> Change | None:
    """How ``request`` (the new run's ``position``-th) differs from the recorded one: the
    messages (the system prompt told apart), then what else was offered (tool schemas,
    parameters) where the record says; ``None`` when it is the one recorded."""
    if recorded is None:
        step = (record.final.step_count or 0) + 1
        return Change(
            step=step,
            kind="stop reason",
            part="steps",
            field="steps",
            recorded=f"the recorded run asked the model {position} times",
            new="the new run asks again",
        )
    step, sent, seen = recorded.step, list(request.messages), list(recorded.messages or ())
    prefix = "compaction." if recorded.what else ""
    field = _messages_differ(sent, seen, verified) if recorded.messages is not None else None
    if field is not None:
        index = _first_index(sent, seen)
        system = any(i < len(m) and m[i].role is Role.SYSTEM for m in (sent, seen) for i in [index])
        return Change(
            step=step,
            kind="compaction" if prefix else "request",
            part="system prompt" if system and not prefix else "messages",
            field=f"{prefix}{field}",
            recorded=_message_part(seen, index, field),
            new=_message_part(sent, index, field),
        )
    offered = None if prefix else record.offered_at(step)
    if offered is None:
        return None
    now = shape_of(request)
    for key, part in (
        ("tools", "tool schemas"),
        ("model", "parameters"),
        ("options", "parameters"),
        ("response_format", "parameters"),
    ):
        if now[key] != offered.get(key):
            return Change(
                step=step,
                kind="request",
                part=part,
                field=f"request.{key}",
                recorded=offered.get(key),
                new=now[key],
            )
    return None


def _messages_differ(
    sent: Sequence[Any], seen: Sequence[Any], verified: dict[int, tuple[Any, Any]] | None
) -> str | None:
    """``first_message_difference``, skipping the pairs of messages found alike in earlier
    requests of the run (``verified``, by the new message's identity: each request repeats
    the conversation so far, so a run's requests cost O(messages), not O(messages²))."""
    if verified is None or len(sent) != len(seen):
        return first_message_difference(sent, seen)
    for index, (mine, theirs) in enumerate(zip(sent, seen, strict=True)):
        if mine is theirs:
            continue
        known = verified.get(id(mine))
        if known is not None and known[0] is mine and known[1] is theirs:
            continue
        field = first_message_difference([mine], [theirs])
        if field is not None:
            return field.replace("messages[0]", f"messages[{index}]", 1)
        verified[id(mine)] = (mine, theirs)  # both kept alive: the ids stay theirs
    return None


def _first_index(sent: Sequence[Any], seen: Sequence[Any]) -> int:
    """The first message that differs (or the first one only one side has)."""
    for index, (a, b) in enumerate(zip(sent, seen, strict=False)):
        if a is not b and first_message_difference([a], [b]) is not None:
            return index
    return min(len(sent), len(seen))


def _message_part(messages: Sequence[Any], index: int, field: str) -> Any:
    """What differs in message ``index``: the field the path names (``content``, ``role``,
    ``tool_calls``...), or the whole message when one side has none there."""
    if index >= len(messages):
        return None
    data = strip_volatile(to_dict(messages[index]))
    data.pop("schema_version", None)
    name = field.split("].", 1)[1].split("[", 1)[0] if "]." in field else None
    return data.get(name) if name is not None and name in data else data


# -- comparing ----------------------------------------------------------------------------------


def first_change(
    recorded: AgentState, new: AgentState, outcome: bool, asked: Change | None, exact: bool
) -> Change | None:
    """The first difference between a recorded stretch and the new one."""
    if exact and recorded.to_json() == new.to_json():
        return None
    recorded_steps, new_steps = recorded.step_executions, new.step_executions
    for number, (a, b) in enumerate(zip(recorded_steps, new_steps, strict=False), start=1):
        if asked is not None and asked.step == number:
            return asked if not _compaction_changed(a, b) else _compaction(a, b, number)
        if alike(a, b):
            continue
        change = _step_change(number, _step_data(a), _step_data(b))
        if change is not None:
            return change
    if asked is not None:
        return asked
    if not outcome:
        if len(new_steps) >= len(recorded_steps):
            return None
        return _steps_change(recorded, new)
    if len(recorded_steps) != len(new_steps):
        return _steps_change(recorded, new)
    change = _outcome_change(recorded, new)
    if change is None and exact:
        return Change(
            step=max(len(new_steps), 1),
            kind="ids or times",
            part=None,
            field="$",
            recorded=None,
            new=None,
        )
    return change


def alike(a: Any, b: Any) -> bool:
    """Whether two values tell the same story: records equal field by field apart from
    the ``VOLATILE`` ones (ids and times), at any depth; a step's input messages left out
    (what the model saw is compared request by request). Parts the two share are the same
    objects, so most of a step is one identity check."""
    if a is b:
        return True
    kind = type(a)
    if kind is not type(b):
        return False
    fields = _walked(kind)
    if fields is not None:
        for name in fields:
            mine, theirs = getattr(a, name), getattr(b, name)
            if mine is not theirs and not alike(mine, theirs):
                return False
        return True
    if kind in _SEQUENCES:  # equal is alike; else item by item, ids and times aside
        return len(a) == len(b) and (a == b or all(map(alike, a, b)))
    return bool(a == b)  # records without ids or times, plain values: as they are


_SEQUENCES: Final = frozenset({History, type(to_pvector((1,))), tuple, list})
_WALKED: dict[type, tuple[str, ...] | None] = {}


def _walked(kind: type) -> tuple[str, ...] | None:
    """The fields ``alike`` compares one by one for a record class with ids or times
    (``None`` for any other type: compared with ``==``)."""
    if kind not in _WALKED:
        fields = None
        if kind in RECORDS_BY_TYPE:
            names = [field.name for field in field_plan(kind)]
            if any(name in VOLATILE for name in names):
                skipped = VOLATILE | ({"input_messages"} if kind.__name__ == "AgentStep" else set())
                fields = tuple(name for name in names if name not in skipped)
        _WALKED[kind] = fields
    return _WALKED[kind]


def _step_data(step_execution: Any) -> Any:
    """A step as JSON without ids, times and its input (compared request by request)."""
    inputless = replace_fields(step_execution.step, input_messages=_NO_MESSAGES)
    data = strip_volatile(to_dict(replace_fields(step_execution, step=inputless)))
    data["step"].pop("input_messages", None)
    return data


_NO_MESSAGES: Final[History[Any]] = History(())


def _compaction_changed(a: Any, b: Any) -> bool:
    return (a.step.compaction is None) != (b.step.compaction is None)


def _compaction(a: Any, b: Any, number: int) -> Change:
    def shown(step: Any) -> Any:
        compaction = step.step.compaction
        return None if compaction is None else {"moved": compaction.moved}

    return Change(
        step=number,
        kind="compaction",
        part=None,
        field="step.compaction",
        recorded=shown(a),
        new=shown(b),
    )


def _step_change(number: int, a: dict[str, Any], b: dict[str, Any]) -> Change | None:
    """The first field of a step that differs, causes first, and what kind of change it is."""
    step_a, step_b = a.get("step", {}), b.get("step", {})
    for name in _STEP_ORDER:
        if step_a.get(name) != step_b.get(name):
            field, x, y = _deepest(step_a.get(name), step_b.get(name), f"step.{name}")
            return Change(
                step=number,
                kind=_kind(field, x, y),
                part=_part(field, step_a),
                field=field,
                recorded=x,
                new=y,
            )
    for name in sorted(set(a) | set(b)):
        if name != "step" and a.get(name) != b.get(name):
            field, x, y = _deepest(a.get(name), b.get(name), name)
            return Change(
                step=number, kind=_kind(field, x, y), part=None, field=field, recorded=x, new=y
            )
    return None


def _deepest(a: Any, b: Any, path: str) -> tuple[str, Any, Any]:
    """The path of the first difference inside ``a`` and ``b`` (tool executions and
    their fields are reported whole at the level that names them)."""
    if type(a) is not type(b):
        return path, a, b
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b), key=_field_order):
            if a.get(key) != b.get(key):
                if key in ("value", "error", "arguments", "content", "stop_signals"):
                    return f"{path}.{key}", a.get(key), b.get(key)
                return _deepest(a.get(key), b.get(key), f"{path}.{key}")
        return path, a, b
    if isinstance(a, list):
        for index, (x, y) in enumerate(zip(a, b, strict=False)):
            if x != y:
                return _deepest(x, y, f"{path}[{index}]")
        return f"{path}.length", len(a), len(b)
    return path, a, b


def _field_order(key: str) -> tuple[int, str]:
    """Within a tool execution: the call before its outcome, the block before the value."""
    order = ("tool_call", "blocked", "error", "value", "terminate", "stop_signal")
    return (order.index(key), key) if key in order else (len(order), key)


def _kind(field: str, recorded: Any, new: Any) -> str:
    if field.startswith("step.input_messages"):
        return "request"
    if field.startswith("step.compaction"):
        return "compaction"
    if ".tool_call" in field:
        return "rewritten"
    if field.endswith(".blocked"):
        return "blocked" if new else "unblocked"
    if field.startswith(("step.tool_executions", "step.output_messages")):
        return "tool result"
    if field.startswith("step.errors"):
        return "error"
    if field.startswith("continuation"):
        return "stop reason"
    return "final answer" if field.startswith("step.response") else "stop reason"


def _part(field: str, step: dict[str, Any]) -> str | None:
    """The tool a change is about, where there is one."""
    if not field.startswith("step.tool_executions["):
        return "system prompt" if field.startswith("step.input_messages[0]") else None
    index = int(field.split("[", 1)[1].split("]", 1)[0])
    executions = step.get("tool_executions") or []
    if index < len(executions):
        name = executions[index].get("tool_call", {}).get("name")
        return name if isinstance(name, str) else None
    return None


def _steps_change(recorded: AgentState, new: AgentState) -> Change:
    """The runs took a different number of steps: the last one they share is where."""
    shared = min(len(recorded.step_executions), len(new.step_executions))
    return Change(
        step=max(shared, 1),
        kind="stop reason",
        part="steps",
        field="steps",
        recorded=_ending(recorded),
        new=_ending(new),
    )


def _ending(state: AgentState) -> dict[str, Any]:
    reason = state.stop_reason
    return {
        "steps": len(state.step_executions),
        "status": state.status.value if state.status is not None else None,
        "stop_reason": reason.value if reason is not None else None,
    }


def _outcome_change(recorded: AgentState, new: AgentState) -> Change | None:
    step = max(len(new.step_executions), 1)
    if _ending(recorded) != _ending(new) or _pending(recorded) != _pending(new):
        return Change(
            step=step,
            kind="stop reason",
            part=None,
            field="status",
            recorded=_ending(recorded),
            new=_ending(new),
        )
    answers = (recorded.final_response, recorded.final_output)
    if answers != (new.final_response, new.final_output):
        return Change(
            step=step,
            kind="final answer",
            part=None,
            field="final_response",
            recorded=_answer(recorded),
            new=_answer(new),
        )
    return None


def _answer(state: AgentState) -> Any:
    output = state.final_output
    return state.final_response if output is None else encode_value(output)


def _pending(state: AgentState) -> list[str]:
    return [call.id for call in state.pending_approvals]
