"""The registries of devstack/routes.py are read from the routes, and no route escapes the checks that
work through them: every list is in the cursor property's and the first reads' parameters, every
function with an API is in the cold-start bench or named as why not, and what the document says of a
route (a list, honouring Idempotency-Key) is what its function declares."""

from __future__ import annotations

from devstack import routes
from tests.support.functions import served_routes


def _takes(route, kind: str, key: str) -> bool:
    return any(p.kind == kind and p.key == key for p in route.binder.parameters)


def test_the_registries_are_what_the_functions_declare():
    served = served_routes()
    assert {(r.method, r.path) for r in routes.routes()} == set(served)
    lists = {(r.method, r.path) for r in routes.list_routes()}
    assert len(lists) >= 12
    assert lists == {where for where, route in served.items() if _takes(route, "query", "cursor")}
    idempotent = {(r.method, r.path) for r in routes.idempotent_routes()}
    assert len(idempotent) >= 10 and all(r.is_write for r in routes.idempotent_routes())
    assert idempotent == {where for where, route in served.items()
                          if _takes(route, "header", routes.IDEMPOTENCY_HEADER.lower())}


def test_every_function_with_an_api_has_its_everyday_read_or_says_why_not():
    functions = set(routes.api_functions())
    assert len(functions) >= 15
    reads = routes.everyday_reads()
    assert set(reads) | set(routes.NO_EVERYDAY_READ) == functions
    assert not set(reads) & set(routes.NO_EVERYDAY_READ)
    for function, read in reads.items():
        assert read.function == function and read.method == "GET", read


def test_the_cold_start_bench_starts_every_function_with_an_everyday_read():
    from bench import cold
    benched = {function: (event, method, path) for function, event, method, path in cold.FUNCTION_REQUESTS}
    assert benched == {function: (read.event_key, read.method, read.path)
                       for function, read in routes.everyday_reads().items()}


def test_every_list_is_in_the_cursor_property_and_the_first_reads():
    from tests.integration import test_list_cursors, test_reads_without_pydantic
    lists = {r.event for r in routes.list_routes()}
    assert lists == {event for _, event, _, _ in test_list_cursors.LISTS}
    read = {event for _, event, _ in test_reads_without_pydantic.READS}
    assert lists | {r.event for r in routes.everyday_reads().values()} == read


def test_a_route_added_to_the_template_and_the_document_is_in_the_registries(monkeypatch, tmp_path):
    """The registries follow the routes: a new list in the template and the document is a list."""
    import copy
    import json

    from devstack import template
    document = json.loads(routes.DOCUMENT.read_text())
    messages = "/api/v1/chat/sessions/{id}/messages-example"
    document["paths"][messages] = {"get": document["paths"]["/api/v1/chat/sessions"]["get"]}
    (tmp_path / "openapi.json").write_text(json.dumps(document))
    loaded = copy.deepcopy(template.load())   # the template's load is cached: another's copy is left as it was
    loaded["Resources"]["ChatFunction"]["Properties"]["Events"]["ListMessagesExample"] = {
        "Type": "Api", "Properties": {"Path": messages, "Method": "get"}}
    monkeypatch.setattr(routes, "DOCUMENT", tmp_path / "openapi.json")
    monkeypatch.setattr(routes, "load", lambda: loaded)
    routes.routes.cache_clear()
    try:
        added = routes.by_event("Chat-ListMessagesExample")
        assert added.is_list and added in routes.list_routes() and added.parents == ["sessions"]
    finally:
        routes.routes.cache_clear()
