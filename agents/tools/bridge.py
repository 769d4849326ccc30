"""Running async code from synchronous code, even where an event loop is already running."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["run_coroutine"]

R = TypeVar("R")


def run_coroutine(coroutine: Coroutine[Any, Any, R]) -> R:
    """Run a coroutine to completion from synchronous code, even inside a running loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    result: list[R] = []
    failure: list[BaseException] = []

    def target() -> None:
        try:
            result.append(asyncio.run(coroutine))
        except BaseException as exc:
            failure.append(exc)

    thread = threading.Thread(target=target, name="agents-coroutine")
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return result[0]
