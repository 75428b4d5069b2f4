"""svc_core.platform.lazy: a module imported on its first attribute use, once, whatever the threads."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

LAYER = Path(__file__).resolve().parents[2] / "layers" / "shared" / "python"


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env={"PYTHONPATH": str(LAYER)}, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_the_module_is_imported_on_the_first_attribute_read_not_before():
    assert _run("""
        import sys
        from svc_core.platform.lazy import lazy_module
        models = lazy_module("svc_core.domain.models.projects")
        before = "svc_core.domain.models.projects" in sys.modules or "pydantic" in sys.modules
        name = models.ProjectCreate.__name__
        print(before, name, "pydantic" in sys.modules)
    """) == "False ProjectCreate True"


def test_threads_reading_it_first_at_once_all_see_the_whole_module():
    # A module that takes a while to run: a thread that saw it half executed would miss `last`.
    assert _run("""
        import sys, threading, time, types, importlib.abc, importlib.util
        class Slow(importlib.abc.Loader, importlib.abc.MetaPathFinder):
            runs = 0
            def find_spec(self, name, path=None, target=None):
                return importlib.util.spec_from_loader(name, self) if name == "slow_module" else None
            def create_module(self, spec):
                return None
            def exec_module(self, module):
                Slow.runs += 1
                module.first = 1
                time.sleep(0.2)
                module.last = 2
        sys.meta_path.insert(0, Slow())
        from svc_core.platform.lazy import lazy_module
        lazy = lazy_module("slow_module")
        seen, start = [], threading.Barrier(8)
        def read():
            start.wait()
            seen.append(lazy.last)
        threads = [threading.Thread(target=read) for _ in range(8)]
        [t.start() for t in threads]; [t.join() for t in threads]
        print(seen == [2] * 8, Slow.runs)
    """) == "True 1"


def test_an_imported_module_is_given_as_it_is():
    import json

    from svc_core.platform.lazy import lazy_module
    assert lazy_module("json") is json
