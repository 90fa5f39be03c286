#!/usr/bin/env bash
# Runs the @modelcontextprotocol/conformance server suite (all scenarios, pending included)
# against `warden serve --mcp --http 127.0.0.1:0`, with the scenarios that do not apply listed in
# conformance-baseline.yml. Needs scripts/mcp-setup to have run.
# Usage: tests/mcp/conformance.sh WARDEN_BINARY
set -euo pipefail
warden="$1"
repo="$(cd "$(dirname "$0")/../.." && pwd)"
deps="${WARDEN_MCP_DEPS:-$repo/target/mcp-deps}"
suite="$deps/npm/node_modules/.bin/conformance"
[ -x "$suite" ] || { echo "conformance.sh: $suite is missing: run scripts/mcp-setup" >&2; exit 1; }

tmp="$(mktemp -d "${TMPDIR:-/tmp}/warden-conformance.XXXXXX")"
mkdir -p "$tmp/ws" "$tmp/home"
HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config" "$warden" serve --mcp \
    --policy "$repo/policies/full-auto.policy" --workspace "$tmp/ws" --http 127.0.0.1:0 2>"$tmp/server.log" &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT

url=""
for _ in $(seq 1 300); do
    url="$(grep -o 'http://[^ ]*/mcp' "$tmp/server.log" || true)"
    [ -n "$url" ] && break
    kill -0 "$pid" 2>/dev/null || { echo "conformance.sh: the server exited:" >&2; cat "$tmp/server.log" >&2; exit 1; }
    sleep 0.1
done
[ -n "$url" ] || { echo "conformance.sh: the server did not say where it listens" >&2; exit 1; }

cd "$tmp"
"$suite" server --url "$url" --suite all --expected-failures "$repo/tests/mcp/conformance-baseline.yml" 2>&1 | sed -n '/=== SUMMARY ===/,$p'
exit "${PIPESTATUS[0]}"
