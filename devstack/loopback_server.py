"""The HTTP server of every server the local stack runs on loopback (the gateway, the secrets
extension) and of the receivers its tests and benchmarks run.

socketserver listens with a backlog of 5: connections that arrive while the accepting thread is not
scheduled (a busy machine) beyond those 5 are not taken in, and their clients time out or are reset.
1024 holds what a test or a benchmark opens at once (the kernel caps it at net.core.somaxconn).
"""

from __future__ import annotations

from http.server import ThreadingHTTPServer

LISTEN_BACKLOG = 1024


class LoopbackHTTPServer(ThreadingHTTPServer):
    """A thread per connection (daemon threads: an open connection never holds the process), and a
    listen backlog that takes a burst of connections in while the accepting thread is not running."""

    daemon_threads = True
    request_queue_size = LISTEN_BACKLOG
