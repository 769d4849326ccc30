"""Format 3's compact records: each fact once, defaults left out (docs/design/auditing.md).

A step record of format 2 wrote a tool call four times (in the messages it added, the
step's output messages, the response and the tool execution), the output messages twice,
and every field at its default. Format 3 writes the step and the messages a record adds
with three rules (the codec's compact encoders, ``codec.compact_record``, and
``compact_step``); the reader decodes them with the compact decoders, after
``resolve_step`` has written out what refers to the step's response (``records.compact.thick``
of that is the JSON the codec writes, the form the compact one stands for):

- a field at its default is left out (a JSON value equal to the default's, of its type),
  and a step's input that refers to the conversation (``MessagesRef``) is its prefix alone;
- ``kind`` is left out where the field says which record it holds (``compact_class``: one
  record class, or a sequence of one); a ``Blob`` reference keeps it, so that blobs are
  found by it;
- in a step, the assistant's output message that is its response as it came
  (``InferenceResponse.to_message``) is the text ``"response"``, and a tool execution's
  call that is the response's call of that id is the id's text.

A record whose messages section adds exactly the step's output messages leaves ``add``
out (``records.step_payload``); the changes of the state it lists hold their records
compact too (``compact_field``). Values the codec writes otherwise (texts, parts, maps,
a sub-agent's state) are as format 2 writes them.
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Any, Final

from agents.records.codec import Encoding, encode_field
from agents.records.compact import plan, thick
from agents.records.compiled.encoders import RESPONSE
from agents.records.encoding import compact_encoder_of, encode_any
from agents.records.frozen import EMPTY_MAP
from agents.records.messages import Message, Role
from agents.records.registry import Refs
from agents.records.step import StepExecution

__all__ = [
    "RESPONSE",
    "compact_field",
    "compact_step",
    "resolve_step",
    "thick_field",
]


def compact_field(record: Any, name: str, encoding: Encoding | None) -> Any:
    """Field ``name`` of ``record`` as ``codec.encode_field`` writes it (a change of the
    state, field by field), the records it holds compact where the field says their
    class."""
    value = getattr(record, name)
    if value.__class__ in _LEAVES:  # (most steps' one change: the time) no lookup needed
        return encode_any(value, Encoding(None) if encoding is None else encoding)
    held = _held(record.__class__, name)
    if held is None or value is None:
        return encode_field(record, name, encoding)
    inner, many = held
    items = value if many else (value,)
    if not all(type(item) is inner for item in items):  # the full encoder says what is wrong
        return encode_field(record, name, encoding)
    encode = compact_encoder_of(inner)
    encoding = Encoding(None) if encoding is None else encoding
    return [encode(item, encoding) for item in value] if many else encode(value, encoding)


# Values every field writes as ``encode_value`` does (not ``None``, which a field may leave
# out; not a float, which ``encode_field`` writes unnoted in a field of texts or flags).
_LEAVES: Final = frozenset({str, int, bool, datetime})


def thick_field(cls: type, name: str, data: Any) -> Any:
    """The JSON ``encode_field`` writes for field ``name`` of a ``cls`` record, from what
    ``compact_field`` wrote."""
    held = _held(cls, name)
    if held is None or data is None:
        return data
    inner, many = held
    if many:
        return [thick(item, inner) for item in data] if type(data) is list else data
    return thick(data, inner)


@functools.cache
def _held(cls: type, name: str) -> tuple[type, bool] | None:
    for field in plan(cls):
        if field.name == name:
            return None if field.inner is None else (field.inner, field.many)
    return None


def compact_step(
    step_execution: StepExecution,
    context: Any,
    encoding: Encoding,
    head: tuple[Any, ...] | None = None,
) -> Any:
    """A step execution's compact JSON (``encode_step_execution(..., compact=True)``, its
    input referring to ``context``'s conversation, whose ``head`` may be given) with what
    the step's response says written as a reference to it: the encoders write the output
    message and the calls found here (``Refs.response``, ``Refs.calls``) as references."""
    step = step_execution.step
    response, outputs = step.response, step.output_messages
    refs = encoding.refs = Refs(context, head)
    if response is not None:
        if outputs and _is_response(outputs[0], response):
            refs.response = outputs[0]
        calls: dict[Any, Any] = {}
        for call in response.tool_calls:
            if isinstance(call.id, str):  # (else its encoder refuses it)
                calls.setdefault(call.id, call)  # a repeated id: its first call only
        refs.calls = calls
    try:
        return compact_encoder_of(step_execution.__class__)(step_execution, encoding)
    finally:  # (the encoding goes on to the state's changes, which hold no references)
        refs.response = refs.calls = None


def _is_response(message: Any, response: Any) -> bool:
    """Whether ``message`` is ``response.to_message()`` exactly (its content and calls the
    response's own objects: equal values of other types, ``0`` and ``false``, differ), told
    field by field without making that message."""
    metadata = message.metadata
    return (
        message.content is response.content
        and message.tool_calls is response.tool_calls
        and message.__class__ is Message
        and message.role is Role.ASSISTANT
        and message.tool_call_id is None
        and message.name is None
        and (metadata is EMPTY_MAP or metadata == EMPTY_MAP)
    )


def resolve_step(data: Any) -> Any:
    """A compact step execution (``compact_step``) with what refers to its response
    written out, still compact: the output message ``"response"`` and the tool calls named
    by id. ``data`` is left as it is (what is changed is copied); what is malformed is left
    for the decoder to refuse."""
    step = data.get("step") if type(data) is dict else None
    if type(step) is not dict or type(step.get("response")) is not dict:
        return data
    response, step = step["response"], dict(step)
    outputs = step.get("output_messages")
    if type(outputs) is list and RESPONSE in outputs:
        message = {"role": "assistant"}
        message.update((key, response[key]) for key in ("content", "tool_calls") if key in response)
        step["output_messages"] = [message if item == RESPONSE else item for item in outputs]
    executions, calls = step.get("tool_executions"), response.get("tool_calls")
    if type(executions) is list and type(calls) is list:
        by_id: dict[Any, Any] = {}
        for call in calls:
            if type(call) is dict and type(call.get("id")) is str:
                by_id.setdefault(call["id"], call)
        step["tool_executions"] = [
            {**execution, "tool_call": by_id.get(execution["tool_call"], execution["tool_call"])}
            if type(execution) is dict and type(execution.get("tool_call")) is str
            else execution
            for execution in executions
        ]
    return {**data, "step": step}
