import time; T0 = time.perf_counter()  # noqa: E702 - the clock starts on the first line

"""One cold start, run as a script in a fresh interpreter by bench/cold.py:

    python bench/cold_child.py floor
    python bench/cold_child.py handler MODULE EVENT_FILE
    python bench/cold_child.py restore MODULE EVENT_FILE KEY_ID   (SnapStart, emulated: see _restore)

`floor`: import boto3 and create a DynamoDB client (what every Python function pays).
`handler`: import MODULE (a function's app.py, or bench/fastapi_app.py; PYTHONPATH holds its
directory and the shared layer, as Lambda's sys.path holds /var/task and /opt/python), then
call its lambda_handler once with the API Gateway event in EVENT_FILE.

Times are taken from the first line of this file, so the interpreter's own start (the same
for every kind, measured apart as `python -c pass`) is not in them. The time spent inside
botocore API calls (the emulator's answers) is recorded through botocore's before-call and
after-call events. The last line printed is `@@bench {json}`; everything above it is the
function's own log output.
"""

import json  # noqa: E402 - after the clock (every kind imports json anyway)
import sys  # noqa: E402


class _AwsTimer:
    """Accumulates the time between botocore's before-call and after-call events."""

    def __init__(self) -> None:
        self.calls = 0
        self.seconds = 0.0

    def before(self, context=None, **_):
        context["_bench_started"] = time.perf_counter()

    def after(self, context=None, **_):
        started = context.pop("_bench_started", None)
        if started is not None:
            self.calls += 1
            self.seconds += time.perf_counter() - started


def _floor() -> dict:
    import boto3
    imported = time.perf_counter()
    modules = len(sys.modules)
    boto3.client("dynamodb")
    return {"import_s": imported - T0, "import_modules": modules}


def _tracer() -> dict:
    """What Powertools Tracer would add to a start: the X-Ray SDK it imports, over boto3 and Powertools."""
    import aws_lambda_powertools  # noqa: F401
    import boto3  # noqa: F401
    before = time.perf_counter()
    import aws_xray_sdk.core  # noqa: F401
    return {"import_s": time.perf_counter() - T0, "xray_s": time.perf_counter() - before, "import_modules": len(sys.modules)}


def _handler(module_name: str, event_file: str) -> dict:
    module = __import__(module_name)
    imported = time.perf_counter()
    modules = len(sys.modules)  # the start-up import set, before the first request adds to it
    # The clients are created at the first request, from this session: hooks registered on it
    # now are copied into them. (svc_core.adapters.aws is already imported by the module.)
    from svc_core.adapters import aws
    timer = _AwsTimer()
    session = aws._session()
    session.register("before-call", timer.before, unique_id="bench-aws-before")
    session.register("after-call", timer.after, unique_id="bench-aws-after")
    with open(event_file) as f:
        event = json.load(f)
    response = module.lambda_handler(event, None)
    return {"import_s": imported - T0, "import_modules": modules, "status": response.get("statusCode"),
            "aws_calls": timer.calls, "aws_s": timer.seconds}


def _restore(module_name: str, event_file: str, key_id: str) -> dict:
    """A SnapStart restore, emulated: import MODULE and run its before-snapshot hooks (the init
    phase), fork (the restore), then in the child the after-restore hooks, the first request and a
    warm one of the same event; then one more, warm but with the key KEY_ID and its tenant's policy
    forgotten, as when a warm container first sees a key (the reads a restore must make too).
    Returns the child's figures, with each request's page faults: after the fork, every page a
    request writes first (a reference count is a write) is copied then, as a restored snapshot's
    pages are loaded on first touch."""
    import os
    import resource
    faults = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_minflt  # noqa: E731
    module = __import__(module_name)
    from svc_core.platform import snapshot
    snapshot.run_before()
    with open(event_file) as f:
        event = json.load(f)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        from svc_core.adapters import aws
        timer = _AwsTimer()
        touched = faults()
        started = time.perf_counter()
        snapshot.run_after()
        # Counted on the session and on the clients made before the snapshot, which it kept (a
        # client copies the session's hooks when made, so later ones get them from the session).
        for events in [aws._session(), *(made.meta.events for made in aws._made)]:
            events.register("before-call", timer.before, unique_id="bench-aws-before")
            events.register("after-call", timer.after, unique_id="bench-aws-after")
        status = module.lambda_handler(event, None).get("statusCode")
        first = time.perf_counter() - started
        first_calls, timer.calls = timer.calls, 0
        first_faults, touched = faults() - touched, faults()
        started = time.perf_counter()
        module.lambda_handler(event, None)
        warm = time.perf_counter() - started
        warm_calls, timer.calls = timer.calls, 0
        warm_faults = faults() - touched
        from svc_core.auth import authenticate, tenant_policy
        authenticate.forget_key(key_id)
        tenant_policy.forget()
        touched = faults()
        started = time.perf_counter()
        module.lambda_handler(event, None)
        new_key = time.perf_counter() - started
        os.write(write, json.dumps({"status": status, "restore_s": first, "warm_s": warm, "new_key_s": new_key,
                                    "restore_calls": first_calls, "warm_calls": warm_calls,
                                    "new_key_calls": timer.calls, "restore_faults": first_faults,
                                    "warm_faults": warm_faults, "new_key_faults": faults() - touched}).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        result = json.loads(pipe.read() or "{}")
    os.waitpid(pid, 0)
    return result


def main() -> None:
    kind = sys.argv[1]
    if kind == "restore":
        result = _restore(sys.argv[2], sys.argv[3], sys.argv[4])
    else:
        result = {"floor": _floor, "tracer": _tracer}[kind]() if kind in ("floor", "tracer") \
            else _handler(sys.argv[2], sys.argv[3])
    result["total_s"] = time.perf_counter() - T0
    result["modules"] = len(sys.modules)
    sys.stdout.flush()
    print("@@bench " + json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
