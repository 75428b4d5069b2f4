#!/usr/bin/env bash
# Redocly CLI's lint of the OpenAPI document (functions/meta/openapi.json) with its recommended
# rules (redocly.yaml; known problems, with their reasons, in .redocly.lint-ignore.yaml). The CLI
# comes from package.json (scripts/bootstrap_node.sh installs it). It runs offline: telemetry and
# the update check, the only things it would fetch, are off. Called by scripts/test.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
REDOCLY="$ROOT/node_modules/.bin/redocly"
if [ ! -x "$REDOCLY" ]; then
  echo "Redocly CLI is not installed ($REDOCLY): run scripts/bootstrap_node.sh" >&2
  # In CI it must be there; elsewhere the step is skipped, as the tests needing npm packages are.
  [ "${CI:-}" != "true" ] && echo "skipped: the OpenAPI lint" && exit 0
  exit 1
fi
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true
exec "$REDOCLY" lint --config redocly.yaml functions/meta/openapi.json
