"""Schemathesis hooks for the fuzzing run: never revoke or rotate the key the run authenticates
with (a fuzzer that locks itself out tests nothing after that). Generated values and values the
stateful phase takes from earlier responses both pass through before_call."""

import os

import schemathesis

PROTECTED_KEY_ID = os.environ.get("FUZZ_PROTECTED_KEY_ID", "")
STAND_IN = "key_00000000000000000000000000"  # well formed, never issued: answers 404


@schemathesis.hook
def before_call(context, case, kwargs):
    if case.path_parameters and case.path_parameters.get("id") == PROTECTED_KEY_ID:
        case.path_parameters["id"] = STAND_IN
