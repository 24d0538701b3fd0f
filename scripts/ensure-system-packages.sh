#!/usr/bin/env bash
# Make sure the system packages the tests drive are present: redis-server, and Debian's chromium with
# chromium-driver for the dashboard's browser test. Installs them with apt-get when running as root;
# otherwise names the command to run and fails, so no test is skipped in silence.
set -euo pipefail

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ -x /usr/bin/chromedriver ] || missing+=(chromium-driver)
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "installing ${missing[*]} with apt-get" >&2
  apt-get install -y -q "${missing[@]}" >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q "${missing[@]}" >/dev/null; }
else
  echo "the tests need: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
