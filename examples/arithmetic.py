"""The agent of docs/how-to/evals.md: a model that adds, right four times in five (a seeded
stand-in for a live model that is not sure), and a "careless" version of it that gets
"3+3" right one time in five. Evaluate and compare them:

    agents eval examples/sums.yaml examples.arithmetic:loop --trials 30 --out base
    agents eval examples/sums.yaml examples.arithmetic:careless --trials 30 --baseline base
"""

from __future__ import annotations

import random

from agents import AgentLoop, InferenceRequest
from agents.testing import FunctionDriver


def _adder(right: dict[str, float], seed: int) -> AgentLoop:
    rng = random.Random(seed)

    def answer(request: InferenceRequest) -> str:
        question = request.messages[-1].text
        a, b = (int(x) for x in question.split("+"))
        return str(a + b) if rng.random() < right.get(question, 0.8) else "I am not sure."

    return AgentLoop(FunctionDriver(answer))


def loop() -> AgentLoop:
    """The agent: each sum right four times in five."""
    return _adder({}, seed=1)


def careless() -> AgentLoop:
    """After a change: "3+3" right one time in five."""
    return _adder({"3+3": 0.2}, seed=2)
