"""The local stack's AWS emulator: moto's server, with one read-only route of the local stack's own.

    python -m devstack.emulator -H 127.0.0.1 -p PORT        (devstack/processes.py starts it)

GET /_local/sent-mail?limit=N[&before=POSITION][&to=ADDRESS] answers a page of the e-mail moto's SES
accepted, newest first, without reading the rest: moto keeps every message it accepted, in order, in
one list (the same its /moto-api/data.json shows, which serialises every model of every service at
once); a page reads only its own messages from it. POSITION is a message's place in that list (0 the
first accepted), so a cursor stays put while new mail arrives; `before` answers the messages older
than it. `to` keeps those sent to the address (compared normalised, as the service compares
addresses): the messages are scanned newest first until the page is full, their addresses only.

    {"messages": [{position, id, source, destinations, subject, body}, ...], "before": POSITION | null}

`before` is the cursor of the next (older) page, null when none is older. devstack/mailbox.py reads it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import Any
from urllib.parse import parse_qs

from devstack.template import ROOT

MAIL_PATH = "/_local/sent-mail"
MAX_LIMIT = 200

_LAYER = str(ROOT / "layers" / "shared" / "python")   # the service's own rule for comparing addresses
if _LAYER not in sys.path:
    sys.path.insert(0, _LAYER)


def sent(limit: int, before: int | None, to: str | None) -> dict[str, Any]:
    """A page of moto's sent mail, newest first (moto's SES Message model: what send_email keeps)."""
    from moto.ses.models import Message
    messages = Message.instances_tracked  # appended to as mail is accepted; read, never copied whole
    start = len(messages) if before is None else max(0, min(before, len(messages)))
    page, older = [], None
    for position in _newest_first(messages, start, _addressed_to(to)):
        if len(page) == limit:
            older = position + 1   # one more is there: the next page starts below the last shown
            break
        page.append(_view(position, messages[position]))
    return {"messages": page, "before": older}


def _newest_first(messages: list[Any], start: int, wanted: Callable[[Any], bool]) -> Iterator[int]:
    return (position for position in range(start - 1, -1, -1) if wanted(messages[position]))


def _addressed_to(to: str | None) -> Callable[[Any], bool]:
    if not to:
        return lambda _message: True
    from svc_core.contracts import email_address
    wanted = email_address.normalise(to)
    return lambda message: wanted in {email_address.normalise(a) for a in _addresses(message)}


def _addresses(message: Any) -> Iterable[str]:
    destinations = getattr(message, "destinations", None) or {}
    return [a for kind in ("ToAddresses", "CcAddresses", "BccAddresses") for a in destinations.get(kind, [])]


def _view(position: int, message: Any) -> dict[str, Any]:
    return {"position": position, "id": message.id, "source": message.source,
            "destinations": message.destinations, "subject": message.subject, "body": message.body}


def _answer(environ: dict[str, Any], start_response) -> list[bytes]:
    query = {name: values[-1] for name, values in parse_qs(environ.get("QUERY_STRING", "")).items()}
    try:
        limit = int(query.get("limit", "50"))
        before = int(query["before"]) if query.get("before") else None
        if not 1 <= limit <= MAX_LIMIT or (before is not None and before < 0):
            raise ValueError
    except ValueError:
        return _json(start_response, "400 Bad Request",
                     {"error": f"limit is 1 to {MAX_LIMIT}; before, a message's position (0 or more)"})
    return _json(start_response, "200 OK", sent(limit, before, query.get("to")))


def _json(start_response, status: str, body: dict[str, Any]) -> list[bytes]:
    payload = json.dumps(body).encode()
    start_response(status, [("Content-Type", "application/json"), ("Content-Length", str(len(payload)))])
    return [payload]


def with_sent_mail(dispatcher: type) -> type:
    """moto's application (its DomainDispatcherApplication) answering MAIL_PATH itself."""
    class WithSentMail(dispatcher):  # type: ignore[misc, valid-type]
        def __call__(self, environ: dict[str, Any], start_response) -> Any:
            if environ.get("PATH_INFO") == MAIL_PATH and environ.get("REQUEST_METHOD") == "GET":
                return _answer(environ, start_response)
            return super().__call__(environ, start_response)
    return WithSentMail


def main(argv: list[str] | None = None) -> None:
    from moto import server
    server.DomainDispatcherApplication = with_sent_mail(server.DomainDispatcherApplication)  # main() makes it
    server.main(argv)


if __name__ == "__main__":
    main()
