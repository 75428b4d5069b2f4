"""Which container a cached value belongs to.

In Lambda a process is one container of one function, so every cache of this layer (secrets,
credentials, tenant policies) belongs to it and this key never changes. A process that runs several
functions at once (the local stack, the tests) names the function running (use_scope), so each
function keeps caches of its own, as its containers do on AWS: a value one function read is never
served to another function, which would then skip a read that its own role may not allow."""

from __future__ import annotations

from collections.abc import Callable, Hashable

_scope: list[Callable[[], Hashable]] = [lambda: None]


def key() -> Hashable:
    """The running function's part of a cache key (None in Lambda: one function a process)."""
    return _scope[0]()


def use_scope(provider: Callable[[], Hashable]) -> None:
    _scope[0] = provider
