"""python -m bench: run the benchmarks and print one table (see bench/__init__.py)."""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import subprocess
import sys
import time

from bench.fixture import BENCH, Fixture, isolate_from_aws


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def ensure_baseline_requirements(install: bool) -> bool:
    """FastAPI and Mangum are for the cold-start baseline only (bench/requirements.txt)."""
    missing = [name for name in ("fastapi", "mangum") if importlib.util.find_spec(name) is None]
    if not missing:
        return True
    requirements = BENCH / "requirements.txt"
    if not install:
        _say(f"{', '.join(missing)} missing: the FastAPI + Mangum baseline is skipped "
             f"(install it with: {sys.executable} -m pip install -r {requirements})")
        return False
    _say(f"{', '.join(missing)} missing: installing {requirements} into this environment "
         f"(the FastAPI + Mangum baseline only; --no-install skips that baseline instead)")
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "-r", str(requirements)])
    importlib.invalidate_caches()
    if done.returncode != 0:
        _say("could not install them: the FastAPI + Mangum baseline is skipped")
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description="Run the benchmarks; print one table.")
    parser.add_argument("--repeat", type=int, default=7, help="cold starts per variant (default 7)")
    parser.add_argument("--warm", type=int, default=1000, help="warm in-process requests (default 1000)")
    parser.add_argument("--load-requests", type=int, default=2000, help="requests to the local stack (default 2000)")
    parser.add_argument("--clients", type=int, default=8, help="concurrent clients of the local stack (default 8)")
    parser.add_argument("--load-seconds", type=float, default=10.0,
                        help="time bound of the load run, seconds (default 10)")
    parser.add_argument("--webhook-messages", type=int, default=500,
                        help="webhook deliveries for the throughput of one delivery process (default 500)")
    parser.add_argument("--webhook-events", type=int, default=50,
                        help="API calls whose webhook latency is measured on the local stack (default 50)")
    parser.add_argument("--chat-turns", type=int, default=20,
                        help="chat turns streamed on the local stack, one after the other (default 20)")
    parser.add_argument("--soak-calls", type=int, default=20000,
                        help="API calls of each conservation soak run (default 20000; --only soak)")
    parser.add_argument("--soak-pause", type=float, action="append",
                        help="seconds both datastores are paused mid-way in a soak run after the baseline "
                             "(repeatable; default 5 and 15)")
    parser.add_argument("--replication-seconds", type=float, default=60.0,
                        help="seconds of writes to a tenant with a secondary region (default 60; --only replication)")
    parser.add_argument("--replication-rate", type=float, default=4.0,
                        help="writes a second during them (default 4)")
    parser.add_argument("--no-install", action="store_true",
                        help="do not pip-install bench/requirements.txt; skip the FastAPI + Mangum baseline")
    parser.add_argument("--only", choices=("cold", "warm", "calls", "load", "webhooks", "chat", "soak", "replication",
                                                  "cost", "ceilings", "growth"),
                        action="append", help="run only these parts (repeatable; soak, replication, cost, "
                                              "ceilings and growth run only when named)")
    parser.add_argument("--growth-items", type=int, default=100_000,
                        help="items of each kind in the tenant (default 100000; --only growth)")
    args = parser.parse_args(argv)
    parts = set(args.only or ("cold", "warm", "calls", "load", "webhooks", "chat"))

    from bench import calls, ceilings, chat_stream, cold, cost, growth, load, replication, report, soak, warm, webhooks

    started = time.monotonic()
    load_before = os.getloadavg()[0]
    clean_env = isolate_from_aws()
    with_fastapi = "cold" in parts and ensure_baseline_requirements(not args.no_install)

    rows: list[tuple] = []
    timings: list[str] = []

    def timed(name: str, run):
        begun = time.monotonic()
        result = run()
        timings.append(f"{name} {time.monotonic() - begun:.0f}")
        return result

    needs_fixture = bool(parts & {"cold", "warm", "calls", "webhooks"})   # the in-process parts' emulator
    if needs_fixture:
        _say("starting the moto server and provisioning template.yaml on it")
    fixture = timed("setup", lambda: Fixture().provision()) if needs_fixture else None
    costs = None
    try:
        if "cold" in parts:
            _say(f"cold starts: {args.repeat} rounds (+1 discarded)")
            measured = timed("cold", lambda: cold.measure(fixture, args.repeat, with_fastapi, _say))
            rows += report.cold_rows(measured, args.repeat)
        if "warm" in parts:
            _say(f"warm overhead: {args.warm} requests")
            rows += report.warm_rows(timed("warm", lambda: warm.measure(fixture, args.warm)))
        if "calls" in parts:
            _say("AWS calls per request")
            rows += report.calls_rows(timed("calls", lambda: calls.measure(fixture)))
        if "load" in parts:
            _say(f"local stack: {args.load_requests} requests, {args.clients} clients, at most {args.load_seconds:g} s")
            rows += report.load_rows(timed("load", lambda: load.measure(
                load.stack_env(clean_env), args.clients, args.load_requests, args.load_seconds, progress=_say)))
        if "webhooks" in parts:
            _say(f"webhooks: {args.webhook_messages} deliveries from one process, "
                 f"latency of {args.webhook_events} events on the local stack")
            delivered = timed("webhooks", lambda: webhooks.throughput(fixture, args.webhook_messages))
            latency = timed("webhook-latency", lambda: webhooks.latency(load.stack_env(clean_env),
                                                                        args.webhook_events))
            rows += report.webhook_rows(delivered, latency)
        if "chat" in parts:
            _say(f"chat stream: {args.chat_turns} turns on the local stack, offline model")
            rows += chat_stream.rows(timed("chat", lambda: chat_stream.measure(load.stack_env(clean_env),
                                                                              args.chat_turns)))
        if "soak" in parts:
            rows += soak.rows(timed("soak", lambda: soak.measure(load.stack_env(clean_env), args.soak_calls,
                                                                 args.clients, args.soak_pause or [5.0, 15.0], _say)))
        if "replication" in parts:
            _say(f"secondary region: two local cells, {args.replication_seconds:g} s of writes at "
                 f"{args.replication_rate:g}/s, then a failover")
            rows += replication.rows(timed("replication", lambda: replication.measure(
                load.stack_env(clean_env), args.replication_seconds, args.replication_rate)))
        if "ceilings" in parts:
            _say("ceilings: parallel creators on one enterprise tenant of the local stack")
            rows += ceilings.rows(timed("ceilings", lambda: ceilings.measure(load.stack_env(clean_env), progress=_say)))
        if "growth" in parts:
            _say(f"growth: one tenant's first pages with 10 and {args.growth_items:,} items of a kind")
            rows += growth.rows(timed("growth", lambda: growth.measure(load.stack_env(clean_env), args.growth_items,
                                                                       progress=_say)))
        if "cost" in parts:
            _say("cost: the local stack with its meter on (DEVSTACK_METER)")
            costs = timed("cost", lambda: cost.measure(load.stack_env(clean_env), _say))
    finally:
        if fixture is not None:
            fixture.stop()

    elapsed = time.monotonic() - started
    print(f"Benchmarks  {time.strftime('%Y-%m-%d %H:%M:%S')}  Python {platform.python_version()}  "
          f"{os.cpu_count()} CPUs  load average {load_before:.1f} at start, {os.getloadavg()[0]:.1f} at end  "
          f"run time {elapsed:.0f} s ({', '.join(timings)})")
    print("Figures only inform (shared, noisy machine); targets never fail the command.")
    print()
    if rows:
        print(report.render(rows))
    if costs is not None:
        print()
        print(cost.render(costs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
