"""The service's log lines in a test's captured output."""

from __future__ import annotations

import sys


class CurrentStdout:
    """A stream that writes to whatever sys.stdout is at the time (pytest's capture, when it swaps it
    in): the logger's handler keeps the stream it was made with."""

    def write(self, text: str) -> int:
        return sys.stdout.write(text)

    def flush(self) -> None:
        sys.stdout.flush()


def follow_stdout(monkeypatch) -> None:
    """Send the service's logger to the current sys.stdout for this test (capsys reads it)."""
    from svc_core.platform.log import logger
    monkeypatch.setattr(logger.registered_handler, "stream", CurrentStdout())
