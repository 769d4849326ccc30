"""Hypothesis strategies for model scripts over a small tool set (test-local)."""

from __future__ import annotations

from hypothesis import strategies as st

from agents import StopAgent, ToolResult, Usage, tool
from agents.testing import call, calls, fail, reply


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def echo(text: str) -> str:
    """Echo text."""
    return text


@tool
def explode() -> str:
    """Raise."""
    raise RuntimeError("tool failed")


@tool
def halt(why: str = "") -> str:
    """Stop the agent."""
    raise StopAgent(why)


@tool
def finish(answer: str = "") -> ToolResult:
    """Finish the run."""
    return ToolResult(answer, terminate=True)


TOOLS = (add, echo, explode, halt, finish)

texts = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
small_ints = st.integers(min_value=-1000, max_value=1000)

usages = st.builds(
    Usage,
    input_tokens=st.integers(0, 500),
    output_tokens=st.integers(0, 200),
    cache_read_tokens=st.integers(0, 50),
    cost=st.floats(min_value=0, max_value=1, allow_nan=False, allow_infinity=False),
)

single_calls = st.one_of(
    st.builds(lambda a, b: call("add", a=a, b=b), small_ints, small_ints),
    st.builds(lambda t: call("echo", text=t), texts),
    st.builds(lambda a: call("add", a=a, b="not a number"), small_ints),
    st.just(call("add", a=1)),
    st.builds(lambda name: call(name, x=1), st.sampled_from(["missing", "nope"])),
    st.just(call("add", '{"a": 1,')),
    st.just(call("explode")),
    st.builds(lambda w: call("halt", why=w), texts),
    st.builds(lambda a: call("finish", answer=a), texts),
)

steps = st.one_of(
    st.builds(lambda t, u: reply(t, usage=u), texts, usages),
    st.builds(
        lambda cs, u: calls(*cs, usage=u), st.lists(single_calls, min_size=1, max_size=3), usages
    ),
    st.builds(lambda m: fail(RuntimeError(m)), texts),
)

scripts = st.lists(steps, min_size=0, max_size=6)
