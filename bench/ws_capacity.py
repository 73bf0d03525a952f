"""Widget websockets per ASGI process: idle sessions held and memory per session; round trips per
second of `ping`/`pong` (the transport alone) against a full `message` round trip.

    python bench/ws_capacity.py [--sessions 2000 5000] [--clients 50] [--seconds 10] [--quick]

One `uvicorn assistant.asgi:application` subprocess (one process, as deployed per worker) on a
free 127.0.0.1 port, on the bench database and the usual Redis, with LLM_PROVIDER=none and the
message rate limits off (CHAT_RATE_VISITOR=0, CHAT_RATE_IP=0: one client address sends everything
here). Its memory is VmRSS from /proc/<pid>/status: after one warm-up session (imports and pools
loaded; the baseline), and with N idle sessions open, each of which sent `hello` with the bot's
allowed `Origin` and got `welcome` (a conversation row, a channel-layer group). Per session =
(RSS with N - baseline) / N. Round trips: `--clients` sockets each sending one frame and waiting
for its answer, in a loop, for `--seconds`: `ping` → `pong`, then `message` → ack, typing,
message, typing off (the chain runs without a model on a bot with a few entries).

`--quick`: 500 and 2000 sessions, 5 s per round-trip run. The bench bot (`bench-ws`) and its
conversations are deleted at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

ORIGIN = "https://bench.example"
SLUG = "bench-ws"
QUESTION = "Сколько стоит доставка по Москве?"
PASSAGES = [
    {"id": "delivery", "title": "Доставка", "url": "https://bench.example/delivery",
     "text": "Доставка по Москве стоит 300 рублей и занимает один день. По России — от трёх дней."},
    {"id": "returns", "title": "Возврат", "url": "https://bench.example/returns",
     "text": "Вернуть товар можно в течение 14 дней с чеком и в исходной упаковке."},
    {"id": "pay", "title": "Оплата", "url": "https://bench.example/pay",
     "text": "Оплатить заказ можно картой на сайте или наличными курьеру."},
]


def raise_nofile(needed: int) -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < needed:
        soft = hard if hard == resource.RLIM_INFINITY else min(hard, max(needed, soft))
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    return soft


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def start_server(port: int, log: Path) -> subprocess.Popen[bytes]:
    env = os.environ | {"LLM_PROVIDER": "none", "CHAT_RATE_VISITOR": "0", "CHAT_RATE_IP": "0",
                        "SPRAVKA_LOG_LEVEL": "WARNING"}
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "assistant.asgi:application", "--host", "127.0.0.1",
             "--port", str(port), "--log-level", "warning"],
            cwd=common.REPO, env=env, stdout=out, stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"uvicorn exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return process
        time.sleep(0.2)
    process.kill()
    raise SystemExit(f"uvicorn did not listen within 120 s:\n{log.read_text()[-3000:]}")


def stop_server(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(5)


async def recv(ws: Any) -> dict[str, Any]:
    return dict(json.loads(await asyncio.wait_for(ws.recv(), 60)))


async def open_session(url: str, visitor: str) -> Any:
    from websockets.asyncio.client import connect

    ws = await connect(url, origin=ORIGIN, max_size=2**20, ping_interval=None)  # type: ignore[arg-type]
    await ws.send(json.dumps({"type": "hello", "visitor_id": visitor, "last_seen_id": None}))
    welcome = await recv(ws)
    if welcome.get("type") != "welcome":
        raise RuntimeError(f"expected welcome, got {welcome}")
    return ws


async def open_sessions(url: str, count: int, prefix: str, parallel: int = 50) -> tuple[list[Any], float]:
    gate = asyncio.Semaphore(parallel)

    async def one(i: int) -> Any:
        async with gate:
            return await open_session(url, f"v_{prefix}_{i}")

    started = time.perf_counter()
    opened = await asyncio.gather(*(one(i) for i in range(count)), return_exceptions=True)
    failed = [s for s in opened if isinstance(s, BaseException)]
    if failed:  # reported as fewer sessions alive; the first reason goes to stderr
        print(f"  {len(failed)} of {count} sessions failed to open: {failed[0]!r}", file=sys.stderr)
    return [s for s in opened if not isinstance(s, BaseException)], time.perf_counter() - started


async def close_all(sessions: list[Any]) -> None:
    await asyncio.gather(*(ws.close() for ws in sessions), return_exceptions=True)


async def round_trips(url: str, kind: str, clients: int, seconds: float) -> tuple[int, list[float]]:
    """Round trips completed by `clients` sockets in `seconds`, and each one's latency (ms)."""
    sessions, _ = await open_sessions(url, clients, f"rt_{kind}", parallel=clients)
    latencies: list[float] = []
    stop_at = time.perf_counter() + seconds

    async def loop(ws: Any, n: int) -> None:
        i = 0
        while time.perf_counter() < stop_at:
            started = time.perf_counter()
            if kind == "ping":
                await ws.send('{"type":"ping"}')
                frame = await recv(ws)
                assert frame["type"] == "pong", frame
            else:
                i += 1
                await ws.send(json.dumps({"type": "message", "client_msg_id": f"c{n}_{i}_{time.time_ns()}",
                                          "text": QUESTION}))
                frame = await recv(ws)
                if frame["type"] != "ack":
                    raise RuntimeError(f"expected ack, got {frame}")
                while frame != {"type": "typing", "on": False}:
                    frame = await recv(ws)
            latencies.append((time.perf_counter() - started) * 1000)

    started = time.perf_counter()
    await asyncio.gather(*(loop(ws, n) for n, ws in enumerate(sessions)))
    elapsed = time.perf_counter() - started
    await close_all(sessions)
    return int(len(latencies) / elapsed), latencies


async def measure(args: argparse.Namespace, url: str, pid: int) -> tuple[list[list[Any]], list[list[Any]]]:
    from knowledge.evaluation import percentile

    started_kb = rss_kb(pid)
    warm = await open_session(url, "v_warm")
    await warm.send(json.dumps({"type": "message", "client_msg_id": "warm", "text": QUESTION}))
    frame = await recv(warm)
    while frame != {"type": "typing", "on": False}:
        frame = await recv(warm)
    await warm.close()
    await asyncio.sleep(1)
    baseline_kb = rss_kb(pid)
    memory: list[list[Any]] = [["uvicorn started, before any socket", 0, started_kb / 1024, "", "", "", ""],
                               ["after one warm-up session (baseline)", 0, baseline_kb / 1024, "", "", "", ""]]
    for count in args.sessions:
        sessions, opening = await open_sessions(url, count, f"idle{count}")
        await asyncio.sleep(2)
        held_kb = rss_kb(pid)
        alive = sum(1 for ws in sessions if ws.close_code is None)
        per = (held_kb - baseline_kb) / max(1, len(sessions))
        memory.append([f"{count} idle sessions open (hello → welcome)", alive, held_kb / 1024, per,
                       count / opening, "yes" if alive == count and per <= 30 else "no",
                       (held_kb - baseline_kb) / 1024])
        await close_all(sessions)
        await asyncio.sleep(2)
    trips: list[list[Any]] = []
    for kind in ("ping", "message"):
        rate, latencies = await round_trips(url, kind, args.clients, args.seconds)
        label = "ping → pong (baseline)" if kind == "ping" else "message → ack, typing, message, typing off"
        trips.append([label, args.clients, rate, percentile(latencies, 50), percentile(latencies, 95)])
    return memory, trips


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", nargs="+", type=int, default=[2000, 5000])
    parser.add_argument("--clients", type=int, default=50, help="sockets sending at once in the round-trip runs")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--quick", action="store_true", help="500 and 2000 sessions, 5 s round-trip runs")
    args = parser.parse_args()
    if args.quick:
        args.sessions, args.seconds = [500, 2000], 5.0
    nofile = raise_nofile(2 * max(args.sessions) + 500)  # the client and the server end of each socket
    common.setup_django()
    bot = common.bench_bot(SLUG, fresh=True)
    bot.allowed_origins = [ORIGIN]
    bot.save()
    common.load_passages(bot, PASSAGES, source_title="bench-ws")
    common.embed_bot(bot, "e5-small")
    port = free_port()
    log = Path(tempfile.gettempdir()) / f"bench-ws-uvicorn-{port}.log"
    process = start_server(port, log)
    try:
        memory, trips = asyncio.run(measure(args, f"ws://127.0.0.1:{port}/ws/chat/{bot.public_key}/", process.pid))
    finally:
        stop_server(process)
        common.drop_bot(SLUG)
    print(f"# Websocket capacity — {common.machine()}; one uvicorn process, RLIMIT_NOFILE {nofile}\n")
    print(common.table(["state", "sessions alive", "VmRSS MB", "KB / session", "opened / s", "≤ 30 KB each, all held",
                        "MB over baseline"], memory))
    print()
    ping_rate = trips[0][2]
    rows = [[*row, row[2] / ping_rate, "yes" if row[2] >= 500 else "no"] for row in trips]
    print(common.table(["round trip", "sockets", "per second", "p50 ms", "p95 ms", "vs ping", "≥ 500/s"], rows))


if __name__ == "__main__":
    main()
