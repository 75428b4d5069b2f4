"""Schemathesis hooks for the fuzzing run: never revoke or rotate the key the run authenticates
with, nor set an IP allowlist that leaves out the run's own address (a fuzzer that locks itself out
tests nothing after that: one generated allowlist turned 61 operations into 403s), and send every Idempotency-Key once
(a generated key repeats across calls: the service then answers the first call's answer again, or
422 for another body, by design; a replayed create names a resource a later call may have deleted,
which the stateful phase would read as a create that did not happen). Replays have their own tests
(tests/integration/test_create_idempotency.py). Generated values and values the stateful phase
takes from earlier responses both pass through before_call."""

import json
import os
import re
import sys
import uuid
from pathlib import Path

import schemathesis

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "layers" / "shared" / "python"))
from svc_core.domain.fields.tenants import CIDR_PATTERN

PROTECTED_KEY_ID = os.environ.get("FUZZ_PROTECTED_KEY_ID", "")
STAND_IN = "key_00000000000000000000000000"  # well formed, never issued: answers 404


# Idempotency-Key -> the request it was first sent with: one key, one request.
_FIRST_USE: dict[str, str] = {}


@schemathesis.hook
def before_call(context, case, kwargs):
    if case.path_parameters and case.path_parameters.get("id") == PROTECTED_KEY_ID:
        case.path_parameters["id"] = STAND_IN
    _keep_loopback_allowed(case)
    _one_request_per_idempotency_key(case)


LOOPBACK = "127.0.0.0/8"  # the run calls the local stack from 127.0.0.1


def _keep_loopback_allowed(case) -> None:
    """A tenant allowlist the run sends keeps admitting the run: its last entry becomes the
    loopback network (the list's length, and so its validity, unchanged)."""
    body = case.body if isinstance(case.body, dict) else None
    allowlist = body.get("ipAllowlist") if body else None
    if case.method.upper() == "PATCH" and case.path.endswith("/settings") and isinstance(allowlist, list) \
            and allowlist and LOOPBACK not in allowlist \
            and all(isinstance(c, str) and re.fullmatch(CIDR_PATTERN, c) for c in allowlist):
        # Every entry is valid (so a case made invalid on purpose stays invalid for its own reason).
        allowlist[-1] = LOOPBACK


def _one_request_per_idempotency_key(case) -> None:
    """Some phases build several cases on one set of generated headers (the coverage phase's body
    variants): a key seen before with another request gets a fresh one, in the case itself, so a
    check resending this case sends it again."""
    data = getattr(getattr(case.meta, "phase", None), "data", None)
    if getattr(getattr(data, "scenario", None), "name", "") == "MISSING_PARAMETER":
        return  # a case sent without a header: editing it would make schemathesis revalidate what it left out
    for name, value in list((case.headers or {}).items()):
        if name.lower() != "idempotency-key":
            continue
        request = json.dumps([case.method, case.formatted_path, case.query, case.body], sort_keys=True, default=repr)
        if _FIRST_USE.setdefault(value, request) != request:
            case.headers[name] = str(uuid.uuid4())
            _FIRST_USE[case.headers[name]] = request


@schemathesis.hook("map_headers")
def fresh_idempotency_keys(context, headers):
    """A new key for every generated request (at generation, so the checks that resend a case
    without a header see the same case)."""
    for name in list(headers or {}):
        if name.lower() == "idempotency-key":
            headers[name] = str(uuid.uuid4())
    return headers
