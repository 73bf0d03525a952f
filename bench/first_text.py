"""Time to first visible text under a burst, checked streaming against unchecked streaming in the
same run (issue 9: the fact-checked draft must not delay the first visible text by more than 10 %).

    python bench/first_text.py [--size 1000] [--askers 20] [--rounds 6] [--first-token 0.8] [--tps 50]

The chain and the fake model are chain_speed.py's (the fake Messages API in a process of its own,
the real `anthropic` SDK, a bench bot of `--size` synthetic entries, the same scripted answer).
Each round asks `--askers` questions in the same instant twice: once as the product does it
(checked: every visible prefix passed `checks.DraftGate`) and once with the draft unchecked, as
streaming was before the check (no gate, no cited-entry facts read for it: the baseline). The two
alternate, and which goes first alternates by round (ABBA), so drifting load on the shared machine
hits both alike; the query-vector cache is emptied before each burst, so both embed every question.

Besides wall-clock time to the first `on_delta`, it reports the CPU time (thread time, so waiting
for the GIL or a core is not counted) the check spends per request: reading the cited entries'
facts when the request is built, and the gate's calls up to the first visible text. The gap
between checked and unchecked that this CPU time does not explain is scheduling: 20 streams'
threads and the search queueing on 2 cores and one GIL.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import statistics
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

_local = threading.local()


@dataclasses.dataclass
class Asked:
    first_ms: float = float("nan")
    build_cpu_ms: float = 0.0  # build_request's thread time (the cited entries' facts read for the gate)
    gate_cpu_ms: float = 0.0  # the gate's thread time up to the first visible text
    gate_cpu_total_ms: float = 0.0  # ... over the whole answer


@contextmanager
def streaming(checked: bool) -> Iterator[None]:
    """The product's request (checked) or the same request without the draft's check (unchecked)."""
    from answers import prompt

    original_build, original_known = prompt.build_request, prompt.cited_known

    def build(**kwargs: Any) -> Any:
        record: Asked = _local.record
        started = time.thread_time()
        request = original_build(**kwargs)
        record.build_cpu_ms += (time.thread_time() - started) * 1000
        if not checked:
            return dataclasses.replace(request, stream_gate=None)
        gate = request.stream_gate
        assert gate is not None

        def timed_gate(settled: Any, text: str, complete: bool) -> int:
            started = time.thread_time()
            try:
                return gate(settled, text, complete)
            finally:
                spent = (time.thread_time() - started) * 1000
                record.gate_cpu_total_ms += spent
                if record.first_ms != record.first_ms:  # nothing shown yet
                    record.gate_cpu_ms += spent

        return dataclasses.replace(request, stream_gate=timed_gate)

    prompt.build_request = build
    if not checked:
        prompt.cited_known = lambda bot, source: None  # type: ignore[assignment,return-value]
    try:
        yield
    finally:
        prompt.build_request, prompt.cited_known = original_build, original_known


def ask(bot: Any, question: str) -> tuple[Asked, str]:
    from answers import pipeline

    record = _local.record = Asked()
    started = time.perf_counter()

    def on_delta(_text: str) -> None:
        if record.first_ms != record.first_ms:
            record.first_ms = (time.perf_counter() - started) * 1000

    reply = pipeline.answer(bot=bot, text=question, history=[], on_delta=on_delta)
    return record, str(reply.llm_meta.get("route"))


def burst(bot: Any, questions: list[str], checked: bool, pool: Any) -> tuple[list[Asked], set[str]]:
    from bench.chain_speed import clear_query_cache

    clear_query_cache(questions)
    with streaming(checked):
        results = list(pool.map(lambda q: ask(bot, q), questions))
    return [r for r, _ in results], {route for _, route in results}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--askers", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--first-token", type=float, default=0.8)
    parser.add_argument("--tps", type=float, default=50.0)
    parser.add_argument("--database", default="spravka_bench_chain")
    args = parser.parse_args()
    common.setup_django(args.database)
    import json
    from concurrent.futures import ThreadPoolExecutor

    from django.test import override_settings

    from bench import chain_speed, search_speed

    cases = common.read_jsonl(common.XQUAD / "cases.jsonl")[:: max(1, 1190 // args.queries)][: args.queries]
    bot = chain_speed.build_bot(args.size, search_speed.source_passages())
    tool_input = {"intent": "question", "source": 0, "answer": chain_speed.ANSWER_TEXT, "product_query": "",
                  "fixed": ""}
    raw = json.dumps(tool_input, ensure_ascii=False)
    first_answer_ms = 1000 * chain_speed.model_time(
        args.first_token, args.tps, raw.index(chain_speed.ANSWER_TEXT[:8]) // 4 + 1)
    plan = {"tool_input": tool_input, "first_token": args.first_token, "tps": args.tps, "chunk_chars": 4}
    rows: list[list[Any]] = []
    summary: dict[bool, list[float]] = {True: [], False: []}
    cpu: dict[str, list[float]] = {"build checked": [], "build unchecked": [], "gate first": [], "gate total": []}
    ratios: list[float] = []
    routes: set[str] = set()
    try:
        with chain_speed.fake_model_process(plan) as url:
            overrides = {"LLM_PROVIDER": "anthropic", "ANTHROPIC_BASE_URL": url,
                         "ANTHROPIC_API_KEY": "sk-ant-bench-fake", "LLM_MAX_RETRIES": 0}
            with override_settings(**overrides):
                sourced = chain_speed._with_sources(bot, [c["question"] for c in cases])
                pool = ThreadPoolExecutor(max_workers=args.askers)
                burst(bot, sourced[:args.askers], True, pool)  # warm-up: connections, caches, imports
                for number in range(args.rounds):
                    asked = sourced[(number * args.askers) % len(sourced):][:args.askers]
                    p50: dict[bool, float] = {}
                    for checked in ((True, False) if number % 2 else (False, True)):
                        load = os.getloadavg()[0]
                        records, seen = burst(bot, asked, checked, pool)
                        routes |= seen
                        firsts = [r.first_ms for r in records if r.first_ms == r.first_ms]
                        p50[checked] = statistics.median(firsts)
                        summary[checked].append(p50[checked])
                        key = "checked" if checked else "unchecked"
                        cpu[f"build {key}"] += [r.build_cpu_ms for r in records]
                        if checked:
                            cpu["gate first"] += [r.gate_cpu_ms for r in records]
                            cpu["gate total"] += [r.gate_cpu_total_ms for r in records]
                        rows.append([number + 1, key, f"{load:.1f}", len(firsts), p50[checked],
                                     max(firsts), ",".join(sorted(seen))])
                    ratios.append(p50[True] / p50[False])
    finally:
        common.drop_bot(bot.slug)
    print(f"# First visible text, burst of {args.askers} — {common.machine()}; {args.size} entries, fake model "
          f"{args.first_token} s to first token, {args.tps:g} deltas/s (model's first answer char at "
          f"{first_answer_ms:.0f} ms)\n")
    print(common.table(["round", "draft", "load avg 1 min", "shown", "first text p50 ms", "max ms", "route"], rows))
    unchecked, checked_ms = statistics.median(summary[False]), statistics.median(summary[True])
    print()
    print(common.table(
        ["draft", "rounds", "median of round p50s ms", "spread of round p50s ms"],
        [["unchecked (baseline)", len(summary[False]), unchecked,
          f"{min(summary[False]):.0f}–{max(summary[False]):.0f}"],
         ["checked", len(summary[True]), checked_ms, f"{min(summary[True]):.0f}–{max(summary[True]):.0f}"]]))
    print(f"\nchecked / unchecked: {100 * (checked_ms / unchecked - 1):+.1f} % (medians); per round "
          f"{', '.join(f'{100 * (r - 1):+.1f} %' for r in ratios)}; median of the paired ratios "
          f"{100 * (statistics.median(ratios) - 1):+.1f} %; routes {','.join(sorted(routes))}\n")
    print(common.table(
        ["CPU per request (thread time)", "p50 ms", "p95 ms"],
        [[name, statistics.median(values), sorted(values)[int(0.95 * (len(values) - 1))]]
         for name, values in cpu.items() if values]))


if __name__ == "__main__":
    main()
