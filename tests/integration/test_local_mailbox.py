"""The local mailbox (devstack/mailbox.py, docs/invitations.md) on a real emulator and gateway: newest
first everywhere, a page at a time. A mailbox of hundreds of large messages answers a page of the newest
50 and a link to the older ones, reading only that page from the emulator (devstack/emulator.py)."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from dataclasses import dataclass

import boto3
import pytest

from devstack import mailbox
from devstack.gateway import Gateway, Router
from tests.support.emulator import MotoServer

SENDER = "invitations@svc.localhost"
SENT = 300
BODY_BYTES = 60_000   # 300 of them: 18 MB of mail


def _send(ses, n: int, to: str) -> None:
    body = f"Message {n}: http://127.0.0.1:3000/accept#token=t{n}\n" + "x" * BODY_BYTES
    ses.send_email(FromEmailAddress=SENDER, Destination={"ToAddresses": [to]},
                   Content={"Simple": {"Subject": {"Data": f"message {n}"}, "Body": {"Text": {"Data": body}}}})


@dataclass
class FullMailbox:
    emulator: str   # the emulator's endpoint
    gateway: str    # the gateway's base URL


@pytest.fixture(scope="module")
def full_mailbox():
    """An emulator of its own that accepted SENT large messages, every seventh to Ada; and a gateway
    serving the mailbox's pages from it."""
    emulator = MotoServer().start()
    gateway = Gateway(Router([]), {}, port=0, log=lambda _m: None, local_routes=mailbox.routes(emulator.endpoint))
    try:
        ses = boto3.client("sesv2", region_name="us-east-1", endpoint_url=emulator.endpoint,
                           aws_access_key_id="local", aws_secret_access_key="local")
        ses.create_email_identity(EmailIdentity=SENDER)
        for n in range(SENT):
            _send(ses, n, "Ada@Example.com" if n % 7 == 0 else f"person{n}@example.com")
        gateway.start()
        yield FullMailbox(emulator.endpoint, f"http://127.0.0.1:{gateway.port}")
    finally:
        gateway.stop()
        emulator.stop()


def _get(url: str) -> tuple[int, bytes, float]:
    started = time.monotonic()
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:
            return answer.status, answer.read(), time.monotonic() - started
    except urllib.error.HTTPError as refused:
        return refused.code, refused.read(), time.monotonic() - started


def _subjects(page: dict) -> list[str]:
    return [m["subject"] for m in page["messages"]]


def test_a_large_mailbox_answers_the_newest_50_and_a_link_to_the_older_ones(full_mailbox):
    status, body, seconds = _get(full_mailbox.gateway + "/_local/mailbox.json")
    page = json.loads(body)
    assert status == 200 and _subjects(page) == [f"message {n}" for n in range(SENT - 1, SENT - 51, -1)]
    assert page["next"] == f"/_local/mailbox.json?cursor={page['nextCursor']}"
    # What the page read and answered is its 50 messages, not the mailbox's 18 MB.
    print(f"\nthe newest page of {SENT} messages of {BODY_BYTES} bytes: {len(body)} bytes in {seconds:.3f} s")
    assert len(body) < 51 * (BODY_BYTES + 1_000) and seconds < 5

    # Following the links walks the whole mailbox once, newest first, and ends.
    seen, link = _subjects(page), page["next"]
    while link:
        page = json.loads(_get(full_mailbox.gateway + link)[1])
        seen, link = seen + _subjects(page), page["next"]
    assert seen == [f"message {n}" for n in range(SENT - 1, -1, -1)]
    assert page["nextCursor"] is None


def test_the_html_page_shows_the_newest_50_with_a_link_to_the_older_mail(full_mailbox):
    status, body, _seconds = _get(full_mailbox.gateway + "/_local/mailbox")
    html = body.decode()
    assert status == 200 and html.count("<article>") == 50
    assert html.index(f"<h2>message {SENT - 1}</h2>") < html.index(f"<h2>message {SENT - 50}</h2>")
    assert f"<h2>message {SENT - 51}</h2>" not in html and 'rel="first"' not in html
    older = html.split('rel="next"')[0].rsplit('href="', 1)[1].split('"')[0]
    assert older.startswith("?cursor=")
    second = _get(full_mailbox.gateway + "/_local/mailbox" + older.replace("&amp;", "&"))[1].decode()
    assert second.count("<article>") == 50 and f"<h2>message {SENT - 51}</h2>" in second
    assert 'rel="first"' in second and "http://127.0.0.1:3000/accept#token=t249" in second


def test_the_mail_to_one_address_is_paged_too(full_mailbox):
    to_ada = [f"message {n}" for n in range(SENT - 1, -1, -1) if n % 7 == 0]
    first = json.loads(_get(full_mailbox.gateway + "/_local/mailbox.json?to=ada@example.com&limit=20")[1])
    assert _subjects(first) == to_ada[:20] and "to=ada%40example.com" in first["next"] and "limit=20" in first["next"]
    rest = json.loads(_get(full_mailbox.gateway + first["next"])[1])
    assert _subjects(rest) == to_ada[20:40]
    assert [m.subject for m in mailbox.every(full_mailbox.emulator, "ADA@example.com")] == to_ada  # every page


def test_the_command_prints_the_newest_page_first_and_last_is_the_newest(full_mailbox, capsys):
    assert mailbox.main(["--url", full_mailbox.gateway, "--links"]) == 0
    printed = capsys.readouterr()
    assert printed.out.split() == [f"http://127.0.0.1:3000/accept#token=t{n}" for n in range(SENT - 1, SENT - 51, -1)]
    cursor = printed.err.split("--cursor ")[1].strip()
    assert mailbox.main(["--url", full_mailbox.gateway, "--links", "--cursor", cursor]) == 0
    assert capsys.readouterr().out.split()[0] == f"http://127.0.0.1:3000/accept#token=t{SENT - 51}"
    assert mailbox.main(["--url", full_mailbox.gateway, "--last", "--links", "--to", "person1@example.com"]) == 0
    assert capsys.readouterr().out.strip() == "http://127.0.0.1:3000/accept#token=t1"


def test_a_cursor_that_is_not_one_is_400_and_an_emulator_that_does_not_answer_is_502():
    gateway = Gateway(Router([]), {}, port=0, log=lambda _m: None,
                      local_routes=mailbox.routes("http://127.0.0.1:9")).start()   # nothing listens there
    try:
        base = f"http://127.0.0.1:{gateway.port}"
        status, body, _seconds = _get(base + "/_local/mailbox.json?cursor=abc")
        assert (status, json.loads(body)["error"]) == (400, "cursor: pass a page's nextCursor back as it is")
        status, body, _seconds = _get(base + "/_local/mailbox")
        assert status == 502 and "URLError" in json.loads(body)["error"]
    finally:
        gateway.stop()
