"""Injected time and identity (docs/design/determinism.md): the defaults and the deterministic
doubles."""

from __future__ import annotations

import os
import threading
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from agents import RandomIds, SystemClock
from agents.testing import FixedClock, SequentialIds, TickingClock


def test_system_clock_is_aware_utc():
    """The default clock tells aware UTC times."""
    now = SystemClock().now()
    assert now.tzinfo is not None and now.utcoffset() == timedelta(0)


def test_random_ids_are_uuid4_and_distinct():
    """Default ids are uuid4-formatted and do not repeat."""
    ids = RandomIds()
    made = {ids.new_id("step") for _ in range(1_000)}
    assert len(made) == 1_000
    for text in made:  # each one canonical, version 4, RFC 4122's variant
        parsed = uuid.UUID(text)
        assert (str(parsed), parsed.version, parsed.variant) == (text, 4, uuid.RFC_4122)
    assert {text[19] for text in made} == set("89ab")  # the variant keeps its two random bits


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_random_ids_are_reseeded_in_a_forked_child():
    """A forked child does not repeat its parent's ids."""
    ids = RandomIds()
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        os.write(writer, ids.new_id("x").encode())
        os._exit(0)
    os.close(writer)
    child_id = os.read(reader, 100).decode()
    os.close(reader)
    os.waitpid(pid, 0)
    assert child_id != ids.new_id("x")


def test_ticking_clock_steps_and_is_thread_safe():
    """Each reading is ``step`` after the previous one, even across threads."""
    clock = TickingClock(datetime(2030, 1, 1, tzinfo=UTC), timedelta(seconds=1))
    readings: list[datetime] = []
    lock = threading.Lock()

    def read() -> None:
        for _ in range(100):
            value = clock.now()
            with lock:
                readings.append(value)

    threads = [threading.Thread(target=read) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(readings) == [
        datetime(2030, 1, 1, tzinfo=UTC) + timedelta(seconds=i) for i in range(400)
    ]


def test_fixed_clock_moves_only_when_told():
    """A fixed clock stays put until ``set`` or ``advance``."""
    clock = FixedClock()
    first = clock.now()
    assert clock.now() == first
    clock.advance(2.5)
    assert clock.now() - first == timedelta(seconds=2.5)
    with pytest.raises(ValueError, match="aware"):
        FixedClock(datetime(2030, 1, 1))


def test_sequential_ids_count_each_kind():
    """Ids are ``<prefix><kind>-<n>``, counting per kind."""
    ids = SequentialIds("t-")
    assert [ids.new_id("step"), ids.new_id("step"), ids.new_id("tool")] == [
        "t-step-1",
        "t-step-2",
        "t-tool-1",
    ]
