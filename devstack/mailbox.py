"""The local stack's mailbox: the e-mail the service sent, as the emulator (moto) keeps it.

moto's SES keeps every message it accepted and shows them in its model data (GET /moto-api/data.json:
ses -> Message). The gateway serves them at /_local/mailbox (an HTML page; ?to=ADDRESS filters) and
/_local/mailbox.json, on the local stack only; the deployed API has no such route. From a terminal:

    python -m devstack.mailbox [--url http://127.0.0.1:3000] [--to ADDRESS] [--last] [--links]
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
import urllib.parse
import urllib.request
from dataclasses import asdict, dataclass
from typing import Any

_LINK = re.compile(r"""https?://[^\s"'<>]+""")


@dataclass(frozen=True)
class Mail:
    id: str
    sender: str
    to: list[str]
    subject: str
    body: str

    @property
    def links(self) -> list[str]:
        return list(dict.fromkeys(html.unescape(link) for link in _LINK.findall(self.body)))

    def view(self) -> dict[str, Any]:
        return {**asdict(self), "links": self.links}


def read(emulator_endpoint: str, to: str | None = None) -> list[Mail]:
    """Every message the emulator's SES accepted, oldest first; to: only those sent to this address
    (compared normalised)."""
    from svc_core.contracts import email_address  # the stack's process has the layer (the CLI only asks it)
    with urllib.request.urlopen(emulator_endpoint.rstrip("/") + "/moto-api/data.json", timeout=10) as answer:
        data = json.load(answer)
    mails = []
    for record in (data.get("ses") or {}).get("Message", []):
        destinations = record.get("destinations") or {}
        addresses = [a for kind in ("ToAddresses", "CcAddresses", "BccAddresses") for a in destinations.get(kind, [])]
        mails.append(Mail(id=record["id"], sender=record.get("source", ""), to=addresses,
                          subject=record.get("subject", ""), body=record.get("body", "")))
    if to is not None:
        wanted = email_address.normalise(to)
        mails = [m for m in mails if wanted in {email_address.normalise(a) for a in m.to}]
    return mails


def page(mails: list[Mail], to: str | None) -> str:
    """The mailbox as an HTML page, newest first. Each message's body is shown as text (escaped): its
    links are listed as links of their own."""
    e = html.escape
    rows = []
    for mail in reversed(mails):
        links = "".join(f'<li><a href="{e(link)}">{e(link)}</a></li>' for link in mail.links)
        rows.append(f"<article><h2>{e(mail.subject)}</h2><p>To {e(', '.join(mail.to))} from {e(mail.sender)} "
                    f"<small>({e(mail.id)})</small></p><ul>{links}</ul><pre>{e(mail.body)}</pre></article>")
    title = f"Local mailbox{' for ' + e(to) if to else ''}"
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{title}</title></head><body>"
            f"<h1>{title}</h1><p>{len(mails)} message(s), newest first: what the local stack sent. "
            f"The deployed service has no such page.</p>{''.join(rows) or '<p>No mail yet.</p>'}</body></html>")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devstack.mailbox",
                                     description="The e-mail the local stack sent (newest last).")
    parser.add_argument("--url", default="http://127.0.0.1:3000", help="the local stack (default: %(default)s)")
    parser.add_argument("--to", help="only the messages sent to this address")
    parser.add_argument("--last", action="store_true", help="only the newest message")
    parser.add_argument("--links", action="store_true", help="print the links only, one a line")
    args = parser.parse_args(argv)
    query = "?" + urllib.parse.urlencode({"to": args.to}) if args.to else ""
    with urllib.request.urlopen(args.url.rstrip("/") + "/_local/mailbox.json" + query, timeout=10) as answer:
        mails = json.load(answer)["messages"]
    if args.last:
        mails = mails[-1:]
    if not mails:
        print("No mail." if not args.to else f"No mail to {args.to}.", file=sys.stderr)
        return 1
    for mail in mails:
        if args.links:
            print("\n".join(mail["links"]))
            continue
        print(f"From: {mail['sender']}\nTo: {', '.join(mail['to'])}\nSubject: {mail['subject']}\nId: {mail['id']}\n")
        print("\n".join(mail["links"]) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
