#!/bin/sh
# The function's handler under the Lambda Web Adapter layer (AWS_LAMBDA_EXEC_WRAPPER=/opt/bootstrap):
# the adapter starts this, waits until the port answers, then turns each invocation into an HTTP
# request to it and streams the answer back (AWS_LWA_INVOKE_MODE=response_stream).
# /opt/python is the shared layer (svc_core and its dependencies).
PATH="$PATH:$LAMBDA_TASK_ROOT/bin" PYTHONPATH="$PYTHONPATH:/opt/python:$LAMBDA_RUNTIME_DIR" \
  exec python -m uvicorn --host 127.0.0.1 --port "${AWS_LWA_PORT:-8080}" --log-level warning --no-access-log app:app
