"""A module imported on its first attribute use.

A function module names its pydantic models through one (svc_core/domain/models): a request that
binds no body never reads an attribute of it, so never pays pydantic's import. Not importlib's
LazyLoader: on Python 3.11 two threads reading the module's first attribute at once could see it
half executed (the local stack serves requests on threads); importlib.import_module takes the
import lock, and this proxy's own lock makes the first import happen once.
"""

from __future__ import annotations

import importlib
import sys
import threading
import types
from typing import Any


class _LazyModule(types.ModuleType):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self._lock = threading.Lock()
        self._module: types.ModuleType | None = None

    def __getattr__(self, attribute: str) -> Any:  # only for what the proxy itself does not have
        module = self._module
        if module is None:
            with self._lock:
                if self._module is None:
                    self._module = importlib.import_module(self.__name__)
                module = self._module
        return getattr(module, attribute)

    def __repr__(self) -> str:
        return f"<lazy module {self.__name__!r}{' (loaded)' if self._module is not None else ''}>"


def lazy_module(name: str) -> types.ModuleType:
    """The module `name`, imported when an attribute of it is first read (the module itself when it
    is imported already)."""
    return sys.modules.get(name) or _LazyModule(name)
