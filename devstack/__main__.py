"""Start the local stack:  python -m devstack [--port 3000] [--credentials FILE] [--persist DIR] [--allow-origin ORIGIN]
                                             [--parameter NAME=VALUE]

Prints the base URL and the development credentials, writes them to the credentials file
(default .local/dev-credentials.json), and serves until Ctrl-C or SIGTERM. The functions'
environment (for `python -m ops --local`) is written beside the stack's own state: in DIR with
--persist, else in .local/stacks/PORT/ (removed at stop, as the data it names is).
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
from devstack.template import load as load_template
from devstack.stack import DEFAULT_ALLOWED_ORIGINS, ENGINES, MOTO_ENGINE_CAVEATS, ROOT, LocalStack, environment_file


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m devstack", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=3000, help="gateway port on 127.0.0.1 (default 3000; 0 = any)")
    parser.add_argument("--credentials", type=Path, default=ROOT / ".local" / "dev-credentials.json",
                        help="where to write the development credentials")
    parser.add_argument("--quiet", action="store_true", help="do not log each request")
    parser.add_argument("--persist", type=Path, metavar="DIR",
                        help="keep the data in DIR across restarts (tables in DynamoDB Local, which needs "
                             "Java 17 and scripts/bootstrap_node.sh); default: in memory")
    parser.add_argument("--emulator", choices=ENGINES, default="dynamodb-local",
                        help="where the tables live: DynamoDB Local (default; Java 17+) or, on a machine without "
                             "Java, the AWS emulator's own DynamoDB (moto), which loses guarantees: "
                             + MOTO_ENGINE_CAVEATS)
    parser.add_argument("--allow-origin", action="append", metavar="ORIGIN", dest="allow_origins",
                        help="a browser front-end's origin (scheme://host[:port]) that may call the API with "
                             "credentials (CORS); repeat for several; given, it replaces the default "
                             f"{DEFAULT_ALLOWED_ORIGINS}")
    parser.add_argument("--parameter", action="append", metavar="NAME=VALUE", dest="parameters", default=[],
                        help="a template parameter's value, e.g. WebhookRetrySchedule=1,1,1,1,1,1,1 (a receiver "
                             "down past its retries within seconds); repeat for several")
    args = parser.parse_args(argv)
    if any("*" in origin or "," in origin for origin in args.allow_origins or ()):
        parser.error("--allow-origin takes one exact origin (no `*`, no commas); repeat it for several")
    if args.emulator == "moto" and args.persist:
        parser.error("--persist keeps the tables in DynamoDB Local: it does not go with --emulator moto")

    started = time.monotonic()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    log = (lambda _msg: None) if args.quiet else (lambda msg: print(msg, flush=True))
    # Quiet also keeps the functions' own INFO lines (one JSON line per request) out.
    parameters = {"LogLevel": "WARNING"} if args.quiet else {}
    if args.allow_origins:
        parameters["AllowedOrigins"] = ",".join(args.allow_origins)
    known = load_template().get("Parameters", {})
    for given in args.parameters:
        name, equals, value = given.partition("=")
        if not equals or name not in known:
            parser.error(f"--parameter takes NAME=VALUE with one of the template's parameters: {', '.join(known)}")
        parameters[name] = value
    stack = LocalStack(port=args.port, log=log, parameters=parameters,
                       persist_dir=args.persist.resolve() if args.persist else None, engine=args.emulator)
    env_file: Path | None = None
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
        env_file = environment_file(stack.gateway.port, stack.persist_dir)
        env_file.parent.mkdir(parents=True, exist_ok=True)
        write_credentials({**stack.environment, "PUBLIC_BASE_URL": stack.base_url}, env_file)
        print(f"local stack ready in {time.monotonic() - started:.1f} s at {stack.base_url}/api/v1", flush=True)
        print(f"browser front-ends allowed (CORS): {stack.parameters['AllowedOrigins'] or 'none'}", flush=True)
        print(f"credentials written to {args.credentials}:", flush=True)
        print(json.dumps(credentials, indent=2), flush=True)
        stop.wait()
    finally:
        print("stopping", flush=True)
        stack.stop()
        if env_file is not None and stack.persist_dir is None:
            env_file.unlink(missing_ok=True)  # the in-memory data it names is gone
    return 0


if __name__ == "__main__":
    sys.exit(main())
