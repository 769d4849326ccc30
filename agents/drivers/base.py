"""The driver protocols, where drivers find them (defined in ``agents.core.driver``)."""

from agents.core.driver import AsyncDriver, Driver, SyncDriver

__all__ = ["AsyncDriver", "Driver", "SyncDriver"]
