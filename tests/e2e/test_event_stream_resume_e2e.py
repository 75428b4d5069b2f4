"""Where the event stream resumes, over real HTTP on the local stack (the streamed entry point): an
empty Last-Event-ID is none, the highest id the document admits is taken, and one past it (a first
digit of 8 after evt_, more than a ULID's 128 bits) is refused by the document and the server alike."""

from __future__ import annotations

import json
import re

import httpx
import pytest

from devstack import openapi
from svc_core.domain.event_stream import STREAM_PATH

DOCUMENTED = {parameter["name"]: parameter["schema"]["pattern"]
              for parameter in json.loads(openapi.DOCUMENT.read_text())["paths"][STREAM_PATH]["get"]["parameters"]}


def _opening(stack, **request) -> tuple[int, str]:
    """The stream's status and first line (its retry: when it streams), then the connection closed."""
    headers = {"Authorization": f"Bearer {stack.credentials['apiKey']}", **request.pop("headers", {})}
    with httpx.Client(base_url=stack.base_url, timeout=30) as http:
        with http.stream("GET", STREAM_PATH, headers=headers, **request) as answer:
            first = next(answer.iter_lines(), "") if answer.status_code == 200 else answer.read().decode()
            return answer.status_code, first


@pytest.mark.parametrize("where", ["header", "query"])
@pytest.mark.parametrize("value, streams", [
    ("", True),                                          # none: from now on
    ("evt_7ZZZZZZZZZZZZZZZZZZZZZZZZZ", True),            # the highest id there is
    ("evt_80000000000000000000000000", False),           # past 128 bits: no event has it
])
def test_the_document_and_the_stream_agree_on_where_it_resumes(local_stack, where, value, streams):
    name, documented_name = ("Last-Event-ID", "last-event-id") if where == "header" else ("lastEventId", "lastEventId")
    assert (re.fullmatch(DOCUMENTED[documented_name], value) is not None) == streams
    request = {"headers": {name: value}} if where == "header" else {"params": {name: value}}
    status, first = _opening(local_stack, **request)
    if streams:
        assert (status, first.split(":")[0]) == (200, "retry"), first
    else:
        assert status == 400 and json.loads(first)["error"]["details"]["fields"][0]["field"] == documented_name
