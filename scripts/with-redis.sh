#!/usr/bin/env bash
# Run a command with a private redis-server on a free loopback port (REDIS_URL exported), stopped on exit.
# Installs redis-server with apt-get when missing and running as root; otherwise says how, and fails.
set -euo pipefail

if ! command -v redis-server >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "with-redis: installing redis-server with apt-get" >&2
    (apt-get install -y redis-server >/dev/null 2>&1) || (apt-get update >/dev/null && apt-get install -y redis-server >/dev/null)
  else
    echo "with-redis: redis-server is required for the tests: run 'sudo apt-get install -y redis-server'" >&2
    exit 1
  fi
fi

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
dir=$(mktemp -d -t cachegate-redis-XXXX)
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --dir "$dir" --daemonize no \
  >"$dir/redis.log" 2>&1 &
pid=$!
cleanup() { kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$dir"; }
trap cleanup EXIT INT TERM

for _ in $(seq 100); do
  if redis-cli -p "$port" ping >/dev/null 2>&1; then break; fi
  sleep 0.1
done
redis-cli -p "$port" ping >/dev/null || { echo "with-redis: redis-server did not start" >&2; cat "$dir/redis.log" >&2; exit 1; }
echo "with-redis: redis-server on 127.0.0.1:$port (pid $pid)" >&2

export REDIS_URL="redis://127.0.0.1:$port/0"
"$@"
