#!/usr/bin/env bash
# run_curl_multi.sh RECUO EXAMPLE [WRAPPER...] — runs examples/c/curl_multi.c (built as
# EXAMPLE, under WRAPPER, e.g. valgrind) against `recuo serve` on 127.0.0.1, which lets 4
# requests through at once and refuses the rest with a 429 and Retry-After: 1 while the 4
# take 300 ms. Passes when every transfer succeeded, at least 3 were in flight while others
# waited, and the server saw one idempotency key per POST and no retry before its wait.
set -euo pipefail
recuo=$1 example=$2
shift 2
out=$(mktemp -d)
pid=
stop() { [ -z "$pid" ] || { kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true; }; rm -rf "$out"; }
trap stop EXIT
"$recuo" serve --port 0 --allowance 600/min --burst 4 --latency 300ms --fail-rate 0 \
    --stop-after 60s > "$out/serve" 2>/dev/null &
pid=$!
for _ in $(seq 100); do grep -q '^listening on' "$out/serve" 2>/dev/null && break; sleep 0.05; done
base=$(sed -n 's/^listening on \(http:[^ ]*\).*/\1/p' "$out/serve")
[ -n "$base" ] || { echo "run_curl_multi: recuo serve did not start" >&2; exit 1; }
n=12
"$@" "$example" "$base" "$n" > "$out/example"
summary=$(tail -n 1 "$out/example")
read -r total succeeded in_flight waited < <(echo "$summary" |
    sed -n 's/^\([0-9]*\) transfers: \([0-9]*\) succeeded.* \([0-9]*\) in flight while \([0-9]*\) waited$/\1 \2 \3 \4/p')
fail() { echo "run_curl_multi: $*" >&2; cat "$out/example" >&2; exit 1; }
[ "$total" = "$n" ] && [ "$succeeded" = "$n" ] || fail "not every transfer succeeded"
[ "$in_flight" -ge 3 ] && [ "$waited" -ge 1 ] || fail "fewer than 3 in flight while others waited"
# GET /stats with bash alone (no curl command needed).
port=${base##*:}
exec 3<>"/dev/tcp/127.0.0.1/$port"
printf 'GET /stats HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' >&3
stats=$(timeout 10 cat <&3 | tail -n 1)
exec 3<&-
grep -q "\"idempotency_keys\":$n," <<<"$stats" || fail "not one key per POST: $stats"
grep -q '"early_retries":0,' <<<"$stats" || fail "a retry came before its wait: $stats"
grep -q '"throttled":0,' <<<"$stats" && fail "no transfer had to wait"
[ -z "${SHOW:-}" ] || cat "$out/example"
echo "curl_multi: $summary; one key per POST, no early retry"
