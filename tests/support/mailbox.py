"""The e-mail a stack sent, as the tests read it: the emulator's SES (devstack/mailbox.py).

latest_link(to=address) is the newest link e-mailed to the address (the invitation's accept link);
the emulator is the one the service's clients use (AWS_ENDPOINT_URL of the running stack) unless
endpoint names another.
"""

from __future__ import annotations

import os

from devstack import mailbox
from devstack.mailbox import Mail


def messages(to: str | None = None, *, endpoint: str | None = None) -> list[Mail]:
    """Every message sent (to the address), newest first (every page)."""
    return list(mailbox.every(endpoint or os.environ["AWS_ENDPOINT_URL"], to))


def latest(to: str, *, endpoint: str | None = None) -> Mail:
    found = messages(to, endpoint=endpoint)
    assert found, f"no mail was sent to {to}"
    return found[0]


def latest_link(to: str, *, endpoint: str | None = None) -> str:
    """The link of the newest message sent to the address (AssertionError when none was sent)."""
    links = latest(to, endpoint=endpoint).links
    assert len(links) == 1, links
    return links[0]


def token_of(link: str) -> str:
    """The invitation token an accept link carries in its fragment (#token=...)."""
    return link.split("#token=", 1)[1]
