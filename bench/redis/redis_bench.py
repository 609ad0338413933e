"""The Redis regulator's cost beside redis-cell's CL.THROTTLE and a bare PING (issue 30).

    python3 redis_bench.py OUT.json --cell LIBREDIS_CELL.so --load REDIS_LOAD --script GCRA.lua
        [--cluster-script scripts/redis-cluster] [--rounds 5] [--also-script NAME=FILE ...]

On one node (a redis-server started here, 127.0.0.1, a free port) and on a 3+3 cluster
(`scripts/redis-cluster start`), both with redis-cell loaded, for 1, 8 and 64 concurrent
clients, each round measures:

- `recuo script`: recuo's GCRA script by EVALSHA, exactly as recuo-redis sends it for
  `try_acquire` (the keys `{recuo-bench}:tat` and `{recuo-bench}:interval`, 1 000 000/s,
  burst 1, cost 1, no wait allowed, the server's clock), sent by redis-benchmark;
- `CL.THROTTLE`: redis-cell's command with the same settings (1 000 000/s, burst 1), by
  redis-benchmark on the same server;
- `PING`, by redis-benchmark on the same server;
- `recuo client`: recuo's own Rust client end to end (bench/src/bin/redis_load.rs: N threads
  sharing one `recuo_redis::regulator`, each calling `try_acquire`).

The rate is high enough that nothing is ever refused: every call is the full path. On the
cluster every figure is taken on the master that holds the key's slot (redis-benchmark
connects to it directly: its `--cluster` mode spreads its clients over every master and only
rewrites a `{tag}` placeholder in keys, which one limit's key is not); the cluster's cost is
there all the same — a cluster node checks each command's slot and replicates each write.
After the run, the key's replica is asked which limits' state it holds (redis-cell 0.2.2 does
not replicate its writes).

Each figure: acquires (or calls) per second, p50 and p99 latency, and the server's CPU time
per call (utime + stime of the server's process over the calls). Every ratio is taken round by
round (recuo / CL.THROTTLE in the same round, the contenders in an order rotated every round);
OUT.json holds the rounds, bench/report/build_report.py the medians. And, with valgrind, the
instructions per call inside the server (callgrind, a node of its own): a figure that other
load on a shared machine cannot change.

One round trip per acquire, checked on every `recuo client` run: the servers' INFO
commandstats (every master of the cluster), read after the client's warm-up and after its run,
must show one EVALSHA per acquire on the key's master and no other command sent (INFO itself
and the replicas' REPLCONF aside; the commands the script runs inside the server, which
commandstats counts too, are told apart by one run of redis-benchmark's EVALSHA first). The
step fails when it does not.

`--also-script before=OLD.lua` measures another version of the script beside (before/after).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

KEY = "recuo-bench"
CLIENTS = (1, 8, 64)
# redis-benchmark's requests per run, by clients count: about half a second each on 2 cores.
REQUESTS = {1: 6_000, 8: 25_000, 64: 25_000}
LOAD_SECONDS = 0.5
SCRIPT = "recuo script (EVALSHA)"
CELL = "CL.THROTTLE"
PING = "PING"
CLIENT = "recuo client (try_acquire)"
# recuo-redis's arguments for try_acquire on a 1 000 000/s regulator of burst 1: the
# configured interval in ns, burst, cost, max_wait_us, now_us ('' = the server's TIME).
SCRIPT_ARGS = ["2", f"{{{KEY}}}:tat", f"{{{KEY}}}:interval", "1000", "1", "1", "0", ""]
# redis-cell: KEY MAX_BURST COUNT PERIOD QUANTITY, the limit being MAX_BURST + 1.
CELL_ARGS = [CELL, f"{{{KEY}}}:cell", "0", "1000000", "1", "1"]
# Commands that are no client's acquire: our own INFO, the replicas' acknowledgements.
NOT_OURS = {"info", "replconf"}


def log(msg: str) -> None:
    print(f"bench-redis: {msg}", file=sys.stderr, flush=True)


def run(argv: list[str], timeout: float = 120, **kw: Any) -> str:
    return subprocess.run(argv, check=True, capture_output=True, text=True, timeout=timeout, **kw).stdout


def cli(port: int, *args: str) -> str:
    return run(["redis-cli", "-h", "127.0.0.1", "-p", str(port), *args], timeout=10)


def cpu_ticks(pid: int) -> int:
    """utime + stime of a process, in clock ticks."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


TICK = os.sysconf("SC_CLK_TCK")


def commandstats(ports: list[int]) -> dict[tuple[int, str], int]:
    """(port, command) → calls + rejected calls (a redirect is a rejected call)."""
    out = {}
    for port in ports:
        for line in cli(port, "INFO", "commandstats").splitlines():
            if not line.startswith("cmdstat_"):
                continue
            name, stats = line[len("cmdstat_"):].split(":", 1)
            kv = dict(item.split("=") for item in stats.split(","))
            out[(port, name)] = int(kv["calls"]) + int(kv.get("rejected_calls", 0))
    return out


class Target:
    """The server a deployment's figures are taken on, and every server to count commands on."""

    def __init__(self, name: str, url: str | None, port: int, pid: int, count_ports: list[int]):
        self.name, self.url, self.port, self.pid, self.count_ports = name, url, port, pid, count_ports


def benchmark(target: Target, clients: int, command: list[str]) -> dict[str, float]:
    n = REQUESTS[clients]
    before = cpu_ticks(target.pid)
    out = run(["redis-benchmark", "-h", "127.0.0.1", "-p", str(target.port), "-c", str(clients),
               "-n", str(n), "--csv", *command])
    cpu = cpu_ticks(target.pid) - before
    row = list(csv.DictReader(io.StringIO(out)))[-1]
    return {"per_s": float(row["rps"]), "p50_us": float(row["p50_latency_ms"]) * 1000,
            "p99_us": float(row["p99_latency_ms"]) * 1000, "cpu_us": cpu / TICK * 1e6 / n}


def script_profile(target: Target, sha: str) -> dict[str, int]:
    """The commands one run of the script makes inside the server (Redis counts them in
    commandstats too): measured with redis-benchmark, which sends one EVALSHA per call."""
    n = 1000
    before = commandstats([target.port])
    run(["redis-benchmark", "-h", "127.0.0.1", "-p", str(target.port), "-c", "1", "-n", str(n), "-q",
         "EVALSHA", sha, *SCRIPT_ARGS])
    after = commandstats([target.port])
    delta = {name: after.get((port, name), 0) - before.get((port, name), 0) for port, name in after}
    if delta.get("evalsha") != n:
        raise SystemExit(f"bench-redis: {n} EVALSHA sent, {delta.get('evalsha')} counted")
    # Fewer than one per call: redis-benchmark's own (it reads two CONFIG settings first).
    inner = {name: d // n for name, d in delta.items() if d >= n and name not in NOT_OURS and name != "evalsha"}
    if any(d % n for name, d in delta.items() if name in inner):
        raise SystemExit(f"bench-redis: the script's commands vary from call to call: {delta}")
    return inner


def recuo_client(load: Path, target: Target, clients: int, inner: dict[str, int],
                 checks: list[dict[str, Any]]) -> dict[str, float] | str:
    """One run of recuo's client; its commands counted. A refused URL answers the reason."""
    proc = subprocess.Popen([str(load), target.url or "", KEY, str(clients), str(LOAD_SECONDS)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout and proc.stdin
        line = proc.stdout.readline().strip()
        if line != "warm":
            err = proc.stderr.read().strip() if proc.stderr else ""
            proc.wait(timeout=10)
            return err or f"redis_load answered {line!r}"
        before, cpu0 = commandstats(target.count_ports), cpu_ticks(target.pid)
        proc.stdin.write("go\n")
        proc.stdin.flush()
        result = json.loads(proc.stdout.readline())
        cpu = cpu_ticks(target.pid) - cpu0
        after = commandstats(target.count_ports)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    delta = {k: after.get(k, 0) - before.get(k, 0) for k in set(after) | set(before)}
    evalsha = delta.get((target.port, "evalsha"), 0)
    # What the scripts ran inside the server is theirs; anything else was sent by the client.
    for name, per_call in inner.items():
        delta[(target.port, name)] = delta.get((target.port, name), 0) - per_call * evalsha
    others = {f"{name}@{port}": d for (port, name), d in delta.items()
              if d and name not in NOT_OURS and (port, name) != (target.port, "evalsha")}
    ok = evalsha == result["acquires"] and not others and result["refused"] == 0
    checks.append({"clients": clients, "acquires": result["acquires"], "evalsha": evalsha,
                   "others": others, "refused": result["refused"], "ok": ok})
    result["cpu_us"] = cpu / TICK * 1e6 / max(result["acquires"], 1)
    return result


def load_script(port: int, body: str) -> str:
    sha = cli(port, "SCRIPT", "LOAD", body).strip()
    if sha != hashlib.sha1(body.encode()).hexdigest():
        raise SystemExit(f"bench-redis: SCRIPT LOAD answered {sha!r}, not the script's SHA-1")
    return sha


def measure(target: Target, args: argparse.Namespace, scripts: dict[str, str]) -> dict[str, Any]:
    shas = {name: load_script(target.port, body) for name, body in scripts.items()}
    contenders: dict[str, list[str] | None] = {
        SCRIPT: ["EVALSHA", shas[SCRIPT], *SCRIPT_ARGS],
        **{name: ["EVALSHA", sha, *SCRIPT_ARGS] for name, sha in shas.items() if name != SCRIPT},
        CELL: CELL_ARGS, PING: [PING], CLIENT: None,
    }
    inner = script_profile(target, shas[SCRIPT])
    figures: dict[str, dict[str, list[dict[str, float]]]] = {str(c): {n: [] for n in contenders} for c in args.clients}
    checks: list[dict[str, Any]] = []
    skipped = None
    names = list(contenders)
    for r in range(args.rounds):
        log(f"{target.name}: round {r + 1} of {args.rounds}")
        for clients in args.clients:
            # A different order every round: a load that comes and goes favours no contender.
            for name in names[r % len(names):] + names[:r % len(names)]:
                command = contenders[name]
                if command is not None:
                    figures[str(clients)][name].append(benchmark(target, clients, command))
                elif skipped is None:
                    got = recuo_client(args.load, target, clients, inner, checks)
                    if isinstance(got, str):
                        skipped = got
                        log(f"{target.name}: recuo's client skipped: {got}")
                    else:
                        figures[str(clients)][name].append(got)
    out: dict[str, Any] = {"server": f"127.0.0.1:{target.port}", "figures": figures, "round_trips": checks,
                           "script_commands": inner}
    if skipped is not None:
        out["client_skipped"] = skipped
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_node(cell: Path, workdir: Path) -> tuple[subprocess.Popen[bytes], int]:
    for _ in range(20):
        port = free_port()
        proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                 "--appendonly", "no", "--dir", str(workdir), "--loadmodule", str(cell)],
                                stdout=open(workdir / "node.log", "ab"), stderr=subprocess.STDOUT)
        for _ in range(100):
            if proc.poll() is not None:
                break
            try:
                if cli(port, "PING").strip() == "PONG" and f"process_id:{proc.pid}" in cli(port, "INFO", "server"):
                    return proc, port
            except subprocess.CalledProcessError:
                pass
            time.sleep(0.05)
        proc.kill()
        proc.wait()
    tail = (workdir / "node.log").read_text(errors="replace").strip().splitlines()[-5:]
    raise SystemExit("bench-redis: no redis-server could start:\n" + "\n".join(tail))


def instructions(args: argparse.Namespace, scripts: dict[str, str], workdir: Path) -> dict[str, Any]:
    """Instructions per call inside redis-server's processCommand (the command and every
    command a script runs; not the socket's reads and writes), counted by callgrind on a
    server of its own, one node: the figure no other load on the machine changes."""
    if not shutil.which("valgrind") or not shutil.which("callgrind_control"):
        return {"skipped": "valgrind is not installed"}
    n, port = 2000, free_port()
    out = workdir / "callgrind"
    out.mkdir()
    proc = subprocess.Popen(["valgrind", "--tool=callgrind", "--toggle-collect=processCommand",
                             f"--callgrind-out-file={out}/cg.out", "redis-server", "--port", str(port),
                             "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", str(out),
                             "--loadmodule", str(args.cell)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            try:
                if cli(port, "PING").strip() == "PONG":
                    break
            except subprocess.CalledProcessError:
                time.sleep(0.1)
        else:
            return {"skipped": "redis-server did not start under valgrind"}
        commands = {name: ["EVALSHA", load_script(port, body), *SCRIPT_ARGS] for name, body in scripts.items()}
        commands |= {CELL: CELL_ARGS, PING: [PING]}
        counted: dict[str, Any] = {}
        for name, command in commands.items():
            bench = ["redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-c", "1", "-P", "20", "-q"]
            run([*bench, "-n", "200", *command])  # the key made, the script cached
            run(["callgrind_control", "-z", str(proc.pid)])
            run([*bench, "-n", str(n), *command])
            run(["callgrind_control", "-d", str(proc.pid)])
            dump = max(out.glob("cg.out*"), key=lambda f: f.stat().st_mtime_ns)
            totals = [line.split()[1] for line in dump.read_text().splitlines()
                      if line.startswith(("summary:", "totals:"))]
            counted[name] = round(int(totals[0]) / n) if totals else None
        return counted
    finally:
        proc.kill()
        proc.wait()


def one_node(args: argparse.Namespace, scripts: dict[str, str], workdir: Path) -> dict[str, Any]:
    proc, port = start_node(args.cell, workdir)
    try:
        target = Target("one node", f"redis://127.0.0.1:{port}", port, proc.pid, [port])
        return measure(target, args, scripts)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def cluster(args: argparse.Namespace, scripts: dict[str, str], workdir: Path) -> dict[str, Any]:
    # scripts/redis-cluster runs `redis-server` from PATH: a wrapper first in PATH loads
    # redis-cell into every node (exec keeps the pid and the process name it checks).
    bindir = workdir / "bin"
    bindir.mkdir(exist_ok=True)
    real = shutil.which("redis-server")
    wrapper = bindir / "redis-server"
    wrapper.write_text(f'#!/bin/sh\nexec {real} "$@" --loadmodule {args.cell}\n')
    wrapper.chmod(0o755)
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    cdir = workdir / "cluster"
    script = str(args.cluster_script)
    log("cluster: starting 3 masters + 3 replicas (scripts/redis-cluster)")
    try:
        out = run([script, "start", str(cdir)], env=env, timeout=90)
    except subprocess.CalledProcessError as e:
        return {"skipped": f"scripts/redis-cluster start failed: {e.stderr.strip()[-300:]}"}
    try:
        env_lines = dict(line.split("=", 1) for line in out.splitlines() if "=" in line)
        port, pid = (int(x) for x in run([script, "master-of", str(cdir), f"{{{KEY}}}:tat"]).split())
        nodes = [int(p) for p in env_lines["NODES"].split(",")]
        masters = [p for p in nodes if "role:master" in cli(p, "INFO", "replication")]
        if "redis-cell" not in cli(port, "MODULE", "LIST"):
            return {"skipped": "redis-cell is not loaded on the cluster's nodes"}
        target = Target("cluster", env_lines["URL"], port, pid, masters)
        got = measure(target, args, scripts)
        got["url"] = env_lines["URL"]
        got["replicated"] = replicated(port)
        return got
    finally:
        subprocess.run([script, "stop", str(cdir)], timeout=60, check=False)


def replicated(master: int) -> dict[str, bool]:
    """Which of the limits' keys the master's replica holds: a limit that is to survive a
    failover must replicate its writes (redis-cell 0.2.2 does not replicate CL.THROTTLE's)."""
    time.sleep(0.5)
    info = cli(master, "INFO", "replication")
    ports = [int(kv.split("=")[1]) for line in info.splitlines() if line.startswith("slave")
             for kv in line.split(":", 1)[1].split(",") if kv.startswith("port=")]
    held = set(cli(ports[0], "KEYS", f"{{{KEY}}}:*").split()) if ports else set()
    return {key: key in held for key in (f"{{{KEY}}}:tat", f"{{{KEY}}}:cell")}


def median(xs: list[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def summary(result: dict[str, Any]) -> list[str]:
    lines = []
    counted = result.get("instructions", {})
    if "skipped" in counted:
        lines.append(f"instructions per call: not measured: {counted['skipped']}")
    elif counted:
        cell = counted.get(CELL)
        lines.append("instructions per call in the server (callgrind, processCommand): " + ", ".join(
            f"{name} {n:,}" + (f" ({n / cell:.2f}× CL.THROTTLE)" if cell and n and name != CELL else "")
            for name, n in counted.items() if n is not None))
    for name, dep in result["deployments"].items():
        if "skipped" in dep:
            lines.append(f"{name}: not measured: {dep['skipped']}")
            continue
        lines.append(f"{name} ({dep['server']}), medians of {result['rounds']} rounds:")
        lines.append(f"  {'clients':>7}  {'contender':<34} {'per s':>9} {'p50 µs':>8} {'p99 µs':>8} {'cpu µs/call':>11}")
        for clients, by in dep["figures"].items():
            for contender, rounds in by.items():
                if not rounds:
                    continue
                m = {k: median([r[k] for r in rounds]) for k in ("per_s", "p50_us", "p99_us", "cpu_us")}
                lines.append(f"  {clients:>7}  {contender:<34} {m['per_s']:>9,.0f} {m['p50_us']:>8.0f} "
                             f"{m['p99_us']:>8.0f} {m['cpu_us']:>11.2f}")
            s, c, p = (by[SCRIPT], by[CELL], by[PING])
            thr = median([a["per_s"] / b["per_s"] for a, b in zip(s, c)])
            lat = median([a["p50_us"] / b["p50_us"] for a, b in zip(s, p)])
            lines.append(f"  {'':>7}  script / CL.THROTTLE throughput {thr:.2f}×, script p50 / PING p50 {lat:.2f}×")
        if "replicated" in dep:
            lines.append("  on the key's replica after the run: " + ", ".join(
                f"{k} {'present' if v else 'absent (not replicated)'}" for k, v in dep["replicated"].items()))
        if "client_skipped" in dep:
            lines.append(f"  recuo client: not measured: {dep['client_skipped']}")
        checks = dep["round_trips"]
        if checks:
            bad = [c for c in checks if not c["ok"]]
            total = sum(c["acquires"] for c in checks)
            inside = ", ".join(sorted(n.upper() for n in dep["script_commands"]))
            lines.append(f"  one round trip per acquire: {'yes' if not bad else 'NO'} — {total:,} acquires, "
                         f"{sum(c['evalsha'] for c in checks):,} EVALSHA (each running {inside} inside the "
                         f"server), other commands sent: {sum(sum(c['others'].values()) for c in checks)}"
                         + (f" ({bad[0]['others']}, refused {bad[0]['refused']})" if bad else ""))
    return lines


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out", type=Path)
    p.add_argument("--cell", type=Path, required=True)
    p.add_argument("--load", type=Path, required=True)
    p.add_argument("--script", type=Path, required=True)
    p.add_argument("--cluster-script", type=Path)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--clients", default=",".join(map(str, CLIENTS)), help="clients counts (default 1,8,64)")
    p.add_argument("--also-script", action="append", default=[], metavar="NAME=FILE",
                   help="another GCRA script measured beside (e.g. an older one: before/after)")
    args = p.parse_args()
    args.clients = [int(c) for c in args.clients.split(",")]
    if not set(args.clients) <= set(REQUESTS):
        raise SystemExit(f"bench-redis: --clients takes some of {', '.join(map(str, CLIENTS))}")
    # The servers run in directories of their own: every path absolute.
    args.cell, args.load = args.cell.resolve(), args.load.resolve()
    if args.cluster_script:
        args.cluster_script = args.cluster_script.resolve()
    for tool in ("redis-server", "redis-cli", "redis-benchmark"):
        if not shutil.which(tool):
            raise SystemExit(f"bench-redis: {tool} is not installed")
    scripts = {SCRIPT: args.script.read_text()}
    for item in args.also_script:
        name, path = item.split("=", 1)
        scripts[f"script {name} (EVALSHA)"] = Path(path).read_text()
    began = time.monotonic()
    result: dict[str, Any] = {
        "redis": cli_version(), "redis_cell": "0.2.2", "rounds": args.rounds,
        "clients": args.clients, "requests": REQUESTS, "client_seconds": LOAD_SECONDS,
        "deployments": {},
    }
    workdir = Path(tempfile.mkdtemp(prefix="recuo-bench-redis-"))
    try:
        log("instructions per call under callgrind (one node)")
        result["instructions"] = instructions(args, scripts, workdir)
        result["deployments"]["one node"] = one_node(args, scripts, workdir)
        if args.cluster_script:
            result["deployments"]["cluster"] = cluster(args, scripts, workdir)
        else:
            result["deployments"]["cluster"] = {"skipped": "no --cluster-script given"}
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    result["seconds"] = round(time.monotonic() - began, 1)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print("\n".join(summary(result)))
    print(f"bench-redis: {result['seconds']} s")
    failed = [c for dep in result["deployments"].values() for c in dep.get("round_trips", []) if not c["ok"]]
    if failed:
        raise SystemExit(f"bench-redis: an acquire took more than one EVALSHA, or failed: {failed[0]}")


def cli_version() -> str:
    out = run(["redis-server", "--version"])
    return next((w.split("=", 1)[1] for w in out.split() if w.startswith("v=")), out.strip())


if __name__ == "__main__":
    main()
