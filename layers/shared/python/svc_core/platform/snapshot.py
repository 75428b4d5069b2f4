"""Lambda SnapStart: what runs before the snapshot is taken and after a snapshot is restored.

A snapshot is taken once, after the init phase of a published version, and every new execution
environment of that version resumes from it. So whatever the snapshot holds is shared by all of
them: it may hold code, parsed models, compiled validators and the routes, never a credential, a
secret, an open connection or a random state.

- A module that caches something of that kind calls `forget_on_restore(reset)` when imported;
  `after_restore()` runs every such reset, re-seeds `random`, and so the first request after a
  restore fetches credentials and secrets afresh and opens its own connections. The resets run
  before the snapshot too, after the before-snapshot hook: what the hook fetched (the credentials
  that read the key pepper, its connection) is not in the snapshot either.
- `register(before)` hands the hooks to the runtime's `snapshot_restore_py`. That module exists
  only inside Lambda's python runtime: elsewhere (tests, the local stack, the bench) the hooks are
  kept here, in `registered`, and nothing runs them unless asked (`run_before()`, `run_after()`).

Secrets are fetched on a request's first use of them, never at init, so no snapshot holds one;
the resets are there in case anything ever reads one early. The one exception is the API key
pepper, read before the snapshot and kept (auth/authenticate.py and docs/deploying.md say why).
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable
from typing import Any

try:  # only in the Lambda runtime
    import snapshot_restore_py as _runtime  # type: ignore[import-not-found]
except ImportError:
    _runtime = None

_resets: list[Callable[[], None]] = []
# The hooks registered, runtime or not: what run_before / run_after call (the bench, the tests).
registered: dict[str, list[Callable[[], Any]]] = {"before": [], "after": []}


def forget_on_restore(reset: Callable[[], None]) -> Callable[[], None]:
    """Run reset after every restore (a cache of clients, credentials or secrets). Usable as a decorator."""
    if reset not in _resets:
        _resets.append(reset)
    return reset


def after_restore() -> None:
    """Forget what no two environments may share; the next use fetches or creates it afresh."""
    random.seed()  # else every environment restored from one snapshot draws the same numbers
    for reset in list(_resets):
        reset()


def register(before: Callable[[], Any], runtime: Any = None) -> None:
    """Register `before` (warm what every request needs, without calling AWS), followed by the
    resets, and after_restore.

    runtime: the hook registry (snapshot_restore_py's interface), for the tests; default the real one.
    """
    runtime = runtime if runtime is not None else _runtime
    before = functools.partial(_then_forget, before)
    registered["before"].append(before)
    if runtime is not None:
        runtime.register_before_snapshot(before)
    if after_restore not in registered["after"]:  # one reset for the process, however many Apis
        registered["after"].append(after_restore)
        if runtime is not None:
            runtime.register_after_restore(after_restore)


def _then_forget(before: Callable[[], Any]) -> Any:
    done = before()
    for reset in list(_resets):
        reset()
    return done


def run_before() -> None:
    for hook in registered["before"]:
        hook()


def run_after() -> None:
    # The runtime runs after-restore hooks in the reverse order of registration (last in, first out).
    for hook in reversed(registered["after"]):
        hook()
