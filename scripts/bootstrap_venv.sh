#!/usr/bin/env bash
# Creates .venv (Python 3.11 to 3.13) and installs requirements-dev.txt when it changed.
# Sourced by scripts/dev and scripts/test; safe to run again.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"

pick_python() {
  for candidate in python3.13 python3.12 python3.11 python3; do
    if command -v "$candidate" >/dev/null 2>&1 &&
       "$candidate" -c 'import sys; sys.exit(0 if (3, 11) <= sys.version_info[:2] <= (3, 13) else 1)' 2>/dev/null; then
      command -v "$candidate"; return 0
    fi
  done
  echo "Python 3.11 to 3.13 is needed" >&2; return 1
}

if [ ! -x "$VENV/bin/python" ]; then
  echo "creating $VENV"
  "$(pick_python)" -m venv "$VENV"
fi
stamp="$VENV/.requirements.sha256"
want="$(cat "$ROOT/requirements-dev.txt" "$ROOT/layers/shared/python/requirements.txt" "$ROOT/client/pyproject.toml" \
  "$ROOT/functions/chat_stream/requirements.txt" | sha256sum | cut -d' ' -f1)"  # with the files it names (-r)
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
  echo "installing Python packages into $VENV"
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip 2>&1 | grep -v "^WARNING: Location" || true
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$ROOT/requirements-dev.txt" 2>&1 | grep -v "^WARNING: Location" || true
  # The client library and the svc CLI (client/), editable: the tests import it and run .venv/bin/svc.
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -e "$ROOT/client" 2>&1 | grep -v "^WARNING: Location" || true
  "$VENV/bin/python" -c "import moto, aws_lambda_powertools, jwt, pydantic, yaml, pytest, svc_client" # fail loudly if pip did
  echo "$want" > "$stamp"
fi
