"""Shared test set-up: Hypothesis profiles and deterministic loop helpers."""

from __future__ import annotations

import os
import sys

# The suite starts about 300 Python processes (the command line, servers, DBOS workers) and
# three pytest workers. Where the environment turns bytecode caching off
# (PYTHONDONTWRITEBYTECODE), each of them compiled the package from source again and each
# worker rewrote the asserts of every test module and plugin anew (collecting took 14 s of
# CPU instead of 8, and starting the command line 0.3 s instead of 0.2). The test run caches
# bytecode whatever the environment says; this file loads before the workers start, so they
# and every process the tests start inherit it.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile("dev", max_examples=60, deadline=None)
# CI explores a fixed sequence of examples (derandomized) so that a green build stays green;
# the dev and thorough profiles draw new examples every run to keep finding new bugs.
settings.register_profile(
    "ci",
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
# A long hunt for counterexamples: the reference-model test alone runs 50,000 scripts.
settings.register_profile(
    "thorough",
    max_examples=50_000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


import uuid  # noqa: E402

import pytest  # noqa: E402
import structlog  # noqa: E402


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """``-n auto`` (pyproject's addopts) starts one worker more than the machine has cores.
    About a fifth of the suite waits on processes of its own (servers, DBOS workers, the
    command line), and the extra worker fills those waits: on the 2-core machine, 3:53
    against 4:13 with a worker a core (CONTRIBUTING.md, Testing).
    ``PYTEST_XDIST_AUTO_NUM_WORKERS`` still sets the number."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None  # read by xdist's own hook
    return (os.cpu_count() or 1) + 1


POSTGRES_DSN = os.environ.get(
    "AGENTS_TEST_POSTGRES_DSN", "postgresql://postgres@127.0.0.1:5432/test"
)


def _postgres_admin():
    """An autocommit connection to the test server; the test is skipped (with the reason)
    when psycopg or the server is missing."""
    psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed")
    try:
        return psycopg.connect(POSTGRES_DSN, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        pytest.skip(f"no PostgreSQL server at {POSTGRES_DSN} ({exc}); .ci/run starts one")


@pytest.fixture
def postgres_dsn():
    """A DSN whose search_path is a fresh schema, dropped after the test."""
    admin = _postgres_admin()
    schema = f"agents_test_{uuid.uuid4().hex[:12]}"
    admin.execute(f"CREATE SCHEMA {schema}")
    separator = "&" if "?" in POSTGRES_DSN else "?"
    try:
        yield f"{POSTGRES_DSN}{separator}options=-csearch_path%3D{schema}"
    finally:
        admin.execute(f"DROP SCHEMA {schema} CASCADE")
        admin.close()


@pytest.fixture
def postgres_database():
    """The URL of a fresh PostgreSQL database, dropped after the test (for what needs a
    database of its own: DBOS's tables, sessions and a ledger beside them)."""
    admin = _postgres_admin()
    name = f"agents_test_{uuid.uuid4().hex[:12]}"
    admin.execute(f"CREATE DATABASE {name}")
    try:
        yield POSTGRES_DSN.partition("?")[0].rsplit("/", 1)[0] + "/" + name
    finally:
        admin.execute(f"DROP DATABASE {name} WITH (FORCE)")
        admin.close()


@pytest.fixture(autouse=True)
def _unconfigured_structlog():
    """Each test starts and ends with structlog unconfigured (capture_logs leaves it set)."""
    structlog.reset_defaults()
    yield
    structlog.reset_defaults()


@pytest.fixture(autouse=True, scope="session")
def _no_implicit_event_loop():
    """The main thread gets no event loop by asking for one (as from Python 3.14 on).

    litellm's service logger calls ``asyncio.get_event_loop()`` after each synchronous
    completion; on Python 3.11-3.13 that makes a new loop in the main thread which nobody
    closes, and its ``ResourceWarning`` fails whichever test the collector happens to be in
    when the next ``asyncio.run`` drops it. With no implicit loop, litellm runs its hook
    with ``asyncio.run`` and closes it (its own code path for Python 3.14)."""
    import asyncio

    asyncio.set_event_loop(None)
