"""Tools for crash-testing agents built on durable (public and documented in the README)."""

from ..engine.clock import FakeClock
from .crash import CrashableStorage, crash

__all__ = ["CrashableStorage", "FakeClock", "crash"]
