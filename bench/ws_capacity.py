"""Widget websockets per ASGI process: idle sessions held and memory per session, with uvicorn's
defaults (the baseline) and with the options production runs (`assistant.asgi.SERVER_OPTIONS`);
then round trips per second on the production options: `ping` → `pong` (the transport alone, the
baseline), a greeting answered by the rules, and a question answered by retrieval.

    python bench/ws_capacity.py [--sessions 2000 5000] [--baseline-sessions 2000] [--clients 50]
                                [--seconds 10] [--quick] [--server LABEL=FLAGS ...] [--code DIR]

Each server is one `uvicorn assistant.asgi:application` subprocess (one process, as deployed per
worker) on a free 127.0.0.1 port, on the bench database and the usual Redis, with DEBUG=0 (as in
production: with DEBUG on, Django keeps every SQL query of a thread in memory) and
LLM_PROVIDER=none. Rate limits stay on but are set far above what the bench sends
(every CHAT_RATE_* 10^9, CHAT_MAX_SOCKETS_IP off: one client address sends everything here), so
every write still pays for its Redis counter.

Memory: VmRSS from /proc/<pid>/status after one warm-up session (imports and pools loaded; the
baseline of that server), then with N idle sessions open, each of which sent `hello` with the
bot's allowed `Origin` and got `welcome` (a conversation row, a channel-layer group). Per session =
(RSS with N - baseline) / N. Then all N are closed at the same instant (the burst that exhausted
the channel layer's Redis pool before) and the server log is searched for tracebacks: the
`errors` column counts them for that step (opening, holding and closing).

Round trips: `--clients` sockets each sending one frame and waiting for its whole answer, in a
loop, for `--seconds`:
- `ping` → `pong`;
- greeting «Здравствуйте!» → ack, typing on, the bot's message, typing off: the whole message
  path without retrieval (rate counter, stored, history read, classified by the rules, reply
  stored, sent); every reply is checked to be the rules' greeting (no links);
- question «Сколько стоит доставка по Москве?» → the same frames, but the chain runs retrieval (the
  hybrid search on a bot with 3 entries); every reply is checked to carry the link of the entry it
  came from. Asked with the same text each time, its query vector comes from the chain's query
  cache after the first; asked with a unique tag of Latin letters added, it is embedded (e5-small,
  CPU) every time. These rows are the chain's throughput, not the socket's.
A comparison row runs the greeting's service calls (the consumer's, minus the rate counter) in
the bench process, one thread, no socket: what one message costs in the database and rules alone.

`--server LABEL=FLAGS` adds a server to the memory table; NAME=value words among the flags are
set in its environment (e.g. `--server "legacy ws=--ws websockets --ws-per-message-deflate false"`).
`--quick`: 500 sessions, 5 s per round-trip run. The bench bot (`bench-ws`) and its
conversations are deleted at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shlex
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

ORIGIN = "https://bench.example"
SLUG = "bench-ws"
GREETING = "Здравствуйте!"
QUESTION = "Сколько стоит доставка по Москве?"
PASSAGES = [
    {"id": "delivery", "title": "Доставка", "url": "https://bench.example/delivery",
     "text": "Доставка по Москве стоит 300 рублей и занимает один день. По России — от трёх дней."},
    {"id": "returns", "title": "Возврат", "url": "https://bench.example/returns",
     "text": "Вернуть товар можно в течение 14 дней с чеком и в исходной упаковке."},
    {"id": "pay", "title": "Оплата", "url": "https://bench.example/pay",
     "text": "Оплатить заказ можно картой на сайте или наличными курьеру."},
]
UNLIMITED = str(10**9)
# Every limit of the widget socket (core/ratelimit.py) far above what the bench sends from
# its one address, so every write still pays for its Redis counter; the socket cap switched off.
BENCH_LIMITS = {
    name: UNLIMITED for name in (
        "CHAT_RATE_VISITOR", "CHAT_RATE_IP", "CHAT_RATE_CONVERSATIONS_IP", "CHAT_RATE_HANDOFF_VISITOR",
        "CHAT_RATE_HANDOFF_IP", "CHAT_RATE_RATINGS_VISITOR", "CHAT_RATE_RATINGS_IP", "CHAT_RATE_LEADS_VISITOR",
        "CHAT_RATE_LEADS_IP",
    )
} | {"CHAT_MAX_SOCKETS_IP": "0"}


@dataclass
class Server:
    label: str
    flags: list[str]
    sessions: list[int]
    env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None
    log: Path = field(default_factory=Path)
    log_seen: int = 0

    def new_errors(self) -> int:
        """Tracebacks written to the server log since the last call."""
        text = self.log.read_text(errors="replace")
        count = text.count("Traceback") - self.log_seen
        self.log_seen += count
        return count


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


def start_server(server: Server, port: int, code: Path = common.REPO) -> None:
    """Start `server` on `port`, running the checkout in `code` (another one compares a change
    under the same conditions)."""
    env = os.environ | {"DEBUG": "0", "LLM_PROVIDER": "none", "SPRAVKA_LOG_LEVEL": "WARNING"} | BENCH_LIMITS
    env |= server.env
    server.log = Path(tempfile.gettempdir()) / f"bench-ws-uvicorn-{port}.log"
    with server.log.open("wb") as out:
        server.process = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "assistant.asgi:application", "--host", "127.0.0.1",
             "--port", str(port), "--log-level", "warning", *server.flags],
            cwd=code, env=env, stdout=out, stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise SystemExit(f"uvicorn exited with {server.process.returncode}:\n{server.log.read_text()[-3000:]}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    server.process.kill()
    raise SystemExit(f"uvicorn did not listen within 120 s:\n{server.log.read_text()[-3000:]}")


def stop_server(server: Server) -> None:
    process = server.process
    if process is None:
        return
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

    # The client offers permessage-deflate, as browsers do: the server decides whether to use it.
    ws = await connect(url, origin=ORIGIN, max_size=2**20, ping_interval=None, open_timeout=60)  # type: ignore[arg-type]
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


async def ask(ws: Any, client_msg_id: str, text: str) -> dict[str, Any]:
    """Send one visitor message and read its frames up to `typing` off; returns the bot's message."""
    await ws.send(json.dumps({"type": "message", "client_msg_id": client_msg_id, "text": text}))
    frame = await recv(ws)
    if frame["type"] != "ack":
        raise RuntimeError(f"expected ack, got {frame}")
    reply: dict[str, Any] = {}
    while frame != {"type": "typing", "on": False}:
        frame = await recv(ws)
        if frame["type"] == "message" and frame["message"]["role"] == "bot":
            reply = frame["message"]
    return reply


def distinct_question(socket_no: int, n: int) -> str:
    """QUESTION made unique with a tag of Cyrillic consonants (no digits, which the rules could read
    as an order number; no Latin, which the scope check without a model reads as a name the site never
    mentions: knowledge/scope.py), so the chain's query-vector cache never has it: each one is
    embedded."""
    tag = "".join("бвгджзклмн"[int(d)] for d in f"{socket_no}{n:05d}{time.time_ns() % 10**6:06d}")
    return f"{QUESTION} {tag}"


def check_reply(kind: str, reply: dict[str, Any]) -> None:
    if kind == "greeting" and (not reply or reply["links"]):
        raise RuntimeError(f"the greeting was not answered by the rules: {reply}")
    if kind == "question" and not any(link["url"].endswith("/delivery") for link in reply.get("links", [])):
        raise RuntimeError(f"the question was not answered from the delivery entry: {reply}")


async def round_trips(url: str, kind: str, clients: int, seconds: float) -> tuple[float, list[float]]:
    """Round trips per second completed by `clients` sockets in `seconds`, and each one's latency (ms)."""
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
                text = {"greeting": GREETING, "question": QUESTION}.get(kind) or distinct_question(n, i)
                reply = await ask(ws, f"c{n}_{i}_{time.time_ns()}", text)
                check_reply("question" if kind.startswith("question") else kind, reply)
            latencies.append((time.perf_counter() - started) * 1000)

    started = time.perf_counter()
    await asyncio.gather(*(loop(ws, n) for n, ws in enumerate(sessions)))
    elapsed = time.perf_counter() - started
    await close_all(sessions)
    return len(latencies) / elapsed, latencies


async def warm_up(url: str) -> None:
    warm = await open_session(url, "v_warm")
    check_reply("question", await ask(warm, "warm-q", QUESTION))
    check_reply("greeting", await ask(warm, "warm-g", GREETING))
    await warm.close()
    await asyncio.sleep(1)


async def measure_memory(server: Server, url: str) -> list[list[Any]]:
    assert server.process is not None
    pid = server.process.pid
    started_kb = rss_kb(pid)
    await warm_up(url)
    baseline_kb = rss_kb(pid)
    rows: list[list[Any]] = [
        [server.label, "uvicorn started, before any socket", "", started_kb / 1024, "", "", "", server.new_errors()],
        [server.label, "after one warm-up session (baseline)", "", baseline_kb / 1024, "", "", "", server.new_errors()],
    ]
    for count in server.sessions:
        sessions, opening = await open_sessions(url, count, f"idle{count}_{server.process.pid}")
        await asyncio.sleep(2)
        held_kb = rss_kb(pid)
        alive = sum(1 for ws in sessions if ws.close_code is None)
        per = (held_kb - baseline_kb) / max(1, len(sessions))
        await close_all(sessions)  # all at once
        await asyncio.sleep(3)
        rows.append([server.label, f"{count} idle sessions open (hello → welcome), then all closed at once",
                     f"{alive} / {count}", held_kb / 1024, per, (held_kb - baseline_kb) / 1024, count / opening,
                     server.new_errors()])
    return rows


async def measure_trips(server: Server, url: str, clients: int, seconds: float) -> list[list[Any]]:
    from knowledge.evaluation import percentile

    labels = {
        "ping": "ping → pong (baseline)",
        "greeting": f"greeting «{GREETING}» → ack, typing, rules' reply, typing off (no retrieval)",
        "question": "question, the same text each time → ack, typing, retrieval reply, typing off"
                    " (query vector from the chain's cache after the first; search)",
        "question_distinct": "question, a different text each time → the same frames"
                             " (e5 query embedding each time + search)",
    }
    rows: list[list[Any]] = []
    for kind, label in labels.items():
        rate, latencies = await round_trips(url, kind, clients, seconds)
        rows.append([label, clients, rate, percentile(latencies, 50), percentile(latencies, 95), server.new_errors()])
    return rows


def services_greetings(bot: Any, seconds: float) -> tuple[float, list[float]]:
    """The greeting's database and rules work with no socket: the consumer's service calls in a
    row, in this process, one thread (what one message costs before any transport)."""
    from django.conf import settings

    from chat import services

    for name, value in BENCH_LIMITS.items():
        setattr(settings, name, int(value))
    conversation = services.conversation_open(bot=bot, visitor_id=f"v_services_{time.time_ns()}", ip="127.0.0.1")
    latencies: list[float] = []
    stop_at = time.perf_counter() + seconds
    started = time.perf_counter()
    while time.perf_counter() < stop_at:
        begun = time.perf_counter()
        client_msg_id = f"s{len(latencies)}_{time.time_ns()}"
        taken = services.message_take(conversation=conversation, text=GREETING, client_msg_id=client_msg_id,
                                      count=True)
        assert taken.produced is not None
        [reply] = taken.produced
        check_reply("greeting", {"links": reply.links, "text": reply.text})
        latencies.append((time.perf_counter() - begun) * 1000)
    return len(latencies) / (time.perf_counter() - started), latencies


def parse_servers(args: argparse.Namespace, production_flags: list[str]) -> list[Server]:
    servers = [Server("uvicorn defaults (baseline)", [], args.baseline_sessions)]
    for spec in args.server:
        label, _, words = spec.partition("=")
        flags = shlex.split(words)
        env = dict(flag.split("=", 1) for flag in flags if "=" in flag and not flag.startswith("-"))
        flags = [flag for flag in flags if flag.startswith("-") or "=" not in flag]
        servers.append(Server(label.strip(), flags, args.baseline_sessions, env))
    servers.append(Server("production: " + " ".join(production_flags), production_flags, args.sessions))
    return servers


def run_server(server: Server, public_key: str, args: argparse.Namespace, trips: bool) -> tuple[list[Any], list[Any]]:
    port = free_port()
    start_server(server, port, args.code)
    url = f"ws://127.0.0.1:{port}/ws/chat/{public_key}/"
    try:
        memory = asyncio.run(measure_memory(server, url))
        trip_rows = asyncio.run(measure_trips(server, url, args.clients, args.seconds)) if trips else []
    finally:
        stop_server(server)
    return memory, trip_rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", nargs="+", type=int, default=[2000, 5000],
                        help="idle sessions held by the production server, one step each")
    parser.add_argument("--baseline-sessions", nargs="+", type=int, default=None,
                        help="idle sessions held by the other servers (default: the smallest of --sessions)")
    parser.add_argument("--clients", type=int, default=50, help="sockets sending at once in the round-trip runs")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--server", action="append", default=[], metavar="LABEL=FLAGS",
                        help="another uvicorn configuration for the memory table")
    parser.add_argument("--quick", action="store_true", help="500 sessions, 5 s round-trip runs")
    parser.add_argument("--code", type=Path, default=common.REPO,
                        help="run the servers from this checkout (compare a change under the same conditions)")
    args = parser.parse_args()
    if args.quick:
        args.sessions, args.seconds = [500], 5.0
    args.baseline_sessions = args.baseline_sessions or [min(args.sessions)]
    nofile = raise_nofile(2 * max(args.sessions + args.baseline_sessions) + 500)  # both ends of each socket
    load_before = os.getloadavg()
    common.setup_django()
    from assistant.asgi import uvicorn_flags

    bot = common.bench_bot(SLUG, fresh=True)
    bot.allowed_origins = [ORIGIN]
    bot.save()
    common.load_passages(bot, PASSAGES, source_title="bench-ws")
    common.embed_bot(bot, "e5-small")
    servers = parse_servers(args, uvicorn_flags())
    memory: list[list[Any]] = []
    trips: list[list[Any]] = []
    try:
        for server in servers:
            rows, trip_rows = run_server(server, bot.public_key, args, trips=server is servers[-1])
            memory += rows
            trips += trip_rows
        from knowledge.evaluation import percentile

        rate, latencies = services_greetings(bot, args.seconds)
        trips.insert(2, ["the same greeting through the services, one thread, no socket (comparison)", 1, rate,
                         percentile(latencies, 50), percentile(latencies, 95), 0])
    finally:
        common.drop_bot(SLUG)
    load_after = os.getloadavg()
    print(f"# Websocket capacity — {common.machine()}; one uvicorn process, RLIMIT_NOFILE {nofile}")
    print(f"# load average (1, 5, 15 min) before {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, "
          f"after {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}\n")
    print(common.table(["server", "state", "sessions alive", "VmRSS MB", "KB / session", "MB over baseline",
                        "opened / s", "errors"], memory))
    print()
    ping_rate = trips[0][2]
    rows = [[*row[:5], row[2] / ping_rate, "yes" if row[2] >= 500 else "no", row[5]] for row in trips]
    print(common.table(["round trip (production server)", "sockets", "per second", "p50 ms", "p95 ms", "vs ping",
                        "≥ 500/s", "errors"], rows))


if __name__ == "__main__":
    main()
