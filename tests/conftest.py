"""Shared test set-up: Hypothesis profiles and deterministic loop helpers."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

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


import pytest  # noqa: E402
import structlog  # noqa: E402


@pytest.fixture(autouse=True)
def _unconfigured_structlog():
    """Each test starts and ends with structlog unconfigured (capture_logs leaves it set)."""
    structlog.reset_defaults()
    yield
    structlog.reset_defaults()
