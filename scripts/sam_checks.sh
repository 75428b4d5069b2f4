#!/usr/bin/env bash
# Checks the SAM application the way a deploy would see it, without Docker or an AWS account:
#   1. cfn-lint with every rule, informational and experimental ones included (.cfnlintrc), and
#      checkov's CloudFormation checks (.checkov.yaml); each config lists the rules it leaves out, with
#      the reason beside each
#   2. sam validate --lint --region us-east-1
#   3. sam build            (into .aws-sam/build; the layer for python3.13 / arm64)
#   4. the guided deploy's authentication check (the SAM CLI's own, scripts/guided_auth_check.py):
#      no API event makes `sam deploy --guided` ask "has no authentication. Is this okay?"
#   5. the built layer's layout: python/svc_core and its dependencies, arm64 binaries
# One line per step with its result and time; a failed step's output is printed after the
# summary, and the script exits non-zero.
#
# The SAM CLI and cfn-lint live in their own venv ($SAM_VENV, default .venv-sam under the
# repository root; their pins clash with the project's), created here on first use. checkov has a venv
# of its own ($CHECKOV_VENV, default .venv-checkov): it pins boto3 exactly (==1.35.49 in 3.3.30), and so
# does the SAM CLI (another version). Both scanners are pinned: a new release adds rules, and a rule is
# taken on purpose (fixed, or left out with its reason in .cfnlintrc / .checkov.yaml), not by surprise.
# sam build needs python3.13 on PATH (the layer's runtime): taken from pyenv when present,
# else any working python3.13 on PATH.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
SAM_VENV="${SAM_VENV:-$ROOT/.venv-sam}"
case "$SAM_VENV" in /*) ;; *) SAM_VENV="$ROOT/$SAM_VENV" ;; esac
CHECKOV_VENV="${CHECKOV_VENV:-$ROOT/.venv-checkov}"
case "$CHECKOV_VENV" in /*) ;; *) CHECKOV_VENV="$ROOT/$CHECKOV_VENV" ;; esac
CFN_LINT_VERSION=1.58.0
CHECKOV_VERSION=3.3.30
export SAM_CLI_TELEMETRY=0
LOG_DIR="$ROOT/.aws-sam/checks"
mkdir -p "$LOG_DIR"

now_ms() { date +%s%3N; }
seconds_since() { local ms=$(( $(now_ms) - $1 )); printf '%d.%01ds' $((ms / 1000)) $(((ms % 1000) / 100)); }
report() { printf '%-28s %-7s %s\n' "$1" "$2" "$3"; }  # step, result, detail

# ---- the venvs: SAM CLI and cfn-lint, checkov ------------------------------------------
has_version() { [ -x "$1" ] && "$1" --version 2>/dev/null | grep -q "$2"; }  # binary, version
# ensure_venv NAME VENV BINARY VERSION PACKAGES...: the venv is used as it is when BINARY reports VERSION;
# else the packages are installed (into the existing venv too: an older one gets the new pin).
ensure_venv() {
  local name="$1" venv="$2" binary="$3" version="$4" start; shift 4
  start=$(now_ms)
  if has_version "$venv/bin/$binary" "$version"; then
    report "$name" "ok" "present at $venv ($(seconds_since "$start"))"
    return 0
  fi
  if ! { { [ -x "$venv/bin/python" ] || python3 -m venv "$venv"; } &&
         "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip &&
         "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$@"
       } >"$LOG_DIR/$binary-venv.log" 2>&1; then
    report "$name" "FAILED" "could not create $venv ($(seconds_since "$start"))"
    grep -v '^WARNING: Location' "$LOG_DIR/$binary-venv.log" | tail -n 40 >&2
    exit 1
  fi
  report "$name" "ok" "made at $venv, $binary $version ($(seconds_since "$start"))"
}
ensure_venv "sam venv" "$SAM_VENV" cfn-lint "$CFN_LINT_VERSION" aws-sam-cli "cfn-lint==$CFN_LINT_VERSION"
ensure_venv "checkov venv" "$CHECKOV_VENV" checkov "$CHECKOV_VERSION" "checkov==$CHECKOV_VERSION"
SAM="$SAM_VENV/bin/sam"
CFN_LINT="$SAM_VENV/bin/cfn-lint"
CHECKOV="$CHECKOV_VENV/bin/checkov"

# ---- python3.13 for sam build ------------------------------------------------------------
works() { [ -n "$1" ] && [ -x "$1" ] && "$1" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 13))' 2>/dev/null; }
py313=""
pyenv_root="${PYENV_ROOT:-}"
if [ -z "$pyenv_root" ] && command -v pyenv >/dev/null 2>&1; then pyenv_root="$(pyenv root)"; fi
if [ -z "$pyenv_root" ] && [ -d "$HOME/.pyenv" ]; then pyenv_root="$HOME/.pyenv"; fi
if [ -n "$pyenv_root" ] && [ -d "$pyenv_root/versions" ]; then
  # The newest installed 3.13.x (a pyenv shim alone fails unless 3.13 is the active version).
  while IFS= read -r dir; do
    if works "$dir/bin/python3.13"; then py313="$dir/bin/python3.13"; break; fi
  done < <(ls -d "$pyenv_root"/versions/3.13* 2>/dev/null | sort -V -r)
fi
if [ -z "$py313" ] && works "$(command -v python3.13 2>/dev/null || true)"; then
  py313="$(command -v python3.13)"
fi
if [ -z "$py313" ]; then
  report "python3.13" "FAILED" "not found: sam build needs python3.13 (e.g. pyenv install 3.13)"
  exit 1
fi
py313_dir="$(dirname "$py313")"
export PATH="$py313_dir:$PATH"
report "python3.13" "ok" "$("$py313" -c 'import platform; print(platform.python_version())') from $py313_dir"

# ---- the checks --------------------------------------------------------------------------
failed=()
run_step() {  # name, log file, command...
  local name="$1" log="$2"; shift 2
  local start; start=$(now_ms)
  local rc=0
  "$@" >"$log" 2>&1 || rc=$?
  if [ "$rc" -eq 0 ] && [ "$name" = "layer layout" ]; then
    report "$name" "ok" "$(tail -n 1 "$log") ($(seconds_since "$start"))"
  elif [ "$rc" -eq 0 ]; then
    report "$name" "ok" "($(seconds_since "$start"))"
  else
    report "$name" "FAILED" "exit $rc ($(seconds_since "$start")), log: ${log#"$ROOT/"}"
    failed+=("$name|$log")
  fi
}

check_layer() {
  local layer="$ROOT/.aws-sam/build/SharedLayer/python" package missing=()
  [ -d "$layer" ] || { echo "no $layer: did sam build run?"; return 1; }
  for package in svc_core aws_lambda_powertools pydantic pydantic_core jwt cryptography; do
    [ -d "$layer/$package" ] || missing+=("$package")
  done
  if [ ${#missing[@]} -gt 0 ]; then echo "missing under python/: ${missing[*]}"; return 1; fi
  if [ -e "$layer/python" ]; then echo "nested python/python: wrong ContentUri"; return 1; fi
  # Every native extension must be an aarch64 ELF (e_machine 183), as Lambda's arm64 runs it.
  "$py313" - "$layer" <<'PY' || return 1
import pathlib, struct, sys
wrong = [str(p) for p in pathlib.Path(sys.argv[1]).rglob("*.so")
         if struct.unpack("<H", p.read_bytes()[18:20])[0] != 183]
if wrong:
    sys.exit("not aarch64: " + " ".join(wrong))
# Every module has its CPython 3.13 bytecode beside it (the Makefile's compileall): /opt is read-only
# on Lambda, and a module without it is compiled at every cold start.
root = pathlib.Path(sys.argv[1])
uncompiled = [str(p.relative_to(root)) for p in root.rglob("*.py")
              if not (p.parent / "__pycache__" / f"{p.stem}.cpython-313.pyc").exists()]
if uncompiled:
    sys.exit(f"{len(uncompiled)} modules without their .pyc, e.g. " + " ".join(uncompiled[:5]))
PY
  echo "python/: $(ls "$layer" | grep -v '\.dist-info$' | tr '\n' ' ')"
  echo "python/svc_core + $(ls -d "$layer"/*.dist-info | wc -l) distributions, all .so aarch64, every module compiled"
}

run_step "cfn-lint (all rules)" "$LOG_DIR/cfn-lint.log" "$CFN_LINT" --config-file .cfnlintrc
run_step "checkov" "$LOG_DIR/checkov.log" "$CHECKOV" --config-file .checkov.yaml
run_step "sam validate --lint" "$LOG_DIR/validate.log" "$SAM" validate --lint --region us-east-1
run_step "guided deploy auth" "$LOG_DIR/guided.log" "$SAM_VENV/bin/python" scripts/guided_auth_check.py template.yaml
run_step "sam build" "$LOG_DIR/build.log" "$SAM" build --build-dir .aws-sam/build --cache-dir .aws-sam/cache
run_step "layer layout" "$LOG_DIR/layer.log" check_layer

if [ ${#failed[@]} -gt 0 ]; then
  for entry in "${failed[@]}"; do
    echo >&2
    echo "---- ${entry%%|*} (last lines of ${entry#*|}) ----" >&2
    tail -n 40 "${entry#*|}" >&2
  done
  exit 1
fi
