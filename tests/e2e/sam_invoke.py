"""Plays `sam local invoke` for one function without Docker: run as a fresh interpreter with only
the function's environment, it puts the function's code directory and the layer on sys.path
(SAM's /var/task and /opt/python), imports the handler the template names once (the cold start),
and invokes it for each event in a child forked for that event, so that no invocation sees
another's state. Reads {"code_dir", "layer", "handler", "function", "events": {name: event}} on
stdin; writes {name: response or {"error": ...}} to the file named by its argument (stdout is the
functions' log, as in Lambda).

Only the standard library here: nothing of the test suite or of devstack is imported.
"""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
import traceback
import uuid


class Context:
    def __init__(self, function: str) -> None:
        self.function_name = function
        self.function_version = "$LATEST"
        self.memory_limit_in_mb = 1024
        self.invoked_function_arn = f"arn:aws:lambda:us-east-1:123456789012:function:{function}"
        self.aws_request_id = str(uuid.uuid4())
        self.log_group_name = f"/aws/lambda/{function}"
        self.log_stream_name = "local"
        self._deadline = time.monotonic() + 60

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


def _invoke_in_child(handler, event: dict, function: str) -> dict:
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: one invocation, its answer on the pipe
        os.close(read)
        try:
            answer = handler(event, Context(function))
        except BaseException:
            answer = {"error": traceback.format_exc()}
        with os.fdopen(write, "w") as out:
            json.dump(answer, out, default=str)
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as answer:
        text = answer.read()
    os.waitpid(pid, 0)
    return json.loads(text) if text else {"error": "the invocation ended without an answer"}


def main() -> int:
    request = json.load(sys.stdin)
    sys.path[:0] = [request["code_dir"], request["layer"]]
    module_name, handler_name = request["handler"].rsplit(".", 1)
    handler = getattr(importlib.import_module(module_name), handler_name)
    answers = {name: _invoke_in_child(handler, event, request["function"])
               for name, event in request["events"].items()}
    with open(sys.argv[1], "w") as out:
        json.dump(answers, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
