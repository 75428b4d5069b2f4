"""The local stack's mailbox: the e-mail the service sent, as the emulator (moto) keeps it.

moto's SES keeps every message it accepted. The local stack's emulator (devstack/emulator.py) answers
them a page at a time, newest first, reading only that page's messages (moto's own /moto-api/data.json
would serialise every model of every service at once: a mailbox of 25 MB made it too slow to answer).
The gateway serves them at /_local/mailbox (an HTML page) and /_local/mailbox.json, on the local stack
only; the deployed API has no such route. Both take ?to=ADDRESS (only the mail sent to it), ?limit=N
(1 to 200, default 50) and ?cursor=C (a page's nextCursor: the mail older than that page). From a
terminal:

    python -m devstack.mailbox [--url http://127.0.0.1:3000] [--to ADDRESS] [--last] [--links] [--cursor C]

Everywhere newest first: the page, the JSON, the command's output and read().
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

from devstack.emulator import MAIL_PATH, MAX_LIMIT

_LINK = re.compile(r"""https?://[^\s"'<>]+""")
PAGE_SIZE = 50
_CURSOR = re.compile(r"^[0-9]{1,12}$")   # a message's position in the emulator's list of sent mail
_HREF = re.compile(r'<a\s[^>]*href="(https?://[^"]+)"')


@dataclass(frozen=True)
class Mail:
    id: str
    sender: str
    to: list[str]
    subject: str
    body: str

    @property
    def links(self) -> list[str]:
        """What a reader follows: an HTML body's anchors (not its images, such as the brand's logo), else
        every address in the text."""
        found = _HREF.findall(self.body) or _LINK.findall(self.body)
        return list(dict.fromkeys(html.unescape(link) for link in found))

    def view(self) -> dict[str, Any]:
        return {**asdict(self), "links": self.links}


@dataclass(frozen=True)
class Page:
    mails: list[Mail]
    next_cursor: str | None   # the page of the mail older than this one; None: no mail is older


def read(emulator_endpoint: str, to: str | None = None, cursor: str | None = None,
         limit: int = PAGE_SIZE) -> Page:
    """A page of the messages the emulator's SES accepted, newest first; to: only those sent to this
    address (compared normalised); cursor: a page's next_cursor. ValueError for a cursor or a limit
    that is not one."""
    if cursor is not None and not _CURSOR.match(cursor):
        raise ValueError("cursor: pass a page's nextCursor back as it is")
    if not 1 <= limit <= MAX_LIMIT:
        raise ValueError(f"limit: 1 to {MAX_LIMIT}")
    query = {"limit": limit, **({"before": cursor} if cursor else {}), **({"to": to} if to else {})}
    url = emulator_endpoint.rstrip("/") + MAIL_PATH + "?" + urllib.parse.urlencode(query)
    with urllib.request.urlopen(url, timeout=10) as answer:
        data = json.load(answer)
    mails = [Mail(id=record["id"], sender=record.get("source", ""), to=_addresses(record.get("destinations")),
                  subject=record.get("subject", ""), body=record.get("body", "")) for record in data["messages"]]
    return Page(mails, None if data["before"] is None else str(data["before"]))


def every(emulator_endpoint: str, to: str | None = None) -> Iterator[Mail]:
    """Every message (sent to the address), newest first, a page at a time."""
    cursor = None
    while True:
        page = read(emulator_endpoint, to, cursor, MAX_LIMIT)
        yield from page.mails
        if page.next_cursor is None:
            return
        cursor = page.next_cursor


def _addresses(destinations: dict[str, list[str]] | None) -> list[str]:
    return [a for kind in ("ToAddresses", "CcAddresses", "BccAddresses") for a in (destinations or {}).get(kind, [])]


def _query(to: str | None, cursor: str | None, limit: int) -> str:
    """The query string of a page (the defaults left out)."""
    named = {"to": to, "cursor": cursor, "limit": limit if limit != PAGE_SIZE else None}
    return "?" + urllib.parse.urlencode({k: v for k, v in named.items() if v is not None})


def view(page: Page, to: str | None, limit: int = PAGE_SIZE) -> dict[str, Any]:
    """/_local/mailbox.json: the page's messages and where the older ones are."""
    older = None if page.next_cursor is None else "/_local/mailbox.json" + _query(to, page.next_cursor, limit)
    return {"messages": [m.view() for m in page.mails], "nextCursor": page.next_cursor, "next": older}


def page_html(page: Page, to: str | None, limit: int = PAGE_SIZE, first: bool = True) -> str:
    """The page as HTML (newest first). Each message's body is shown as text (escaped): its links are
    listed as links of their own. A link leads to the older mail, another back to the newest."""
    e = html.escape
    rows = []
    for mail in page.mails:
        links = "".join(f'<li><a href="{e(link)}">{e(link)}</a></li>' for link in mail.links)
        rows.append(f"<article><h2>{e(mail.subject)}</h2><p>To {e(', '.join(mail.to))} from {e(mail.sender)} "
                    f"<small>({e(mail.id)})</small></p><ul>{links}</ul><pre>{e(mail.body)}</pre></article>")
    navigation = [f'<a href="{e(_query(to, None, limit))}" rel="first">Newest mail</a>'] if not first else []
    if page.next_cursor is not None:
        navigation.append(f'<a href="{e(_query(to, page.next_cursor, limit))}" rel="next">Older mail</a>')
    nav = f"<nav>{' | '.join(navigation)}</nav>" if navigation else ""
    title = f"Local mailbox{' for ' + e(to) if to else ''}"
    shown = f"{len(page.mails)} message(s) on this page" + ("" if page.next_cursor is None else f" (at most {limit})")
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{title}</title></head><body>"
            f"<h1>{title}</h1><p>{shown}, newest first: what the local stack sent. "
            f"The deployed service has no such page.</p>{nav}{''.join(rows) or '<p>No mail yet.</p>'}{nav}"
            "</body></html>")


def routes(emulator_endpoint: str) -> dict[str, Any]:
    """The gateway's local routes of the mailbox: path -> a callable given the query's values."""
    def page_of(query: dict[str, str]) -> tuple[Page, str | None, int]:
        limit = _limit(query.get("limit"))
        return read(emulator_endpoint, query.get("to"), query.get("cursor"), limit), query.get("to"), limit

    def as_html(query: dict[str, str]) -> str:
        page, to, limit = page_of(query)
        return page_html(page, to, limit, first=not query.get("cursor"))

    def as_json(query: dict[str, str]) -> dict[str, Any]:
        page, to, limit = page_of(query)
        return view(page, to, limit)
    return {"/_local/mailbox": as_html, "/_local/mailbox.json": as_json}


def _limit(given: str | None) -> int:
    if given is None:
        return PAGE_SIZE
    if not given.isdigit():
        raise ValueError(f"limit: 1 to {MAX_LIMIT}")
    return int(given)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devstack.mailbox",
                                     description="The e-mail the local stack sent, newest first, a page at a time.")
    parser.add_argument("--url", default="http://127.0.0.1:3000", help="the local stack (default: %(default)s)")
    parser.add_argument("--to", help="only the messages sent to this address")
    parser.add_argument("--last", action="store_true", help="only the newest message")
    parser.add_argument("--links", action="store_true", help="print the links only, one a line")
    parser.add_argument("--cursor", help="the older mail: the cursor a page printed")
    args = parser.parse_args(argv)
    query = {k: v for k, v in {"to": args.to, "cursor": args.cursor, "limit": 1 if args.last else None}.items() if v}
    url = args.url.rstrip("/") + "/_local/mailbox.json" + ("?" + urllib.parse.urlencode(query) if query else "")
    with urllib.request.urlopen(url, timeout=10) as answer:
        page = json.load(answer)
    mails = page["messages"]
    if not mails:
        print("No mail." if not args.to else f"No mail to {args.to}.", file=sys.stderr)
        return 1
    for mail in mails:
        if args.links:
            print("\n".join(mail["links"]))
            continue
        print(f"From: {mail['sender']}\nTo: {', '.join(mail['to'])}\nSubject: {mail['subject']}\nId: {mail['id']}\n")
        print("\n".join(mail["links"]) + "\n")
    if page["nextCursor"] and not args.last:
        print(f"Older mail: --cursor {page['nextCursor']}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
