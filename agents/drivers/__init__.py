"""Drivers answer inference requests: scripted, function-backed, and (later) real models."""

from agents.drivers.base import AsyncDriver, Driver, SyncDriver
from agents.drivers.function import FunctionDriver
from agents.drivers.scripted import ScriptedDriver, ScriptStep, call, calls, fail, reply

__all__ = [
    "AsyncDriver",
    "Driver",
    "FunctionDriver",
    "ScriptStep",
    "ScriptedDriver",
    "SyncDriver",
    "call",
    "calls",
    "fail",
    "reply",
]
