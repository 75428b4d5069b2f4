"""Start the local stack:  python -m devstack [--port 3000] [--credentials FILE] [--persist DIR] [--allow-origin ORIGIN]
                                             [--sam-local] [--sam-host HOST] [--emulator-bind ADDRESS]
                                             [--parameter NAME=VALUE] [--regions R1,R2,... [--replication-lag S]]
                                             [--model-provider P --model-id ID [--model-base-url URL]]
                                             [--brand-name NAME] [--brand-logo URL|PATH] [--brand-favicon PATH]
                                             [--brand-color #RRGGBB]

Prints the base URL and the development credentials, writes them to the credentials file
(default .local/dev-credentials.json), and serves until Ctrl-C or SIGTERM. The password is printed
only to a terminal: where the output is a log (a file, a pipe), it is left to the credentials file.

The environment files are written beside the stack's own state, in DIR with --persist, else in
.local/stacks/PORT/ (removed at stop, as the data they name is), never beside a credentials file
given elsewhere: the functions' environment (for `python -m ops --local`), and for `sam local`
(docs/sam-local.md) sam-env.json, the --env-vars file, every function pointed at this stack's
emulators at the address (--sam-host) a container reaches the host by. With --sam-local it also
creates the sample objects the events of events/ name in the development tenant and writes the
filled events beside the credentials file, in events/.

With --regions, one cell per region, each a stack of its own in a process of its own (devstack/cells.py):
the first on --port, the next on port+1, ..., the directory replicated between them.

The model is the offline one unless --model-provider names another (openai: Ollama, vLLM, llama.cpp or
OpenAI; anthropic; bedrock), with its key from MODEL_API_KEY; a model without a price refuses the
start with exit status 2, as it fails a deploy.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import sys
import threading
import time
from pathlib import Path
from typing import Any

from devstack import dashboard, sam_local
from devstack.bootstrap import bootstrap, print_credentials, write_credentials
from devstack.stack import DEFAULT_ALLOWED_ORIGINS, ENGINES, MOTO_ENGINE_CAVEATS, ROOT, LocalStack, environment_file
from devstack.template import load as load_template


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
    parser.add_argument("--sam-host", default=sam_local.default_container_host(), metavar="HOST",
                        help="the host's address as a `sam local` container reaches it, written into sam-env.json "
                             f"(default here: {sam_local.default_container_host()}; {sam_local.DOCKER_DESKTOP_HOST} "
                             f"on Docker Desktop, the docker0 bridge's {sam_local.LINUX_BRIDGE_HOST} on Linux)")
    parser.add_argument("--emulator-bind", default="127.0.0.1", metavar="ADDRESS",
                        help="the address the AWS emulator (moto) listens on (default 127.0.0.1: this machine "
                             f"only); on Linux, {sam_local.LINUX_BRIDGE_HOST} lets `sam local` containers on "
                             "Docker's default bridge reach it too")
    parser.add_argument("--sam-local", action="store_true",
                        help="create the sample objects the events of events/ name (a project, an agent, a run, ...) "
                             "in the development tenant, and write the events filled beside the credentials file")
    parser.add_argument("--parameter", action="append", metavar="NAME=VALUE", dest="parameters", default=[],
                        help="a template parameter's value, e.g. WebhookRetrySchedule=1,1,1,1,1,1,1 (a receiver "
                             "down past its retries within seconds); repeat for several")
    parser.add_argument("--regions", metavar="R1,R2,...",
                        help="run one cell per region (the first on --port, the next on port+1, ...), the global "
                             "directory replicated between them; the bootstrap tenant is in the first")
    parser.add_argument("--replication-lag", type=float, default=1.0, metavar="SECONDS",
                        help="with --regions: how long a directory change takes to reach the other cells "
                             "(default 1.0)")
    # A cell of several, as devstack/cells.py starts it: not for a user's command line.
    parser.add_argument("--model-provider", choices=("offline", "openai", "anthropic", "bedrock"),
                        help="the provider of the local stack's model (default offline); its key, if it needs one, "
                             "from the environment variable MODEL_API_KEY")
    parser.add_argument("--model-base-url", metavar="URL",
                        help="where that provider is reached (e.g. http://127.0.0.1:11434/v1 for Ollama)")
    parser.add_argument("--model-id", metavar="ID", help="the default model (e.g. llama3.1); it must have a price")
    parser.add_argument("--model-allowed-ids", metavar="ID,ID", default="",
                        help="other models a tenant may choose (provider:model, or bare for --model-provider)")
    parser.add_argument("--dashboard-port", type=int, default=None, metavar="PORT",
                        help=f"where the dashboard is served on 127.0.0.1 (default {dashboard.DEFAULT_PORT}, or any free "
                             "port when --port is 0; 0 = any); its origin is allowed by the API's CORS")
    parser.add_argument("--no-dashboard", action="store_true", help="do not build or serve the dashboard")
    # The operator's brand: the template's Brand* parameters (docs/dashboard.md, Brand).
    parser.add_argument("--brand-name", metavar="NAME", help="the product's name in the dashboard, the API's pages and "
                        "the invitation e-mail (BrandName; default svc)")
    parser.add_argument("--brand-logo", metavar="URL|PATH", help="the logo: an https URL, or the path of a file in "
                        "dashboard/public/ (BrandLogo; default brand/logo.svg)")
    parser.add_argument("--brand-favicon", metavar="PATH", help="the tab's icon, a file in dashboard/public/ "
                        "(BrandFavicon; default brand/favicon.svg)")
    parser.add_argument("--brand-color", metavar="#RRGGBB", help="the accent colour, hex (BrandColor; default #0b5cad)")
    parser.add_argument("--no-iam", action="store_true",
                        help="do not check the functions' AWS calls against their roles (on by default: docs/local-stack.md)")
    parser.add_argument("--cell", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--listen-fd", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--secrets-out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--secrets-in", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--no-bootstrap", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--cells-status-url", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if any("*" in origin or "," in origin for origin in args.allow_origins or ()):
        parser.error("--allow-origin takes one exact origin (no `*`, no commas); repeat it for several")
    if args.emulator == "moto" and args.persist:
        parser.error("--persist keeps the tables in DynamoDB Local: it does not go with --emulator moto")
    if args.regions is not None:
        from devstack import cells
        cells.check_options(args, parser)

    if args.no_iam:  # the cells of --regions, started as child processes, inherit it
        os.environ["DEVSTACK_IAM"] = "off"
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
    given = (("name", args.brand_name), ("logo", args.brand_logo), ("favicon", args.brand_favicon),
             ("color", args.brand_color))
    parameters |= {f"Brand{key.capitalize()}": value for key, value in given if value is not None}
    brand = {key: parameters[f"Brand{key.capitalize()}"] for key, _ in given   # --parameter Brand...= counts too
             if f"Brand{key.capitalize()}" in parameters}
    try:
        dashboard.brand_config(**brand)
    except ValueError as refused:
        parser.error(str(refused))
    model_api_keys = _model_settings(args, parser, parameters)
    fallback_warning = fallback_key(parameters, model_api_keys, os.environ)
    if fallback_warning:
        print(f"WARNING: {fallback_warning}", file=sys.stderr, flush=True)
    if args.regions is not None:
        from devstack import cells
        return cells.main(args, parser, stop=stop, started=started)
    listening = socket.socket(fileno=args.listen_fd) if args.listen_fd is not None else None
    cells_status = None
    if args.cells_status_url:
        from devstack.cells import status_reader
        cells_status = status_reader(args.cells_status_url)
    console: dashboard.DashboardServer | None = None
    if not (args.cell or args.no_dashboard):
        port = args.dashboard_port if args.dashboard_port is not None else (0 if args.port == 0 else dashboard.DEFAULT_PORT)
        try:
            dashboard.build(log=lambda m: print(m, flush=True))
            console = dashboard.DashboardServer(port=port, brand=brand)
        except (RuntimeError, OSError) as failed:  # the API serves on without it
            print(f"WARNING: the dashboard is not served: {failed}", file=sys.stderr, flush=True)
    if console is not None:
        allowed = parameters.get("AllowedOrigins", DEFAULT_ALLOWED_ORIGINS)
        parameters["AllowedOrigins"] = ",".join(o for o in (allowed, console.url) if o)
        parameters.setdefault("DashboardUrl", console.url)   # the device login approves on the dashboard
    stack = LocalStack(port=args.port, log=log, parameters=parameters,
                       persist_dir=args.persist.resolve() if args.persist else None, engine=args.emulator,
                       emulator_bind=args.emulator_bind, listening=listening, secrets_from=args.secrets_in,
                       secrets_to=args.secrets_out, cells_status=cells_status, model_api_keys=model_api_keys)
    from svc_core.adapters.models.registry import ModelConfigurationError  # the layer is on the path now (stack.py)
    env_file: Path | None = None
    try:
        try:
            stack.start()
        except ModelConfigurationError as refused:
            print(f"cannot start: {refused}", file=sys.stderr, flush=True)
            return 2
        kept = args.persist / "credentials.json" if args.persist else None
        if args.no_bootstrap:  # a cell after the first: the development tenant lives in the first
            credentials = None
        elif kept and kept.exists():  # the development tenant and key of an earlier run
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
        sam_env_file = env_file.parent / sam_local.ENV_VARS_NAME
        _write_sam_local_files(stack, credentials, sam_env_file, args.credentials.parent, args.sam_host,
                               args.persist / "samples.json" if args.persist else None, samples=args.sam_local)
        if console is not None:
            console.start(stack.base_url)
        print(f"local stack ready in {time.monotonic() - started:.1f} s at {stack.base_url}/api/v1", flush=True)
        print("IAM: each function's AWS calls are checked against its role in template.yaml (--no-iam turns it off)"
              if stack.iam else "IAM: NOT enforced (--no-iam): every function may call anything", flush=True)
        if console is not None:
            print(f"dashboard: {console.url}/ (sign in with the development user below)", flush=True)
        if not args.cell:  # the cells' parent says these once for all of them
            print_credentials(stack.parameters["AllowedOrigins"], credentials, args.credentials)
        stop.wait()
    finally:
        print("stopping", flush=True)
        if console is not None:
            console.stop()
        stack.stop()
        if env_file is not None and stack.persist_dir is None:
            for written in (env_file, env_file.parent / sam_local.ENV_VARS_NAME):
                written.unlink(missing_ok=True)  # the in-memory data and the endpoints they name are gone
    return 0


_BASE_URL_PARAMETER = {"openai": "OpenAIBaseUrl", "anthropic": "AnthropicBaseUrl", "bedrock": "BedrockEndpointUrl"}


def _model_settings(args: argparse.Namespace, parser: argparse.ArgumentParser,
                    parameters: dict[str, str]) -> dict[str, str]:
    """The --model-* options as the template's parameters (into `parameters`); the provider's key
    (MODEL_API_KEY, never an option: a command line is visible to every user of the machine)."""
    provider = args.model_provider
    if provider is None or provider == "offline":
        if args.model_base_url or args.model_id:
            parser.error("--model-base-url and --model-id go with --model-provider openai, anthropic or bedrock")
        if args.model_allowed_ids:   # answered by the offline model, and checked for a price as any
            parameters["ModelAllowedIds"] = args.model_allowed_ids
        return {}
    if not args.model_id:
        parser.error(f"--model-provider {provider} needs --model-id (a model with a price: docs/models-and-metering.md)")
    parameters.update(ModelProvider=provider, ModelId=args.model_id, ModelAllowedIds=args.model_allowed_ids)
    if args.model_base_url:
        parameters[_BASE_URL_PARAMETER[provider]] = args.model_base_url
    key = os.environ.get("MODEL_API_KEY", "")
    return {provider: key} if key and provider != "bedrock" else {}


def fallback_key(parameters: dict[str, str], keys: dict[str, str], environ: Any) -> str | None:
    """The fallback model's key, where ModelFallbackId names another provider that needs one than the
    key given (MODEL_FALLBACK_API_KEY, into `keys`); else the warning to print: without it every call
    of the fallback would be sent with no key and refused by its provider."""
    fallback = parameters.get("ModelFallbackId", "")
    if not fallback:
        return None
    provider = fallback.split(":", 1)[0] if ":" in fallback else parameters.get("ModelProvider", "offline")
    if provider not in ("openai", "anthropic") or provider in keys or provider == parameters.get("ModelProvider"):
        return None   # no key needed, one given, or the primary's own set-up (a keyless local server too)
    key = environ.get("MODEL_FALLBACK_API_KEY", "")
    if key:
        keys[provider] = key
        return None
    return (f"the fallback model {fallback} is {provider}'s, and no key for {provider} was given: set "
            f"MODEL_FALLBACK_API_KEY (or MODEL_API_KEY with --model-provider {provider}), or its calls are refused")


def _write_sam_local_files(stack: LocalStack, credentials: dict, env_vars_file: Path, directory: Path, host: str,
                           kept: Path | None, *, samples: bool) -> None:
    """The --env-vars file for `sam local` (beside the stack's state); with samples, the sample objects
    and the filled events too, in `directory` (a failure here is reported, and the stack serves on)."""
    try:
        env_vars = sam_local.write_env_vars({**stack.environment, "PUBLIC_BASE_URL": stack.base_url},
                                            stack.parameters, host, env_vars_file)
        print(f"sam local: --env-vars {env_vars} (host {host}; docs/sam-local.md)", flush=True)
        if not samples:
            return
        earlier = json.loads(kept.read_text()) if kept and kept.exists() else None
        values = sam_local.create_samples(stack.base_url, credentials, kept=earlier)
        if kept:
            sam_local.write_private(kept, json.dumps(sam_local.lasting(values)))
        events = sam_local.write_events(values, directory / "events")
        print(f"sam local: {len(events)} events filled in {directory / 'events'}", flush=True)
    except Exception as error:
        print(f"WARNING: the files for sam local were not written: {error}", file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
