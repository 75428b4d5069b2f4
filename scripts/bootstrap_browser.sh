#!/usr/bin/env bash
# Debian's Chromium for the browser tests (Playwright drives it; its own browser download does
# not work here). Installs the package when /usr/bin/chromium is missing and apt-get can.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then exit 0; fi
if ! command -v apt-get >/dev/null 2>&1 || [ "$(id -u)" != "0" ]; then
  echo "chromium is not installed and cannot be installed here (needs apt-get as root)" >&2; exit 1
fi
echo "installing Debian's chromium"
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -q --no-install-recommends chromium >/dev/null 2>&1 ||
  { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q --no-install-recommends chromium >/dev/null; }
/usr/bin/chromium --version
