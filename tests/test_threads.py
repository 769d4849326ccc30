"""``agents.tools.threads.to_thread``: synchronous calls from an event loop on worker threads."""

from __future__ import annotations

import asyncio
import contextvars
import os
import sys
import threading
import time

import pytest

from agents.tools import threads
from agents.tools.threads import to_thread

WHO: contextvars.ContextVar[str] = contextvars.ContextVar("WHO", default="nobody")


def test_a_call_runs_on_another_thread_in_a_copy_of_the_callers_context():
    """The function sees the caller's context variables, on a thread that is not the loop's;
    what it sets there does not leak back."""

    def look(suffix: str, *, twice: bool) -> tuple[str, threading.Thread]:
        seen = WHO.get() * (2 if twice else 1) + suffix
        WHO.set("changed")
        return seen, threading.current_thread()

    async def main() -> tuple[str, threading.Thread, str]:
        WHO.set("run-1")
        seen, thread = await to_thread(look, "!", twice=True)
        return seen, thread, WHO.get()

    seen, thread, after = asyncio.run(main())
    assert (seen, after) == ("run-1run-1!", "run-1")
    assert thread is not threading.current_thread()


def test_an_exception_reaches_the_awaiting_task():
    """An exception raised by the function is raised where the call is awaited."""

    def broken() -> None:
        raise KeyError("nope")

    async def main() -> None:
        await to_thread(broken)

    with pytest.raises(KeyError, match="nope"):
        asyncio.run(main())


def test_many_calls_at_once_each_get_their_own_result():
    """Two thousand calls in flight from one loop, some failing, each awaited task gets its
    own outcome (results are handed back in batches)."""

    def square(x: int) -> int:
        if x % 7 == 0:
            raise ValueError(x)
        return x * x

    async def one(x: int) -> int | str:
        try:
            return await to_thread(square, x)
        except ValueError as exc:
            return f"failed {exc}"

    async def main() -> list[int | str]:
        return await asyncio.gather(*(one(x) for x in range(2_000)))

    assert asyncio.run(main()) == [f"failed {x}" if x % 7 == 0 else x * x for x in range(2_000)]


def test_a_cancelled_wait_leaves_the_other_calls_alone():
    """Cancelling one awaiting task (its call goes on: a thread cannot be stopped) does not
    disturb the results of the calls around it."""
    release = threading.Event()

    def slow() -> str:
        release.wait(5)
        return "slow"

    async def main() -> tuple[bool, list[int]]:
        waiting = asyncio.ensure_future(to_thread(slow))
        await asyncio.sleep(0.01)
        waiting.cancel()
        others = await asyncio.gather(*(to_thread(lambda x=x: x + 1) for x in range(50)))
        release.set()
        await asyncio.sleep(0.05)  # the slow call ends after its waiter is gone
        return waiting.cancelled(), others

    cancelled, others = asyncio.run(main())
    assert cancelled
    assert others == list(range(1, 51))


def test_loops_on_several_threads_share_the_workers():
    """Event loops running at once on their own threads each get back their own results."""
    results: dict[int, list[int]] = {}

    def serve(number: int) -> None:
        async def main() -> list[int]:
            return await asyncio.gather(
                *(to_thread(lambda x=x: number * 1_000 + x) for x in range(200))
            )

        results[number] = asyncio.run(main())

    runners = [threading.Thread(target=serve, args=(n,)) for n in range(4)]
    for runner in runners:
        runner.start()
    for runner in runners:
        runner.join(10)
    assert results == {n: [n * 1_000 + x for x in range(200)] for n in range(4)}


def test_no_more_calls_run_at_once_than_the_limit():
    """Calls beyond the limit wait for a worker (as many as asyncio's default executor)."""
    lock = threading.Lock()
    running = [0, 0]  # now, most

    def busy() -> None:
        with lock:
            running[0] += 1
            running[1] = max(running[1], running[0])
        time.sleep(0.01)
        with lock:
            running[0] -= 1

    async def main() -> None:
        await asyncio.gather(*(to_thread(busy) for _ in range(threads._LIMIT * 3)))

    asyncio.run(main())
    assert 1 < running[1] <= threads._LIMIT


def test_idle_workers_leave_and_new_ones_start_when_needed():
    """A worker with nothing to do for a while ends; a later call starts another."""
    workers = threads._Workers(2, idle_seconds=0.05)
    returns = threads._Returns()

    async def call(value: int) -> int:
        future = asyncio.get_running_loop().create_future()
        workers.submit((returns, future, contextvars.copy_context(), lambda: value, (), {}))
        result: int = await future
        return result

    async def main() -> tuple[int, int, int]:
        first = await call(1)
        deadline = time.monotonic() + 5
        while workers._threads and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        left = workers._threads
        return first, left, await call(2)

    assert asyncio.run(main()) == (1, 0, 2)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() on this platform")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_a_forked_child_starts_its_own_workers():
    """After ``fork()`` the child has none of the parent's worker threads: its calls start
    new ones instead of waiting forever for threads that do not exist there."""

    async def answer() -> int:
        return await asyncio.wait_for(to_thread(lambda: 41 + 1), 5)

    asyncio.run(answer())  # the parent has a worker now
    pid = os.fork()
    if pid == 0:  # the child: exit 0 when the call comes back
        try:
            code = 0 if asyncio.run(answer()) == 42 else 1
        except BaseException:
            code = 2
        sys.stdout.flush()
        os._exit(code)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.01)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    pytest.fail("the forked child's call never came back")


def test_a_stop_iteration_becomes_an_error_instead_of_a_hang():
    """A future refuses ``StopIteration`` (``asyncio.to_thread`` leaves its waiter hanging):
    the waiter gets a ``RuntimeError`` caused by it, and the calls beside it their results."""

    def stops() -> None:
        raise StopIteration

    async def main() -> tuple[BaseException, list[int]]:
        failed = asyncio.ensure_future(to_thread(stops))
        others = await asyncio.wait_for(
            asyncio.gather(*(to_thread(lambda x=x: x) for x in range(20))), 5
        )
        with pytest.raises(RuntimeError, match="StopIteration") as caught:
            await asyncio.wait_for(failed, 5)
        return caught.value, others

    error, others = asyncio.run(main())
    assert isinstance(error.__cause__, StopIteration)
    assert others == list(range(20))


def test_a_loop_that_takes_no_weak_reference_still_gets_its_results():
    """Results are batched per loop in a table keyed weakly by loop; a loop type that takes
    no weak reference gets its results one batch a call."""

    class Unreferenceable:
        __slots__ = ()

    first, second = threads._returns_for(Unreferenceable()), threads._returns_for(Unreferenceable())  # type: ignore[arg-type]
    assert isinstance(first, threads._Returns)
    assert first is not second
