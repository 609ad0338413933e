#!/usr/bin/env bash
# with_redis.sh COMMAND [ARG...] — runs COMMAND with REDIS_URL naming a redis-server of its
# own on a free port of 127.0.0.1 (no persistence: --save "" --appendonly no), and stops the
# server afterwards. Exits with COMMAND's status; 1 when no server could be started. Every
# wait is bounded. Used by `make doc-c`, whose Redis example reads REDIS_URL.
set -u

pid=
stop() { # the server, if any, stopped and reaped
    if [ -n "$pid" ]; then
        kill "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
        pid=
    fi
}
trap stop EXIT
trap 'stop; exit 130' INT TERM

started() { # $1 = pid, $2 = port: alive, and answering PONG
    kill -0 "$1" 2>/dev/null && [ "$(redis-cli -h 127.0.0.1 -p "$2" ping 2>/dev/null)" = PONG ]
}

for _ in 1 2 3 4 5 6 7 8 9 10; do
    port=$(( (RANDOM * 32768 + RANDOM) % 20000 + 30000 ))
    # Something answers there already: try another port.
    if redis-cli -h 127.0.0.1 -p "$port" ping >/dev/null 2>&1; then
        continue
    fi
    redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no >/dev/null 2>&1 &
    pid=$!
    for _ in $(seq 1 250); do # at most 5 s
        started "$pid" "$port" && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.02
    done
    if started "$pid" "$port"; then
        REDIS_URL="redis://127.0.0.1:$port" "$@"
        status=$?
        stop
        exit "$status"
    fi
    stop
done
echo "with_redis.sh: could not start redis-server on 127.0.0.1 (make deps installs it)" >&2
exit 1
