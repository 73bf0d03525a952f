"""The operator's copilot: how long the passages for a visitor's question take (`suggest`,
inbox/copilot.py), against the bot's own search for the same question in the same run.

    python bench/copilot_speed.py [--queries 200]

Data: the xquad-ru passages (240 real Russian passages) as one bot's knowledge, embedded; its
questions as visitors' messages, one conversation each (written before the clock starts).
Measured per question, in turn:
- baseline: `search_entries(bot, question, k=5)`, what the chain's retrieval step calls;
- copilot: what the operator socket does for `suggest` once the frame is parsed: the access check
  (`access_conversation`), the visitor's last messages, the chain's reading of the text and its
  search (`pipeline.knowledge_for`), the excerpt of every passage (`inbox/copilot.py`).
Both run cold (the question's vector forgotten in the process and in Redis, so it is embedded)
and warm (the vector cached, as it is once the bot has answered that very question: the
copilot asks after the bot, so warm is the usual case). The order alternates per question so
neither side always goes first. Target: copilot p95 ≤ 150 ms.

The bot, its conversations and the operator are deleted at the end.
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

DATABASE = "spravka_bench_copilot"
SLUG = "bench-copilot"
TARGET_P95_MS = 150.0


def clear_query_cache(questions: list[str]) -> None:
    """Forget the questions' vectors in this process and in the shared (Redis) cache."""
    from django.core.cache import caches

    from knowledge.embeddings import QueryVectorCache, get_embedder, normalize_query, query_cache

    embedder = get_embedder()
    query_cache.clear_local()
    caches[query_cache.shared_alias or "default"].delete_many(
        [QueryVectorCache.shared_key(embedder, normalize_query(q)) for q in questions])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    common.setup_django(DATABASE)

    from answers import pipeline
    from chat import writes
    from chat.models import Conversation
    from inbox import copilot
    from inbox.access import access_conversation, inbox_bot_ids
    from knowledge.evaluation import percentile
    from knowledge.search import search_entries

    bot = common.bench_bot(SLUG, fresh=True)
    common.drop_users("bench-copilot-")
    with common.timed("load and embed 240 passages"):
        common.load_passages(bot, common.read_jsonl(common.XQUAD / "passages.jsonl"), source_title="xquad")
        common.embed_bot(bot, "e5-small")
    operator, _session = common.bench_member(bot, "bench-copilot-anna@example.com", "operator", first_name="Анна")
    questions = [row["question"] for row in common.read_jsonl(common.XQUAD / "cases.jsonl")][: args.queries]
    conversations: dict[str, int] = {}
    for i, question in enumerate(questions):
        conversation = Conversation.objects.create(bot=bot, visitor_id=f"v_bench_{i}")
        writes.message_store_visitor(conversation, text=question, client_msg_id=uuid.uuid4().hex, flags={},
                                     intent="question")
        conversations[question] = conversation.pk
    bot_ids = inbox_bot_ids(operator)

    def baseline(question: str) -> None:
        search_entries(bot, question, k=pipeline.SEARCH_K)

    def suggest(question: str) -> None:
        conversation = access_conversation(operator, conversations[question], bot_ids=bot_ids)
        copilot.suggestions_for(conversation=conversation)

    suggest(questions[0])  # warm: the embedding model and the dictionaries loaded
    for question in questions:  # warm: index and table pages in memory
        baseline(question)
    found = sum(bool(copilot.suggestions_for(conversation=Conversation.objects.get(pk=pk))["passages"])
                for pk in conversations.values())

    times: dict[tuple[str, str], list[float]] = {}
    for warmth in ("cold", "warm"):
        for i, question in enumerate(questions):
            order: list[tuple[str, Callable[[str], None]]] = [
                ("search_entries (the bot's own search)", baseline), ("copilot suggest", suggest)]
            for label, call in order if i % 2 == 0 else order[::-1]:
                if warmth == "cold":
                    clear_query_cache([question])
                else:
                    baseline(question)  # the bot answered it: its vector is cached
                started = time.perf_counter()
                call(question)
                times.setdefault((label, warmth), []).append((time.perf_counter() - started) * 1000)

    rows = []
    for warmth in ("cold", "warm"):
        base = times[("search_entries (the bot's own search)", warmth)]
        for label in ("search_entries (the bot's own search)", "copilot suggest"):
            values = times[(label, warmth)]
            rows.append([label, warmth, len(values), percentile(values, 50), percentile(values, 95),
                         percentile(values, 95) / percentile(base, 95)])
    print(f"\nCopilot passages, {len(questions)} xquad questions on 240 passages ({common.machine()});"
          f" {found} of them got at least one passage.\n")
    print(common.table(["what", "query vector", "n", "p50 ms", "p95 ms", "p95 / search p95"], rows))
    worst = max(percentile(times[("copilot suggest", w)], 95) for w in ("cold", "warm"))
    print(f"\nTarget: copilot p95 ≤ {TARGET_P95_MS:.0f} ms — {'met' if worst <= TARGET_P95_MS else 'MISSED'}"
          f" (worst p95 {worst:.1f} ms).")

    Conversation.objects.filter(bot=bot).delete()
    common.drop_bot(SLUG)
    common.drop_users("bench-copilot-")


if __name__ == "__main__":
    main()
