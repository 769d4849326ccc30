"""Hypothesis strategies for agents: messages, tool calls, model answers, whole scripts and
histories (docs/design/testing.md). The only module of the library that imports hypothesis.

``scripts(tools)`` generates what a model may do — answer, call one tool or several at once,
call a tool that does not exist, send invalid JSON or mistyped arguments, fail — with usage
and cost, as a list of ``ScriptedDriver`` steps. Valid arguments are drawn from each tool's
JSON schema (or from the strategies given in ``arguments=``). Strategies are built so that
failures shrink to short, readable scripts: fewer steps, fewer calls, plain values.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from agents.drivers.scripted import ScriptedDriver, ScriptStep, call, calls, fail, reply
from agents.records.content import (
    AudioPart,
    DocumentPart,
    FilePart,
    ImagePart,
    ReasoningPart,
    TextPart,
)
from agents.records.inference import InferenceRequest, InferenceResponse
from agents.records.messages import Message, Role
from agents.records.state import AgentState
from agents.records.usage import Usage
from agents.shell.loop import AgentLoop
from agents.testing.clocks import SequentialIds, TickingClock
from agents.tools.tool import Tool, Tools

__all__ = [
    "AgentMachine",
    "agent_states",
    "contents",
    "from_schema",
    "inference_responses",
    "messages",
    "parts",
    "scripts",
    "texts",
    "tool_calls",
    "usages",
]

ArgumentStrategies = Mapping[str, Mapping[str, st.SearchStrategy[Any]]]


def texts(max_size: int = 20) -> st.SearchStrategy[str]:
    """Short text, any Unicode a model may send (no lone surrogates)."""
    return st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=max_size)


def usages() -> st.SearchStrategy[Usage]:
    """Token usage and a finite, non-negative cost."""
    return st.builds(
        Usage,
        input_tokens=st.integers(0, 2_000),
        output_tokens=st.integers(0, 500),
        cache_read_tokens=st.integers(0, 100),
        cost=st.floats(0, 1, allow_nan=False, allow_infinity=False),
        # none at first, so that failures shrink to a usage without them in one step
        cache_write_tokens=st.just(0) | st.integers(1, 100),
        reasoning_tokens=st.just(0) | st.integers(1, 100),
    )


def messages(
    roles: Iterable[Role] = (Role.USER, Role.ASSISTANT, Role.SYSTEM),
    with_parts: bool = False,
) -> st.SearchStrategy[Message]:
    """Plain conversation messages (no tool calls); ``with_parts``: their content text or
    a list of parts (``parts()``)."""
    content = contents() if with_parts else texts()
    return st.builds(
        lambda role, body: Message(role=role, content=body), st.sampled_from(list(roles)), content
    )


_SIGNED: Final = {  # media types and the first bytes their signatures ask for
    ImagePart: (("image/png", b"\x89PNG\r\n\x1a\n"), ("image/gif", b"GIF89a")),
    AudioPart: (("audio/ogg", b"OggS"), ("audio/flac", b"fLaC")),
    DocumentPart: (("application/pdf", b"%PDF-"),),
    FilePart: (("application/octet-stream", b""), ("application/zip", b"PK")),
}


def parts() -> st.SearchStrategy[Any]:
    """Message parts: text, reasoning (signed, redacted or plain), images, audio, documents
    and files made from small bytes (held in memory), and media by URL."""
    media = st.sampled_from(list(_SIGNED)).flatmap(
        lambda kind: st.builds(
            lambda signed, tail: kind.from_bytes(signed[1] + tail, signed[0]),
            st.sampled_from(_SIGNED[kind]),
            st.binary(max_size=64),
        )
    )
    by_url = st.builds(
        lambda name: ImagePart.from_url(f"https://example.com/{name}.png"),
        st.text("abcdefgh", min_size=1, max_size=8),
    )
    reasoning = st.builds(
        ReasoningPart,
        text=texts(),
        signature=st.none() | st.text("abcdef0123", min_size=1, max_size=16),
        redacted=st.none() | st.text("xyz=", min_size=1, max_size=8),
    )
    return st.one_of(st.builds(TextPart, text=texts()), reasoning, media, by_url)


def contents() -> st.SearchStrategy[Any]:
    """What a message holds: text, or a list of text and parts."""
    return texts() | st.lists(texts() | parts(), max_size=4)


def from_schema(schema: Mapping[str, Any]) -> st.SearchStrategy[Any]:
    """Values valid for a JSON schema of the subset ``@tool`` produces."""
    if "enum" in schema:
        return st.sampled_from(list(schema["enum"]))
    if "anyOf" in schema:
        return st.one_of([from_schema(option) for option in schema["anyOf"]])
    kind = schema.get("type")
    if kind == "string":
        return texts()
    if kind == "integer":
        return st.integers(-1_000, 1_000)
    if kind == "number":
        return st.one_of(
            st.integers(-1_000, 1_000), st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
        )
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        if "prefixItems" in schema:
            return st.tuples(*(from_schema(item) for item in schema["prefixItems"])).map(list)
        return st.lists(from_schema(schema.get("items", {})), max_size=3)
    if kind == "object":
        return _objects(schema, {})
    return st.one_of(st.none(), st.booleans(), st.integers(-100, 100), texts(5))


def _objects(
    schema: Mapping[str, Any], overrides: Mapping[str, st.SearchStrategy[Any]]
) -> st.SearchStrategy[dict[str, Any]]:
    properties = schema.get("properties", {})
    required = set(schema.get("required", ()))
    fields = {name: overrides.get(name, from_schema(sub)) for name, sub in properties.items()}
    needed = {name: fields[name] for name in properties if name in required}
    optional = {name: fields[name] for name in properties if name not in required}
    return st.fixed_dictionaries(needed, optional=optional)


def _valid_arguments(
    tool: Tool, arguments: ArgumentStrategies
) -> st.SearchStrategy[dict[str, Any]]:
    return _objects(tool.parameters, arguments.get(tool.name, {}))


def _mistyped(tool: Tool) -> st.SearchStrategy[dict[str, Any]]:
    """Arguments with one value of the wrong JSON type."""
    properties = dict(tool.parameters.get("properties", {}))
    if not properties:
        return st.just({"unexpected": 1})
    name = sorted(properties)[0]
    wrong = {"string": 1, "integer": "one", "number": "one", "boolean": "yes"}.get(
        properties[name].get("type", ""), []
    )
    return st.just({name: wrong})


def tool_calls(
    tools: Sequence[Tool] | Tools | None = None,
    *,
    arguments: ArgumentStrategies | None = None,
    invalid: bool = True,
) -> st.SearchStrategy[ScriptStep]:
    """One tool call as a script step: valid arguments first (they shrink best), then — with
    ``invalid=True`` — mistyped or missing arguments, invalid JSON and unknown tools."""
    known = list(Tools.of(tools or ()).values())
    overrides = arguments or {}
    options: list[st.SearchStrategy[ScriptStep]] = [
        _valid_arguments(t, overrides).map(_caller(t.name)) for t in known
    ]
    if invalid:
        options.append(st.sampled_from(["no_such_tool", "lookup"]).map(lambda name: call(name)))
        for t in known:
            options.append(_mistyped(t).map(_caller(t.name)))
            options.append(st.just(call(t.name, '{"truncated": ')))
            if t.parameters.get("required"):
                options.append(st.just(call(t.name, {})))
    if not options:
        options.append(st.just(call("no_such_tool")))
    return st.one_of(options)


def _caller(name: str) -> Callable[[dict[str, Any]], ScriptStep]:
    return lambda arguments: call(name, arguments)


def _step(
    tools: Sequence[Tool] | Tools | None,
    arguments: ArgumentStrategies,
    failures: bool,
    parallel: int,
) -> st.SearchStrategy[ScriptStep]:
    answer = st.builds(lambda text, usage: reply(text, usage=usage), texts(), usages())
    one_call = tool_calls(tools, arguments=arguments, invalid=failures)
    batch = st.builds(
        lambda specs, usage: calls(*specs, usage=usage),
        st.lists(one_call, min_size=1, max_size=parallel),
        usages(),
    )
    options = [batch, answer]
    if failures:
        options.append(texts(12).map(lambda text: fail(ConnectionError(text or "unreachable"))))
    return st.one_of(options)


def scripts(
    tools: Sequence[Tool] | Tools | None = None,
    max_steps: int = 5,
    failures: bool = True,
    *,
    arguments: ArgumentStrategies | None = None,
    parallel: int = 3,
    final_answer: bool = False,
) -> st.SearchStrategy[list[ScriptStep]]:
    """Scripts of up to ``max_steps`` model answers (see the module docs).

    ``arguments`` overrides argument strategies per tool and parameter
    (``{"refund": {"order_id": st.sampled_from(["A-1"])}}``); ``final_answer=True`` ends
    every script with a plain answer.
    """
    steps = st.lists(_step(tools, arguments or {}, failures, parallel), max_size=max_steps)
    if final_answer:
        return st.builds(
            lambda body, end: [*body, end], steps, st.builds(lambda text: reply(text), texts())
        )
    return steps


_NO_REQUEST = InferenceRequest(messages=(), tools=())  # what a scripted answer is made for


def inference_responses(
    tools: Sequence[Tool] | Tools | None = None,
) -> st.SearchStrategy[InferenceResponse]:
    """Model answers: text, or tool calls (valid and not), with usage."""

    def build(step: ScriptStep) -> InferenceResponse:
        return ScriptedDriver([step]).infer(_NO_REQUEST)

    return _step(tools, {}, True, 3).filter(lambda s: not _is_failure(s)).map(build)


def _is_failure(step: ScriptStep) -> bool:
    return type(step).__name__ == "_Fail"


def agent_states(
    tools: Sequence[Tool] | Tools | None = None,
    max_steps: int = 5,
    with_parts: bool = False,
    **loop_options: Any,
) -> st.SearchStrategy[AgentState]:
    """Complete histories: generated scripts run through ``AgentLoop`` with a ticking clock
    and sequential ids (extra keyword arguments go to the loop); ``with_parts``: the
    question is text or a list of parts (``contents()``)."""
    collection = Tools.of(tools or ())

    def run(script: list[ScriptStep], prompt: str, question: Any) -> AgentState:
        loop = AgentLoop(
            ScriptedDriver(script),
            tools=collection,
            clock=TickingClock(),
            ids=SequentialIds(),
            **loop_options,
        )
        return loop.run(AgentState.initial(prompt, messages=[question]))

    question = contents() if with_parts else texts()
    return st.builds(run, scripts(collection, max_steps=max_steps), texts(), question)


# -- model-based testing ------------------------------------------------------------------


class AgentMachine(RuleBasedStateMachine):
    """A Hypothesis state machine for model-testing your own agent: subclass it, set
    ``tools`` (and override ``make_loop`` for hooks, limits, interceptors), add rules and
    invariants of your own, and run it with ``YourMachine.TestCase``.

    Rules: a user message arrives; the model will behave some way (a generated script step
    is queued); a tool call is made to fail (the next run's first call raises); the next run
    is cancelled; the agent runs (queued steps, then a final answer). After every rule the
    history must satisfy ``check_invariants`` and your ``check(state)``.
    """

    tools: Sequence[Tool] = ()
    system_prompt: str = "You are the agent under test."
    max_steps: int = 8

    def __init__(self) -> None:
        super().__init__()
        self.state = AgentState.initial(self.system_prompt)
        self.queued: list[ScriptStep] = []
        self.cancel_next = False
        self.fail_next_tool = False
        self.runs = 0

    def make_loop(self, driver: ScriptedDriver, **options: Any) -> AgentLoop:
        """The loop under test (override to add hooks, limits or interceptors)."""
        return AgentLoop(
            driver,
            tools=self.tools,
            max_steps=self.max_steps,
            clock=TickingClock(),
            ids=SequentialIds(f"run{self.runs}-"),
            **options,
        )

    def check(self, state: AgentState) -> None:
        """Your own properties of every history (override; raise AssertionError)."""

    @rule(text=texts())
    def user_message(self, text: str) -> None:
        """A user says something."""
        self.state = self.state.with_user_message(text)

    @rule(data=st.data())
    def model_behaviour(self, data: st.DataObject) -> None:
        """The model will answer this way at its next turn."""
        self.queued.append(data.draw(_step(self.tools, {}, True, 3), label="model"))

    @rule()
    def tool_fails(self) -> None:
        """The next tool call raises."""
        self.fail_next_tool = True

    @rule()
    def cancellation(self) -> None:
        """The next run is cancelled before its first step."""
        self.cancel_next = True

    @rule()
    def run_agent(self) -> None:
        """The agent runs: queued model behaviour, then a final answer."""
        from agents.core.cancellation import CancellationToken
        from agents.core.hooks import tool_interceptor
        from agents.testing.invariants import check_invariants

        self.runs += 1
        interceptors: list[Any] = []
        if self.fail_next_tool:
            failed: list[bool] = []

            @tool_interceptor
            def failing(tool_call: Any, call_next: Any) -> Any:
                if not failed:
                    failed.append(True)
                    raise RuntimeError("injected tool failure")
                return call_next(tool_call)

            interceptors.append(failing)
        token = CancellationToken()
        if self.cancel_next:
            token.cancel("cancelled by the state machine")
        driver = ScriptedDriver([*self.queued, reply("done")])
        final = self.make_loop(driver, interceptors=interceptors).run(
            self.state, cancellation=token
        )
        self.queued, self.cancel_next, self.fail_next_tool = [], False, False
        problems = check_invariants(final)
        assert not problems, problems
        self.check(final)
        self.state = final

    @invariant()
    def history_is_sound(self) -> None:
        """The current state always satisfies the invariants."""
        from agents.testing.invariants import check_invariants

        problems = check_invariants(self.state)
        assert not problems, problems
