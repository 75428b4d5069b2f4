"""Start the local stack:  python -m devstack [--port 3000] [--credentials FILE]

Prints the base URL and the development credentials, writes them to the credentials file
(default .local/dev-credentials.json), and serves until Ctrl-C or SIGTERM.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
import time
from pathlib import Path

from devstack.bootstrap import bootstrap, write_credentials
from devstack.stack import ROOT, LocalStack


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devstack", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=3000, help="gateway port on 127.0.0.1 (default 3000; 0 = any)")
    parser.add_argument("--credentials", type=Path, default=ROOT / ".local" / "dev-credentials.json",
                        help="where to write the development credentials")
    parser.add_argument("--quiet", action="store_true", help="do not log each request")
    parser.add_argument("--persist", type=Path, metavar="DIR",
                        help="keep the data in DIR across restarts (tables in DynamoDB Local, which needs "
                             "Java 17 and scripts/bootstrap_node.sh); default: in memory")
    args = parser.parse_args(argv)

    started = time.monotonic()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    log = (lambda _msg: None) if args.quiet else (lambda msg: print(msg, flush=True))
    # Quiet also keeps the functions' own INFO lines (one JSON line per request) out.
    stack = LocalStack(port=args.port, log=log, parameters={"LogLevel": "WARNING"} if args.quiet else None,
                       persist_dir=args.persist.resolve() if args.persist else None)
    try:
        stack.start()
        kept = args.persist / "credentials.json" if args.persist else None
        if kept and kept.exists():  # the development tenant and key of an earlier run
            credentials = {**json.loads(kept.read_text()), "baseUrl": stack.base_url}
            write_credentials(credentials, args.credentials)
        else:
            credentials = bootstrap(stack.base_url, args.credentials)
            if kept:
                write_credentials(credentials, kept)
        # The functions' environment, for operator commands (python -m ops --local ...).
        write_credentials({**stack.environment, "PUBLIC_BASE_URL": stack.base_url},
                          args.credentials.parent / "local-stack-env.json")
        print(f"local stack ready in {time.monotonic() - started:.1f} s at {stack.base_url}/api/v1", flush=True)
        print(f"credentials written to {args.credentials}:", flush=True)
        print(json.dumps(credentials, indent=2), flush=True)
        stop.wait()
    finally:
        print("stopping", flush=True)
        stack.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
