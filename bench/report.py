"""The table: one plain-text table, sections as header rows, targets and PASS/MISS beside."""

from __future__ import annotations

import os

from bench.calls import RouteCalls
from bench.cold import Variant
from bench.load import LoadResult
from bench.warm import WarmResult, summary
from bench.webhooks import LatencyResult, ThroughputResult

# The targets: a cold start without SnapStart against the floor and FastAPI + Mangum, an
# emulated SnapStart restore to its first response against a warm request, the layer's own time.
COLD_FLOOR_TARGET = 1.4
RESTORE_WARM_TARGET = 2.0
COLD_FASTAPI_TARGET = 0.60
WARM_TARGET_US = 500.0
COLUMNS = ("measurement", "figure", "target", "result", "notes")


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds >= 0.1 else f"{seconds * 1000:.1f} ms"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def cold_rows(variants: list[Variant], repeat: int) -> list[tuple]:
    rows: list[tuple] = [(f"1. Cold start: fresh process, import + one request (median of {repeat}, min)",)]
    by_name = {v.name: v for v in variants}
    floor, fastapi = by_name["floor"], by_name.get("fastapi")
    for v in variants:
        figure = f"{_ms(v.median())} (min {_ms(v.min())})"
        if v.name == "python":
            rows.append(("  " + v.label, figure, "", "", "process wall time seen by the parent"))
            continue
        if v.name.endswith(".restore"):
            restore, warm = v.median("restore_s"), v.median("warm_s")
            rows.append(("  " + v.label, f"{_ms(restore)} (min {_ms(v.min('restore_s'))})",
                         f"<= {RESTORE_WARM_TARGET:.0f}x warm", verdict(restore <= RESTORE_WARM_TARGET * warm),
                         f"restore-to-first-response (after-restore hooks + first request, "
                         f"{_plural(v.runs[-1].get('restore_calls', 0), 'AWS call')}); a warm request "
                         f"{_ms(warm)} ({_plural(v.runs[-1].get('warm_calls', 0), 'AWS call')}): {restore / warm:.1f}x; "
                         f"a warm request of a key the container had not seen {_ms(v.median('new_key_s'))} "
                         f"({_plural(v.runs[-1].get('new_key_calls', 0), 'AWS call')}): "
                         f"{restore / v.median('new_key_s'):.1f}x; page faults {v.median('restore_faults'):.0f} "
                         f"(warm {v.median('warm_faults'):.0f}, the unseen key's {v.median('new_key_faults'):.0f})"))
            continue
        if v.name == "tracer":
            rows.append(("  " + v.label, figure, "", "", f"the X-Ray SDK's import alone {_ms(v.median('xray_s'))}: "
                         "why Tracer is not used (docs/deploying.md, Logs and metrics)"))
            continue
        if v.name == "floor":
            notes = (f"import {_ms(v.median('import_s'))} + client {_ms(v.median() - v.median('import_s'))}; "
                     f"{v.runs[-1]['modules']} modules")
        else:
            aws_ms = v.median("aws_s")
            notes = (f"import {_ms(v.median('import_s'))} + request {_ms(v.median() - v.median('import_s'))} "
                     f"({_plural(v.runs[-1]['aws_calls'], 'AWS call')}, {_ms(aws_ms)} in them); "
                     f"{v.runs[-1]['modules']} modules")
        rows.append(("  " + v.label, figure, "", "", notes))
        if v.name in ("floor", "fastapi", "python"):
            continue
        # The start-up import set (app module imported, no request yet) beside the floor's import.
        import_ratio = v.median("import_s") / floor.median("import_s")
        rows.append(("    import at start", f"{_ms(v.median('import_s'))} ({import_ratio:.2f}x the floor's "
                     f"{_ms(floor.median('import_s'))})", "", "",
                     f"{v.runs[-1]['import_modules']} modules (floor {floor.runs[-1]['import_modules']}, "
                     f"+{v.runs[-1]['import_modules'] - floor.runs[-1]['import_modules']})"))
        ratio, ratio_min = v.median() / floor.median(), v.min() / floor.min()
        if v.name.endswith(".write"):  # shown beside the function's read, which is the one the target names
            rows.append(("    vs floor", f"{ratio:.2f}x (min {ratio_min:.2f}x)", "", "",
                         "not a target: a body's validation loads pydantic on a function's first write"))
            if fastapi is not None:
                rows.append(("    vs FastAPI + Mangum", f"{v.median() / fastapi.median():.2f}x", "", "", ""))
            continue
        rows.append(("    vs floor", f"{ratio:.2f}x (min {ratio_min:.2f}x)", f"<= {COLD_FLOOR_TARGET:.2f}x",
                     verdict(ratio <= COLD_FLOOR_TARGET), ""))
        if fastapi is not None:
            ratio, ratio_min = v.median() / fastapi.median(), v.min() / fastapi.min()
            rows.append(("    vs FastAPI + Mangum", f"{ratio:.2f}x (min {ratio_min:.2f}x)",
                         f"<= {COLD_FASTAPI_TARGET:.2f}x", verdict(ratio <= COLD_FASTAPI_TARGET), ""))
        else:
            rows.append(("    vs FastAPI + Mangum", "not measured", f"<= {COLD_FASTAPI_TARGET:.2f}x", "-",
                         "fastapi/mangum not installed (bench/requirements.txt)"))
    return rows


def warm_rows(w: WarmResult) -> list[tuple]:
    overhead_med, overhead_p99 = summary(w.overhead_us)
    layer_med, layer_p99 = summary(w.layer_only_us)
    handler_med, handler_p99 = summary(w.handler_us)
    cpu_med, cpu_p99 = summary(w.overhead_cpu_us)
    inside_med, _ = summary(w.inside_us)
    own_med, own_p99 = summary(w.layer_own_us)
    canned_med, canned_p99 = summary(w.canned_us)
    return [
        (f"2. Warm overhead per request, AWS time excluded ({w.requests} requests, in-process, moto server)",),
        ("  GET /projects/{id}: handler - AWS calls", f"{overhead_med:.0f} us (p99 {overhead_p99:.0f} us)",
         "", "", f"{w.calls_per_request:.2f} AWS calls per request"),
        ("    same in CPU time", f"{cpu_med:.0f} us (p99 {cpu_p99:.0f} us)", "", "",
         "process CPU time (both threads of a request): what neighbours on the machine do not inflate"),
        ("    without botocore's client side", f"{layer_med:.0f} us (p99 {layer_p99:.0f} us)", "", "",
         "also minus params validation, endpoint rules, serialization (wall)"),
        ("    handler minus the whole botocore calls", f"{own_med:.0f} us (p99 {own_p99:.0f} us)", "", "",
         "wall clock: also the process resuming after each round trip to the emulator"),
        ("    the shared layer's own time", f"{canned_med:.0f} us (p99 {canned_p99:.0f} us)",
         f"median <= {WARM_TARGET_US:.0f} us", verdict(canned_med <= WARM_TARGET_US),
         "botocore's answers canned: routing, validation, auth, log and metric lines, envelope"),
        ("    whole handler, AWS included", f"{handler_med / 1000:.2f} ms (p99 {handler_p99 / 1000:.2f} ms)", "", "",
         f"inside AWS calls: median {inside_med / 1000:.2f} ms (emulator + HTTP)"),
    ]


def calls_rows(results: list[RouteCalls]) -> list[tuple]:
    rows: list[tuple] = [("3. AWS calls per warm request (botocore level; read: GET, write: the rest; each "
                          "authenticated request's two rate-limit counts, the credential's and the tenant's, included)",)]
    for r in results:
        ops = ", ".join(f"{op} x{n}" if n > 1 else op for op, n in sorted(r.operations.items())) or "none"
        status_note = f"status {r.status}" + (f"; {r.note}" if r.note else "")
        answered = 200 <= r.status < 300  # a refused request's calls are not the route's work: no verdict
        rows.append((f"  {r.method:<6} {r.path.removeprefix('/api/v1')}", f"{r.count}: {ops}",
                     f"<= {r.target}", verdict(r.count <= r.target) if answered else "", status_note))
    return rows


def load_rows(r: LoadResult) -> list[tuple]:
    statuses = ", ".join(f"{s}: {n}" for s, n in sorted(r.statuses.items()))
    bound = "; stopped by the time bound" if r.stopped_by_deadline else ""
    return [
        (f"4. Local stack (python -m devstack), GET /projects/{{id}}, {r.clients} concurrent clients",),
        ("  throughput", f"{r.rps:.0f} req/s", "", "",
         f"{r.completed} of {r.requested} requests in {r.seconds:.1f} s{bound}"),
        ("  latency", f"p50 {r.p50:.1f} ms, p99 {r.p99:.1f} ms", "", "",
         f"statuses {statuses}" + (f"; {r.errors} transport errors" if r.errors else "")),
        ("  stack start", f"{r.startup_s:.1f} s", "", "", "to 'local stack ready' (moto server, provisioning, bootstrap)"),
    ] + ([("  CPU used while measured", ", ".join(f"{k} {v:.1f} s" for k, v in r.cpu_s.items()), "", "",
           f"of {r.seconds * (os.cpu_count() or 1):.0f} CPU-s ({os.cpu_count()} shared cores); "
           "emulator: the stack's moto server")]
         if r.cpu_s else [])


def webhook_rows(t: ThroughputResult, latency: LatencyResult) -> list[tuple]:
    return [
        ("5. Webhook delivery (loopback receiver answering 204)",),
        ("  one delivery process, batches of 10", f"{t.per_second:.0f} deliveries/s", "", "",
         f"{t.delivered} of {t.messages} in {t.seconds:.1f} s, {t.failures} failed; "
         f"{t.verified_sample} checked with standardwebhooks; moto server"),
        ("  API call to delivery, local stack", f"p50 {latency.p50:.0f} ms, p99 {latency.p99:.0f} ms", "< 2 s",
         verdict(latency.p99 < 2000),
         f"{len(latency.latencies_ms)} POST /projects, one at a time; stack start {latency.startup_s:.1f} s"),
    ]


def render(rows: list[tuple]) -> str:
    widths = [len(c) for c in COLUMNS]
    for row in rows:
        if len(row) > 1:
            for i, cell in enumerate(row):
                widths[i] = max(widths[i], len(cell))
    widths[-1] = 0  # the last column is not padded

    def line(cells: tuple) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=False)).rstrip()

    rule = "-" * (sum(widths[:-1]) + 2 * (len(widths) - 1) + max(len(r[-1]) for r in rows if len(r) > 1))
    out = [line(COLUMNS), rule]
    for row in rows:
        out.append(row[0] if len(row) == 1 else line(row))
    return "\n".join(out)
