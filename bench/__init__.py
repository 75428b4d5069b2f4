"""Benchmarks: one command, outside the test suite, that prints one table.

    .venv/bin/python -m bench                 # about 2-3 minutes on the 2-core machine
    .venv/bin/python -m bench --help          # repetitions, request counts, --only PART

Nothing here asserts a time: the machine is shared and noisy, so every figure only informs.
Each target is printed beside its figure with PASS or MISS, and the exit code is 0 either
way. The header line gives the load average at start and end, to judge how noisy a run was.
AWS is never reached: the AWS variables of the machine are dropped, fake credentials are set,
and every client is pointed at an emulator (AWS_ENDPOINT_URL).

Setup (bench/fixture.py): moto's server in a child process (`python -m moto.server`, the
tests' tests/support/emulator.py) for the whole run, template.yaml provisioned on it as the
tests do it (tests/support/stack.py, with RateLimitPerWindow raised so that the warm loop on
one key is not refused; every request is still counted), one tenant, an API key with every
scope and one project. Not moto in-process: importing moto imports boto3, so a cold-start
child that used it would already hold boto3 and hide the very floor it is compared with.

1. Cold start (bench/cold.py, bench/cold_child.py). Each variant is a fresh interpreter
   running bench/cold_child.py, which times itself from its own first line to the end of
   the request, so the interpreter's start (the same for all, shown apart as the wall time
   of `python -c pass`) is not in the figures, and the ratios compare the rest:
   - floor: `import boto3` plus creating a DynamoDB client;
   - FastAPI + Mangum (bench/fastapi_app.py): GET /api/v1/projects/{id} with the same data
     access as the service (svc_core's authentication, rate limit, domain and envelope);
     only the HTTP layer differs. fastapi and mangum come from bench/requirements.txt, which
     `python -m bench` pip-installs into the running environment when they are missing
     (--no-install skips this baseline instead);
   - ProjectsFunction (GET /api/v1/projects/{id} with the API key), ApiKeysFunction
     (GET /api/v1/api-keys) and MetaFunction (GET /api/v1/.well-known/jwks.json): the
     function's app.py imported as Lambda imports it (PYTHONPATH holds the function's
     directory and the layer), then lambda_handler called once with an API Gateway event
     built from events/*.json. The child also reports the import time, the AWS calls of the
     request and the time inside them (the emulator's answers), and the number of modules.
   One discarded round first (bytecode caches, page cache), then N rounds (--repeat,
   default 7), each in a different order (rotated, every other one reversed) to spread the
   noise. Median and min; ratios of medians (and of mins) against the floor (target at most
   1.15x) and against FastAPI + Mangum (target at most 0.7x).

2. Warm overhead (bench/warm.py): ProjectsFunction's handler called in this process, after
   a warm-up, --warm times (default 1000) for GET /api/v1/projects/{id} with the cached key,
   against the moto server. Per request: handler time minus the time inside botocore API
   calls (before-call to after-call on the clients of svc_core.adapters.aws, bench/awstime.py).
   Median and p99 in microseconds (target: median under 300 us); the same in thread CPU
   time, and without botocore's client-side work, to show what the figure is made of.

3. AWS calls per request (bench/calls.py): every route of template.yaml's API events except
   ANY, one warm-up request then one counted request, counted at botocore's before-call on
   every client, listed by operation. Target: a GET at most 2 (rate limit + the read), any
   other method at most 3. A route added to the template without a scenario in calls.py is
   still counted, sent without parameters, and says so.

4. Local stack (bench/load.py): `python -m devstack --port 0 --quiet` in a child process (the
   stack as the README starts it, with its own emulator), its credentials read from the file
   it writes; a project and one API key per client made through the API; then
   GET /api/v1/projects/{id} from --clients threads (default 8), each with its own keep-alive
   httpx client and key, --load-requests in all (default 2000) or until --load-seconds
   (default 10), whichever comes first. Requests per second, p50 and p99 latency as the
   clients see them, the statuses, and the stack's start time.

5. Webhook delivery (bench/webhooks.py): deliveries per second from one delivery process
   (WebhookDeliveryFunction's handler called here on batches of 10 messages, one batch after
   the other, to a loopback receiver answering 204; --webhook-messages, default 500), and the
   latency from POST /api/v1/projects to the signed project.created at a loopback receiver on
   the local stack (in a child process; --webhook-events, default 50, one at a time), p50 and
   p99 (target: under 2 s).

6. Chat stream (bench/chat_stream.py): on the local stack (in a child process), --chat-turns
   turns (default 20) one after the other, each POST /api/v1/chat/sessions/{id}/messages and
   at once GET .../stream (httpx-sse): the time from sending the POST to the first streamed
   event and to `done`, p50 and p99 (target: first event under 1 s), with the offline model.
"""
