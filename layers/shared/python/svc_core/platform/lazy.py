"""A module imported on its first attribute use (importlib's LazyLoader, as its documentation shows).

A function module names its pydantic models through one (svc_core/domain/models): a request that
binds no body never uses an attribute of it, so never pays pydantic's import.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def lazy_module(name: str) -> ModuleType:
    """The module `name`, whose code runs when an attribute of it is first read (at once when it
    is already imported)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module
