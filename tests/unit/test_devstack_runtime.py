"""The local stack runs every function in one process, on many threads at once; Powertools keeps the
request it serves on its base class (right in Lambda: one request per process at a time). The
stack's runtime makes that state per thread, or a request could read another request's body."""

from __future__ import annotations

import threading

from aws_lambda_powertools.event_handler import APIGatewayRestResolver
from aws_lambda_powertools.event_handler.api_gateway import BaseRouter

import devstack.runtime  # noqa: F401 - makes Powertools' request state per thread


def test_each_thread_reads_the_event_it_set_through_the_class_and_an_instance():
    both_set = threading.Barrier(2)
    read: dict[str, tuple] = {}

    def serve(name: str) -> None:
        resolver = APIGatewayRestResolver()
        BaseRouter.current_event = f"event of {name}"       # as resolve() assigns it
        BaseRouter.lambda_context = f"context of {name}"
        both_set.wait()                                     # the other thread has assigned its own now
        read[name] = (BaseRouter.current_event, resolver.current_event, resolver.lambda_context)

    threads = [threading.Thread(target=serve, args=(name,)) for name in ("a", "b")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert read == {"a": ("event of a", "event of a", "context of a"),
                    "b": ("event of b", "event of b", "context of b")}


def test_a_resolver_still_serves_a_request():
    app = APIGatewayRestResolver()

    @app.get("/ping")
    def ping():
        return {"path": app.current_event.path}

    event = {"httpMethod": "GET", "path": "/ping", "resource": "/ping", "headers": {}, "requestContext": {}}
    answer = app.resolve(event, None)
    assert answer["statusCode"] == 200 and '"/ping"' in answer["body"]
