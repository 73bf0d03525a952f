"""Correction memory and the learning curve, measured on the VK Cloud FAQ (bench/data/README.md).

    python bench/learning_curve.py [--models none fake] [--items 15] [--sessions 3]

Data: 40 FAQ pairs of `../shared/eval-data/vkcloud-faq-ru/` (every third usable one). Their FAQ
wording is the split visitors ask and the owner sees in the review queue; one paraphrase of each
(bench/data/vkcloud_paraphrases.jsonl, ours) is the disjoint split that measures. Knowledge: the
crawled VK Cloud docs (the `bench-vkcloud-e5-small` bot of bench/retrieval_quality.py, copied).

Part 1, correction memory, on the whole site: each of the 40 questions is corrected with its FAQ
answer through `review.services.correction_apply`, culprits chosen as `manage.py correct` does
(the best entry if it reaches the match threshold). Measured: how often a paraphrase retrieves the
correction at top-1; hit@3 of the other 101 FAQ questions before and after (their answer pages);
each culprit's score for its question before and after; everything again after undoing all.
Baseline in the same run: how often the paraphrase found its FAQ page at top-1 before.

Part 2, the learning curve, on the site without its five FAQ pages (what the owner teaches):
visitors ask the 40 questions through the real chat services; a visitor whose answer is wrong
writes «нет, не то». Each session the owner takes the ≤ 15 oldest queue items and decides them
as a person who knows the answers would: «Всё верно» when the answer was right, «Исправить»
with the FAQ answer when it was wrong, «Добавить в знания» when the bot had no answer. Accuracy
on the paraphrase split after sessions 0..3: the answer cites an entry that answers it (the
owner's entry for that pair, or the pair's page or a page it links to). Retrieval-only, and with
the fake model (tests/fakes/messages_api.py) citing the first source it is given.
"""

from __future__ import annotations

import argparse
import os
import sys
import types
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

SOURCE_BOT = "bench-vkcloud-e5-small"
PARAPHRASES = common.REPO / "bench" / "data" / "vkcloud_paraphrases.jsonl"
FAQ_PAGES = ("/intro/billing/faq/", "/start/faq/", "/intro/it-security/faq/", "/start/partners/faq/",
             "/tools-for-using-services/account/faq/")
COMPLAINT = "нет, не то"


def load_data() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(the 40 pairs with their paraphrase, every other usable FAQ pair)."""
    faq = {row["id"]: row for row in common.read_jsonl(common.VKCLOUD_FAQ)}
    chosen = []
    for row in common.read_jsonl(PARAPHRASES):
        chosen.append({**faq[row["id"]], "paraphrase": row["paraphrase"]})
    ids = {row["id"] for row in chosen}
    others = [row for row in faq.values() if row["id"] not in ids and row["id"] != "start/partners/faq#15"]
    return chosen, others


def copy_bot(slug: str, *, without_faq: bool) -> Any:
    """A private copy of the crawled site's entries (vectors included) for one experiment."""
    from django.db import connection

    from knowledge.lexicon import lexicon_refresh

    source = common.bench_bot(SOURCE_BOT)
    if not source.entries.filter(active=True).exists():
        from bench.retrieval_quality import prepare_bot

        source = prepare_bot("vkcloud", "e5-small", fresh=False)
    drop(slug)
    bot = common.bench_bot(slug)
    bot.match_threshold, bot.confidence_threshold = source.match_threshold, source.confidence_threshold
    bot.save(update_fields=["match_threshold", "confidence_threshold"])
    faq_filter = " AND NOT (" + " OR ".join(["url LIKE %s"] * len(FAQ_PAGES)) + ")" if without_faq else ""
    with connection.cursor() as cursor:
        # Inlined: only our own fixed list of LIKE placeholders; every value is a parameter.
        sql = (  # noqa: S608
            "INSERT INTO knowledge_entry (bot_id, kind, key, title, heading_path, text, url, weight, review_needed, "
            "active, content_hash, embedding, embedding_model, created_at, updated_at) "
            "SELECT %s, kind, key, title, heading_path, text, url, weight, false, active, content_hash, embedding, "
            "embedding_model, now(), now() FROM knowledge_entry WHERE bot_id = %s AND active"
        ) + faq_filter
        cursor.execute(
            sql,
            [bot.pk, source.pk, *([f"%{path}%" for path in FAQ_PAGES] if without_faq else [])],
        )
    lexicon_refresh(bot_id=bot.pk)
    return bot


def drop(slug: str) -> None:
    """Delete a bench bot; rows pointing at its entries go first (common.drop_bot deletes the entries
    in one statement, which the database refuses while a correction still points at one)."""
    from bots.models import Bot
    from feedback.models import Gap
    from review.models import Correction, ReviewItem

    for bot in Bot.objects.filter(slug=slug):
        Correction.objects.filter(bot=bot).delete()
        ReviewItem.objects.filter(bot=bot).update(entry=None)
        Gap.objects.filter(bot=bot).update(entry=None)
    common.drop_bot(slug)


def relevant(row: dict[str, Any]) -> set[str]:
    from knowledge.evaluation import url_path

    return {url_path(row["page_url"]), *(url_path(u) for u in row.get("linked_pages", []))}


def hit_at(bot: Any, rows: list[dict[str, Any]], k: int) -> float:
    from knowledge.evaluation import url_path
    from knowledge.search import search_entries

    hits = 0
    for row in rows:
        urls = [url_path(r.url) for r in search_entries(bot, row["question"], k=k)]
        hits += bool(relevant(row) & set(urls))
    return hits / len(rows)


def score_of(bot: Any, question: str, entry_id: int) -> float | None:
    from knowledge.search import search_entries

    return next((r.score for r in search_entries(bot, question, k=30) if r.entry_id == entry_id), None)


# --- part 1 ---------------------------------------------------------------------------------------


def correction_memory(chosen: list[dict[str, Any]], others: list[dict[str, Any]]) -> list[list[Any]]:
    from knowledge.evaluation import url_path
    from knowledge.search import search_entries
    from review.models import Correction
    from review.services import correction_apply, correction_undo

    bot = copy_bot("bench-correction-memory", without_faq=False)
    page_top1 = sum(
        url_path(search_entries(bot, row["paraphrase"], k=1)[0].url) == url_path(row["page_url"]) for row in chosen
    ) / len(chosen)
    others_before = hit_at(bot, others, 3)
    # Culprits and their scores first, all before any correction: several questions share a culprit.
    culprits_of: dict[str, list[int]] = {}
    culprit_scores = []
    for row in chosen:
        top = search_entries(bot, row["question"], k=1)
        culprits_of[row["id"]] = [r.entry_id for r in top if r.score >= bot.match_threshold]
        culprit_scores += [(row["question"], c, score_of(bot, row["question"], c)) for c in culprits_of[row["id"]]]
    corrections = {
        row["id"]: correction_apply(bot=bot, question=row["question"], answer=row["answer"],
                                    culprit_ids=culprits_of[row["id"]], origin=Correction.Origin.COMMAND)
        for row in chosen
    }
    paraphrase_top1 = sum(
        search_entries(bot, row["paraphrase"], k=1)[0].entry_id == corrections[row["id"]].entry_id for row in chosen
    ) / len(chosen)
    original_top1 = sum(
        search_entries(bot, row["question"], k=1)[0].entry_id == corrections[row["id"]].entry_id for row in chosen
    ) / len(chosen)
    others_after = hit_at(bot, others, 3)
    after_scores = [(s or 0.0, score_of(bot, q, c)) for q, c, s in culprit_scores]
    dropped = sum(1 for before, after in after_scores if after is None or after < before)
    drops = [before - (after or 0.0) for before, after in after_scores]
    for correction in corrections.values():
        correction_undo(correction=correction)
    restored = sum(1 for q, c, s in culprit_scores if score_of(bot, q, c) == s)
    others_undone = hit_at(bot, others, 3)
    return [
        ["paraphrase finds its FAQ page at top-1, before (baseline)", f"{page_top1:.3f}"],
        ["paraphrase retrieves its correction at top-1", f"{paraphrase_top1:.3f}"],
        ["original question retrieves its correction at top-1", f"{original_top1:.3f}"],
        [f"other FAQ questions (n={len(others)}) hit@3: before → after → after undo",
         f"{others_before:.3f} → {others_after:.3f} → {others_undone:.3f}"],
        [f"culprits whose score dropped (n={len(culprit_scores)})", f"{dropped}/{len(culprit_scores)}"],
        ["culprit score drop: mean / min", f"{sum(drops) / max(1, len(drops)):.3f} / {min(drops, default=0):.3f}"],
        ["culprit scores back to the same value after undo", f"{restored}/{len(culprit_scores)}"],
    ]


# --- part 0: what corrections do to everything else ------------------------------------------------

NEAR_MISSES = common.REPO / "bench" / "data" / "vkcloud_near_misses.jsonl"
PARAPHRASES2 = common.REPO / "bench" / "data" / "vkcloud_paraphrases2.jsonl"
OUT_OF_SCOPE = common.REPO / "bench" / "data" / "vkcloud_out_of_scope.txt"


@contextmanager
def every_correction_wins() -> Iterator[None]:
    """The rule before paraphrase matching, for the same-run baseline: every correction keeps its
    weight and bonus whatever is asked, and a culprit's flag lowers it for every question."""
    from knowledge import search

    saved = search.corrections_judged
    search.corrections_judged = lambda query, signals, words: signals
    try:
        yield
    finally:
        search.corrections_judged = saved


def damage_rows(bot: Any, label: str, corrected: list[dict[str, Any]], others: list[dict[str, Any]],
                near: list[dict[str, Any]], out_of_scope: list[str], fixes: dict[str, int]) -> list[Any]:
    """One row: paraphrases answered by their correction (two splits), other questions' hit@1,
    out-of-scope refusal, near misses and out-of-scope questions answered by a correction."""
    from knowledge.search import is_match, search_entries

    fix_ids = set(fixes.values())

    def top(question: str) -> Any:
        results = search_entries(bot, question, k=1)
        return results[0] if results and is_match(bot, results) else None

    def by_fix(question: str, entry_id: int | None = None) -> bool:
        hit = top(question)
        return hit is not None and (hit.entry_id == entry_id if entry_id else hit.entry_id in fix_ids)

    para = [by_fix(row["paraphrase"], fixes.get(row["id"])) for row in corrected]
    para2 = [by_fix(row["paraphrase2"], fixes.get(row["id"])) for row in corrected if row.get("paraphrase2")]
    refused = [top(q) is None for q in out_of_scope]
    oos_fix = [by_fix(q) for q in out_of_scope]
    hijacked = [by_fix(row["near_miss"]) for row in near]
    if fixes:  # what a reader checks first: the paraphrases missed and the near misses taken
        for row, got in zip(corrected, para, strict=True):
            if not got:
                print(f"  {label}: missed {row['paraphrase']!r} (corrected {row['question']!r})", file=sys.stderr)
        for row, got in zip([r for r in corrected if r.get("paraphrase2")], para2, strict=True):
            if not got:
                print(f"  {label}: missed 2nd {row['paraphrase2']!r} (corrected {row['question']!r})", file=sys.stderr)
        for row, got in zip(near, hijacked, strict=True):
            if got:
                print(f"  {label}: near miss taken {row['near_miss']!r}", file=sys.stderr)
    return [label, _share(para), _share(para2), f"{hit_at(bot, others, 1):.3f}", _share(refused),
            f"{sum(hijacked)}/{len(hijacked)}", f"{sum(oos_fix)}/{len(oos_fix)}"]


def _share(values: list[bool]) -> str:
    return f"{sum(values) / len(values):.3f}" if values else "—"


def correction_damage(chosen: list[dict[str, Any]], others: list[dict[str, Any]], n: int) -> list[list[Any]]:
    """`n` FAQ questions corrected on the whole site (culprits as `manage.py correct` picks them):
    before, after with today's rule, after with every correction winning (the old rule), after undo."""
    from knowledge.search import search_entries
    from review.models import Correction
    from review.services import correction_apply, correction_undo

    second = {row["id"]: row["paraphrase"] for row in common.read_jsonl(PARAPHRASES2)}
    corrected = [{**row, "paraphrase2": second.get(row["id"], "")} for row in chosen[:n]]
    ids = {row["id"] for row in corrected}
    rest = others + chosen[n:]
    near = [row for row in common.read_jsonl(NEAR_MISSES) if row["id"] in ids]
    out_of_scope = [line.strip() for line in OUT_OF_SCOPE.read_text(encoding="utf-8").splitlines() if line.strip()]
    bot = copy_bot("bench-correction-damage", without_faq=False)
    sets = (corrected, rest, near, out_of_scope)
    rows = [damage_rows(bot, "before any correction", *sets, {})]
    culprits = {}
    for row in corrected:
        top = search_entries(bot, row["question"], k=1)
        culprits[row["id"]] = [r.entry_id for r in top if r.score >= bot.match_threshold]
    fixes = {
        row["id"]: correction_apply(bot=bot, question=row["question"], answer=row["answer"],
                                    culprit_ids=culprits[row["id"]], origin=Correction.Origin.COMMAND)
        for row in corrected
    }
    entry_of = {key: c.entry_id for key, c in fixes.items()}
    rows.append(damage_rows(bot, f"after {n} corrections: paraphrase rule", *sets, entry_of))
    with rule_before():
        rows.append(damage_rows(bot, f"after {n} corrections: the rule at {WHOLE_WORDINGS_COMMIT} (baseline)",
                                *sets, entry_of))
    with every_correction_wins():
        rows.append(damage_rows(bot, f"after {n} corrections: every correction wins (old rule)", *sets, entry_of))
    rows += owner_wordings(bot, sets, fixes, entry_of)
    for correction in fixes.values():
        correction_undo(correction=correction)
    rows.append(damage_rows(bot, "after undoing them all", *sets, {}))
    drop("bench-correction-damage")
    return rows


# The verdict before each wording was judged on its own (knowledge/paraphrase.py `judge`).
WHOLE_WORDINGS_COMMIT = "5909173"


Sets = tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]], list[str]]


def owner_wordings(bot: Any, sets: Sets, fixes: dict[str, Any], entry_of: dict[str, int]) -> list[list[Any]]:
    """What the owner's remedy for a missed paraphrase does: each correction gets the first split's
    paraphrase as one more wording (what the reach preview and the review queue invite), and the
    second split, which no wording holds, measures it; near misses, out-of-scope questions and the
    other questions say what the added words cost. Rows with and without the wordings' own
    retriever (knowledge/search.py WORDING_CANDIDATES), and with the verdict that read all of a
    correction's wordings at once, in the same run."""
    from knowledge.services import entry_wordings_add

    corrected = sets[0]
    for row in corrected:
        entry_wordings_add(entry=fixes[row["id"]].entry, wordings=[(row["paraphrase"], "owner")])
    label = "+ the owner adds each first paraphrase as a wording"
    rows = [damage_rows(bot, label, *sets, entry_of)]
    with no_wording_candidates():
        rows.append(damage_rows(bot, f"{label}, candidates by entries only (baseline)", *sets, entry_of))
    with rule_before():
        rows.append(damage_rows(bot, f"{label}, one verdict on all wordings at once (baseline)", *sets, entry_of))
    return rows


@contextmanager
def no_wording_candidates() -> Iterator[None]:
    """The search statement without its retriever of corrections by their wordings (LIMIT 0)."""
    from knowledge import search

    saved = search.WORDING_CANDIDATES
    search.WORDING_CANDIDATES = 0
    try:
        yield
    finally:
        search.WORDING_CANDIDATES = saved


@contextmanager
def rule_before() -> Iterator[None]:
    """knowledge/paraphrase.py's `judge` as it was at WHOLE_WORDINGS_COMMIT (its very code), its
    verdicts given as today's (no wording counted as added, so no added wording's nearness either)."""
    from knowledge import paraphrase, search

    old = common.module_from_git(WHOLE_WORDINGS_COMMIT, "knowledge/paraphrase.py", "baseline_paraphrase")

    def judge(*args: Any) -> Any:
        verdict = old.judge(*args)
        return paraphrase.Judgement(paraphrase.Verdict(verdict.verdict.value), verdict.cosine, verdict.unshared)

    search.paraphrase = types.SimpleNamespace(**{**vars(paraphrase), "judge": judge})  # type: ignore[assignment]
    try:
        yield
    finally:
        search.paraphrase = paraphrase


DEMO_CONTRAST = common.REPO / "tests" / "data" / "demo_contrast.jsonl"


def demo_contrast() -> list[list[Any]]:
    """The demo shop: each corrected question of tests/data/demo_contrast.jsonl alone, its
    paraphrases and near misses asked; under today's rule and under the old one."""
    from bench.retrieval_quality import prepare_bot
    from knowledge.search import is_match, search_entries
    from review.services import correction_apply, correction_undo

    bot = prepare_bot("demo", "e5-small", fresh=False)
    rows = common.read_jsonl(DEMO_CONTRAST)
    rules = {"paraphrase rule": _nothing, f"the rule at {WHOLE_WORDINGS_COMMIT}": rule_before,
             "old rule": every_correction_wins}
    counts = {rule: {"paraphrase": [0, 0], "near_miss": [0, 0]} for rule in rules}
    for corrected in dict.fromkeys(row["corrected"] for row in rows):
        culprits = [r.entry_id for r in search_entries(bot, corrected, k=1) if r.score >= bot.match_threshold]
        fix = correction_apply(bot=bot, question=corrected, answer=f"Поправка: {corrected}", culprit_ids=culprits)
        for rule in counts:
            with rules[rule]():
                for row in (r for r in rows if r["corrected"] == corrected):
                    results = search_entries(bot, row["question"], k=1)
                    got = bool(results) and is_match(bot, results) and results[0].entry_id == fix.entry_id
                    counts[rule][row["kind"]][0] += got
                    counts[rule][row["kind"]][1] += 1
        correction_undo(correction=fix)
    return [[rule, f"{c['paraphrase'][0]}/{c['paraphrase'][1]}", f"{c['near_miss'][0]}/{c['near_miss'][1]}"]
            for rule, c in counts.items()]


# --- part 2 ---------------------------------------------------------------------------------------


@contextmanager
def fake_model() -> Iterator[Any]:
    """The fake Messages API, answering every request by citing source 0 (what a model trusting
    retrieval does); the settings point the real anthropic provider at it."""
    from django.conf import settings

    from tests.fakes import messages_api

    fake = messages_api.FakeLLMServer().start()
    reply = messages_api.tool_use({"intent": "question", "answer": "Ответ по источнику [0].", "source": 0,
                                   "product_query": "", "fixed": ""})
    fake.script(*[reply] * 20_000)
    saved = (settings.LLM_PROVIDER, settings.ANTHROPIC_API_KEY, settings.ANTHROPIC_BASE_URL)
    settings.LLM_PROVIDER, settings.ANTHROPIC_API_KEY, settings.ANTHROPIC_BASE_URL = (
        "anthropic", "sk-ant-bench-fake", fake.url)
    try:
        yield fake
    finally:
        settings.LLM_PROVIDER, settings.ANTHROPIC_API_KEY, settings.ANTHROPIC_BASE_URL = saved
        fake.stop()


def answer_of(bot: Any, text: str) -> Any:
    from answers.pipeline import answer

    return answer(bot=bot, text=text, history=[])


class Oracle:
    """Whether an entry answers a FAQ pair: the owner's entry for it, or its page or a linked page."""

    def __init__(self, bot: Any) -> None:
        self.bot = bot
        self.owner_entries: dict[int, str] = {}
        self.urls: dict[int, str] = {}
        self.wrong: list[tuple[dict[str, Any], bool]] = []

    def right(self, row: dict[str, Any], entry_id: int | None) -> bool:
        from knowledge.evaluation import url_path
        from knowledge.models import Entry

        if entry_id is None:
            return False
        if entry_id in self.owner_entries:
            return self.owner_entries[entry_id] == row["id"]
        if entry_id not in self.urls:
            self.urls[entry_id] = Entry.objects.filter(pk=entry_id).values_list("url", flat=True).first() or ""
        return url_path(self.urls[entry_id]) in relevant(row)


def measure(bot: Any, oracle: Oracle, chosen: list[dict[str, Any]]) -> tuple[float, str]:
    """(accuracy on the paraphrase split, the same on the topics the owner has corrected: right/n)."""
    from answers.pipeline import answer

    taught = set(oracle.owner_entries.values())
    right = {row["id"]: oracle.right(row, answer(bot=bot, text=row["paraphrase"], history=[]).source_entry_id)
             for row in chosen}
    on_taught = [right[i] for i in taught]
    oracle.wrong = [(row, row["id"] in taught) for row in chosen if not right[row["id"]]]
    return sum(right.values()) / len(chosen), f"{sum(on_taught)}/{len(on_taught)}"


def visitors_ask(bot: Any, oracle: Oracle, chosen: list[dict[str, Any]]) -> None:
    from chat import services

    for row in chosen:
        conversation = services.conversation_open(bot=bot, visitor_id=f"lc-{uuid.uuid4().hex[:12]}")
        _message, reply, _created = services.message_receive(
            conversation=conversation, text=row["question"], client_msg_id=uuid.uuid4().hex
        )
        if reply is not None and not reply.flag("unanswered") and not oracle.right(row, reply.source_entry_id):
            services.message_receive(conversation=conversation, text=COMPLAINT, client_msg_id=uuid.uuid4().hex)
        services.conversation_close(conversation=conversation, outcome="bench")


def owner_session(bot: Any, oracle: Oracle, chosen: list[dict[str, Any]], items: int) -> dict[str, int]:
    from review import selectors, services
    from review.models import ReviewItem

    by_question = {row["question"]: row for row in chosen}
    counts = {"correct": 0, "fixed": 0, "added": 0}
    for item in list(selectors.queue([bot.pk], selectors.QueueFilter())[:items]):
        row = by_question.get(item.question)
        if row is None or oracle.right(row, item.cited_entry_id):
            decision, text = ReviewItem.Decision.CORRECT, ""
        else:
            decision = ReviewItem.Decision.FIXED if item.cited_entry_id else ReviewItem.Decision.ADDED
            text = row["answer"]
        decided = services.review_item_decide(item_id=item.pk, bot_ids=[bot.pk], decision=decision, text=text)
        if decided.entry_id and row is not None:
            oracle.owner_entries[decided.entry_id] = row["id"]
        counts[decision] += 1
    return counts


def learning_curve(chosen: list[dict[str, Any]], model: str, items: int, sessions: int) -> list[list[Any]]:
    from review.selectors import pending_count

    bot = copy_bot(f"bench-learning-{model}", without_faq=True)
    oracle = Oracle(bot)
    with fake_model() if model == "fake" else _nothing() as fake:
        visitors_ask(bot, oracle, chosen)
        accuracy, taught = measure(bot, oracle, chosen)
        rows = [[model, 0, 0, "—", pending_count(bot=bot), f"{accuracy:.3f}", taught]]
        reviewed = 0
        for session in range(1, sessions + 1):
            counts = owner_session(bot, oracle, chosen, items)
            reviewed += sum(counts.values())
            decisions = f"{counts['correct']} / {counts['fixed']} / {counts['added']}"
            accuracy, taught = measure(bot, oracle, chosen)
            rows.append([model, session, reviewed, decisions, pending_count(bot=bot), f"{accuracy:.3f}", taught])
        calls = len(fake.requests) if fake is not None else 0
    for pair, was_taught in oracle.wrong:  # after the last session: which paraphrases stay wrong, and why
        reply = answer_of(bot, pair["paraphrase"])
        where = reply.links[0]["url"] if reply.links else ""
        print(f"  still wrong ({'taught' if was_taught else 'never in the queue'}): {pair['paraphrase']} -> "
              f"{reply.intent} {reply.llm_meta.get('route')} {where}", file=sys.stderr)
    for row in rows:
        row.append(calls)
    return rows


@contextmanager
def _nothing() -> Iterator[Any]:
    yield None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=["none", "fake"], choices=["none", "fake"])
    parser.add_argument("--items", type=int, default=15, help="queue items the owner reviews per session")
    parser.add_argument("--sessions", type=int, default=3)
    parser.add_argument("--skip-correction-memory", action="store_true")
    parser.add_argument("--damage", type=int, default=20, help="questions corrected in the damage part")
    parser.add_argument("--damage-only", action="store_true", help="run the damage part only")
    args = parser.parse_args()
    # The VK Cloud site is served on 127.0.0.1 and crawled at full speed when its bench bot is missing.
    os.environ.setdefault("CRAWL_ALLOW_PRIVATE", "1")
    os.environ.setdefault("CRAWL_DELAY", "0")
    common.setup_django()
    chosen, others = load_data()
    print(f"# Correction memory and the learning curve — {common.machine()}\n")
    print(f"## What {args.damage} corrections do to everything else (VK Cloud, whole site)\n")
    with common.timed("correction damage"):
        rows = correction_damage(chosen, others, args.damage)
    print(common.table(["state", "paraphrases → their correction", "2nd paraphrases → their correction",
                        f"other questions hit@1 (n={len(others) + len(chosen) - args.damage})",
                        "out-of-scope refused", "near misses → a correction", "out-of-scope → a correction"],
                       rows))
    print()
    with common.timed("demo contrast"):
        rows = demo_contrast()
    print("## The demo shop: one correction at a time, its paraphrases and near misses\n")
    print(common.table(["rule", "paraphrases → the correction", "near misses → the correction"], rows))
    print()
    if args.damage_only:
        return
    if not args.skip_correction_memory:
        with common.timed("correction memory"):
            rows = correction_memory(chosen, others)
        print(f"## Correction memory: {len(chosen)} FAQ questions corrected on the whole VK Cloud site\n")
        print(common.table(["measure", "value"], rows))
        print()
    print(f"## Learning curve: {len(chosen)} topics, site without its FAQ pages, ≤ {args.items} items a session\n")
    table_rows: list[list[Any]] = []
    for model in args.models:
        with common.timed(f"learning curve, model {model}"):
            table_rows += learning_curve(chosen, model, args.items, args.sessions)
    print(common.table(["model", "session", "items reviewed", "correct / fixed / added", "queue left",
                        "accuracy (paraphrases)", "right on taught topics", "model calls (whole run)"], table_rows))
    for slug in ("bench-correction-memory", "bench-learning-none", "bench-learning-fake"):
        drop(slug)


if __name__ == "__main__":
    main()
