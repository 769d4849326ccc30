"""The driver is a thin adapter: ``LiteLLMDriver`` against bare ``litellm.completion``.

Both send the same 100 requests (a system prompt, a user message, one tool schema) to the
local chat-completions server of the tests, over real HTTP on 127.0.0.1, in one process,
interleaved in rounds; the figure is the ratio of the best rounds (target <= 1.10x). The
driver's extra work: mapping messages and tools, parsing the answer into records, and
pricing the usage with litellm's price data.

Run: ``.venv/bin/python benchmarks/bench_llm.py [--quick]``
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from llm_server import LLMServer, answer

from agents import InferenceRequest, LiteLLMDriver, Message, tool

MODEL = "openai/gpt-4o-mini"  # a model litellm prices, so the driver's cost path runs


@tool
def lookup(city: str) -> str:
    """Look up a city."""
    return city


def rounds(server: LLMServer, requests: int, repeats: int) -> tuple[list[float], list[float]]:
    import litellm

    driver = LiteLLMDriver(MODEL, api_base=server.base_url, api_key="sk-bench", num_retries=0)
    request = InferenceRequest(
        messages=[Message.system("You are terse."), Message.user("Where is Oslo?")],
        tools=[lookup.schema],
    )
    plain_messages = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Where is Oslo?"},
    ]
    plain_tools = [{"type": "function", "function": lookup.schema}]

    def bare() -> Any:
        return litellm.completion(
            model=MODEL,
            messages=plain_messages,
            tools=plain_tools,
            api_base=server.base_url,
            api_key="sk-bench",
            max_retries=0,
            timeout=60.0,
        )

    def ours() -> Any:
        return driver.infer(request)

    server.plan(*[answer("In Norway.") for _ in range(20)])
    for _ in range(10):  # warm both paths (connection pool, pydantic models, price map)
        bare()
        ours()
    driver_times, bare_times = [], []
    for _ in range(repeats):
        for label, call in (("bare", bare), ("driver", ours)):
            server.plan(*[answer("In Norway.") for _ in range(requests)])
            start = time.perf_counter()
            for _ in range(requests):
                call()
            elapsed = time.perf_counter() - start
            (bare_times if label == "bare" else driver_times).append(elapsed)
    return driver_times, bare_times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    requests, repeats = (100, 3) if args.quick else (100, 9)
    with LLMServer() as server:
        driver_times, bare_times = rounds(server, requests, repeats)
    best_driver, best_bare = min(driver_times), min(bare_times)
    print(f"{requests} requests, best of {repeats} rounds:")
    print(
        f"  bare litellm.completion: {best_bare * 1000:.0f} ms "
        f"({best_bare / requests * 1e6:.0f} µs per request)"
    )
    print(
        f"  LiteLLMDriver.infer:     {best_driver * 1000:.0f} ms "
        f"({best_driver / requests * 1e6:.0f} µs per request)"
    )
    print(f"  ratio: {best_driver / best_bare:.3f}x (target <= 1.10x)")
    imported = subprocess.run(
        [sys.executable, "-c", "import sys, agents; print('litellm' in sys.modules)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    print(f"import agents imports litellm: {imported}")


if __name__ == "__main__":
    main()
