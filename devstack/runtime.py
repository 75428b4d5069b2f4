"""Runs the functions of template.yaml in this process, as Lambda would run them.

Each function gets a small pool of "containers": separate imports of its handler module,
each serving one invocation at a time (Lambda never runs two requests in one container at
once, and the handlers rely on that). The shared layer is imported once for all of them.
"""

from __future__ import annotations

import importlib.util
import queue
import re
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from devstack import iam, meter
from devstack.template import ACCOUNT, REGION, ROOT, Resolver

LAYER = ROOT / "layers" / "shared" / "python"
if str(LAYER) not in sys.path:
    sys.path.insert(0, str(LAYER))


_COLD_START = threading.Lock()


def _powertools_request_state_per_thread() -> None:
    """Powertools' event handler keeps the request it is serving on its base class (it assigns
    `BaseRouter.current_event` and `BaseRouter.lambda_context`): one per process, which is right in
    Lambda, where a process serves one request at a time. Here every function runs in one process
    and requests run at once on the gateway's threads, so another request's event could be read
    mid-request (a body handed to the wrong request: seen under load). Both names are made per
    thread, for reads and writes through the class and through an instance alike."""
    from aws_lambda_powertools.event_handler.api_gateway import BaseRouter
    if getattr(BaseRouter, "_devstack_per_thread", False):
        return
    local = threading.local()

    def slot(name: str) -> property:
        return property(lambda _self: getattr(local, name, None), lambda _self, value: setattr(local, name, value))

    names = ("current_event", "lambda_context")
    for name in names:  # the class's own values go; instances now find the per-thread property
        if name in BaseRouter.__dict__:
            delattr(BaseRouter, name)
        setattr(BaseRouter, name, slot(name))
    # Assignments to the class itself (BaseRouter.current_event = ...) go through the metaclass.
    BaseRouter.__class__ = type("PerThreadRouterMeta", (type(BaseRouter),),
                                {**{name: slot(name) for name in names}, "_devstack_per_thread": True})


_powertools_request_state_per_thread()


@dataclass
class LambdaContext:
    function_name: str
    memory_limit_in_mb: int
    timeout_seconds: int
    aws_request_id: str
    started: float

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:{self.function_name}"

    @property
    def function_version(self) -> str:
        return "$LATEST"

    @property
    def log_group_name(self) -> str:
        return f"/aws/lambda/{self.function_name}"

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self.started + self.timeout_seconds - time.monotonic()) * 1000))


class Function:
    def __init__(self, logical_id: str, code_dir: Path, handler: str, memory: int, timeout: int,
                 containers: int = 4) -> None:
        self.logical_id = logical_id
        self.code_dir = code_dir
        # A shell-script handler is the Lambda Web Adapter's (run.sh starts an ASGI server): its
        # streamed requests go to the ASGI app (asgi_app()); a buffered invocation, as where
        # streaming is off, to the proxy handler beside it, app.lambda_handler.
        self.web_adapter = handler.endswith(".sh")
        self.start_script = handler if self.web_adapter else None
        self.module_file, self.handler_name = ("app", "lambda_handler") if self.web_adapter else handler.rsplit(".", 1)
        self._asgi: Any = None
        self.memory, self.timeout = memory, timeout
        self._idle: queue.LifoQueue = queue.LifoQueue()
        self._made = 0
        self._max = containers
        self._lock = threading.Lock()
        self._served: set[int] = set()   # the containers that have answered an invocation (the others are cold)

    def _import(self, name: str, module_file: str) -> Any:
        spec = importlib.util.spec_from_file_location(name, self.code_dir / f"{module_file}.py")
        module = importlib.util.module_from_spec(spec)
        # One cold start at a time in this process: two threads importing a library's modules for
        # the first time can each see the other's half-initialised module (Powertools did).
        with _COLD_START:
            spec.loader.exec_module(module)
        return module

    def _new_container(self) -> Any:
        return getattr(self._import(f"devstack_fn_{self.logical_id}_{self._made}", self.module_file), self.handler_name)

    def asgi_app(self) -> Any:
        """The ASGI app the start script serves (`uvicorn module:attr`), imported once: an ASGI app
        serves concurrent requests by design, so each streamed request does not hold a container."""
        with self._lock:
            if self._asgi is None:
                script = (self.code_dir / self.start_script).read_text()
                found = re.search(r"uvicorn\b.*?\s([A-Za-z_][\w.]*):([A-Za-z_]\w*)", script)
                if found is None:
                    raise RuntimeError(f"{self.start_script} of {self.logical_id} names no uvicorn module:app")
                with iam.acting_as(self.logical_id):  # its init's calls are the function's
                    module = self._import(f"devstack_fn_{self.logical_id}_asgi", found.group(1))
                self._asgi = _acting_app(self.logical_id, getattr(module, found.group(2)))
            return self._asgi

    def _acquire(self) -> Any:
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        with self._lock:
            if self._made < self._max:
                self._made += 1
                try:
                    return self._new_container()
                except BaseException:
                    self._made -= 1  # a failed cold start leaves its slot free for the next request
                    raise
        return self._idle.get()  # every container is busy: wait (Lambda would start another; its Timeout waits too)

    def invoke(self, event: dict[str, Any], began: Callable[[float], None] | None = None) -> Any:
        """The handler's answer to event. began(t) is told when the invocation starts, once a container
        holds it: the Timeout counts from then (a wait for a free container here, or a cold start, is
        not the function's time: Lambda runs another container instead)."""
        with iam.acting_as(self.logical_id):  # every AWS call of it, its cold start's included, under its role
            handler = self._acquire()
            cold = id(handler) not in self._served
            self._served.add(id(handler))
            try:
                started = time.monotonic()
                if began is not None:
                    began(started)
                context = LambdaContext(self.logical_id, self.memory, self.timeout, str(uuid.uuid4()), started)
                with meter.invocation(self.logical_id, event, cold) as record:   # DEVSTACK_METER only
                    response = handler(event, context)
                    meter.answered(record, response)
                    return response
            finally:
                self._idle.put(handler)


def _acting_app(function: str, app: Any) -> Any:
    """The ASGI app, its requests' AWS calls made as the function (the tasks a request starts
    inherit the context)."""
    async def acting(scope: Any, receive: Any, send: Any) -> None:
        with iam.acting_as(function):
            await app(scope, receive, send)
    return acting


def load_functions(resolver: Resolver, containers: int = 4) -> dict[str, Function]:
    globals_fn = resolver.template.get("Globals", {}).get("Function", {})
    functions = {}
    for logical_id, resource in resolver.of_type("AWS::Serverless::Function").items():
        props = resource["Properties"]
        functions[logical_id] = Function(
            logical_id, resolver.function_code_dir(logical_id),
            props.get("Handler", globals_fn.get("Handler", "app.lambda_handler")),
            int(props.get("MemorySize", globals_fn.get("MemorySize", 128))),
            int(props.get("Timeout", globals_fn.get("Timeout", 3))), containers)
    return functions
