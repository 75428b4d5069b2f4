"""A program in a pseudo-terminal, as a person at a terminal runs it: the CLI's end-to-end tests."""

from __future__ import annotations

import os
import re
import select
import struct
import subprocess
import threading
import time


class Terminal:
    """A program in a pseudo-terminal (120 x 40 unless told), its screen output collected as it comes."""

    def __init__(self, argv: list[str], env: dict[str, str], columns: int = 120) -> None:
        import fcntl
        import termios
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
        self.process = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True,
                                        start_new_session=True)
        os.close(slave)
        self.master = master
        self.output = b""
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            ready, _, _ = select.select([self.master], [], [], 0.1)
            if ready:
                try:
                    chunk = os.read(self.master, 4096)
                except OSError:  # the program ended and closed the terminal
                    return
                if not chunk:
                    return
                self.output += chunk
            elif self.process.poll() is not None:
                return

    @property
    def text(self) -> str:
        return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", self.output.decode(errors="replace"))

    def wait_for(self, pattern: re.Pattern, timeout: float = 30) -> re.Match:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = pattern.search(self.text)
            if found:
                return found
            if self.process.poll() is not None and not self._reader.is_alive():
                break
            time.sleep(0.05)
        raise AssertionError(f"{pattern.pattern!r} never appeared; the terminal showed:\n{self.text}")

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def finish(self, timeout: float = 60) -> int:
        code = self.process.wait(timeout=timeout)
        self._reader.join(timeout=5)
        os.close(self.master)
        return code
