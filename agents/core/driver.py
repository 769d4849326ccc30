"""The driver protocols: ``infer(request)`` and/or ``async ainfer(request)`` (in the core,
since the loop is typed by them; the drivers themselves are edges, ``agents.drivers``)."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from agents.records.inference import InferenceRequest, InferenceResponse

__all__ = ["AsyncDriver", "Driver", "SyncDriver"]


@runtime_checkable
class SyncDriver(Protocol):
    """Answers a request synchronously."""

    def infer(self, request: InferenceRequest) -> InferenceResponse: ...


@runtime_checkable
class AsyncDriver(Protocol):
    """Answers a request in an event loop."""

    async def ainfer(self, request: InferenceRequest) -> InferenceResponse: ...


Driver = SyncDriver | AsyncDriver
"""A driver has ``infer``, ``ainfer`` or both; the loop uses what its runner needs."""
