"""Out of scope means no answer (issue 21, item 3): retrieval-only replies with the subject check
(knowledge/scope.py, the chain's step 3) and the «Да» rule (excerpts.py) on and off, in one run.

    SPRAVKA_DATA_DIR=... python bench/out_of_scope.py

Bots: `bench-demo-e5-small` and `bench-vkcloud-e5-small` as bench/retrieval_quality.py prepared them,
read only (never re-embedded or written here). Sets: out-of-scope questions (tests/data/
demo_out_of_scope.txt and the unanswerable cases of demo/cases.jsonl; bench/data/vkcloud_out_of_scope.txt)
and answerable ones (demo/cases.jsonl, bench/data/one_fact.jsonl, the VK Cloud paraphrases and second
paraphrases, the near misses with a page that answers them). Answered right: the reply's link is an
expected page. The baseline is the same chain with the check switched off and the excerpts of main
at BASELINE_COMMIT (read from git), on the same entries in the same process.

"Whatever the score" applies the check to the entry the chain would show (the best one) for every
question, answered or not: how much it would refuse if vectors came closer. Cost: the check's own
time per turn where it runs, and whole turns with and without it (p50, warm, one process).
"""

from __future__ import annotations

import contextlib
import os
import re
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

DATA = Path(__file__).resolve().parent / "data"
BASELINE_COMMIT = "df6f4cb"  # main before the check
_YES_NO_FIRST = re.compile(r"^\s*(?:да|нет)\b", re.IGNORECASE)


def _lines(path: Path) -> list[str]:
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


Questions = list[tuple[str, tuple[str, ...]]]


def question_sets() -> list[tuple[str, str, Questions]]:
    """(set, bot, [(question, expected pages)]): out-of-scope sets have no pages."""
    import retrieval_quality

    from knowledge.evaluation import load_cases

    faq = {f["id"]: f for f in common.read_jsonl(common.VKCLOUD_FAQ)}
    demo = load_cases(common.DEMO_CASES)

    def pages(key: str) -> tuple[str, ...]:
        return (faq[key]["page_url"], *faq[key].get("linked_pages", []))

    one_fact = common.read_jsonl(DATA / "one_fact.jsonl")
    none: tuple[str, ...] = ()
    return [
        ("demo out-of-scope (57)", "demo", [(q, none) for q in _lines(common.REPO / "tests/data/demo_out_of_scope.txt")]
         + [(c.question, none) for c in demo if not c.answerable]),
        ("VK Cloud out-of-scope (40)", "vkcloud", [(q, none) for q in _lines(DATA / "vkcloud_out_of_scope.txt")]),
        ("demo cases, answerable", "demo", [(c.question, c.expected_urls) for c in demo if c.answerable]),
        ("one-fact (demo)", "demo", [(c["question"], (c["expected_url"],)) for c in one_fact if c["set"] == "demo"]),
        ("one-fact (VK Cloud)", "vkcloud",
         [(c["question"], (c["expected_url"],)) for c in one_fact if c["set"] == "vkcloud"]),
        ("VK Cloud paraphrases", "vkcloud",
         [(c.question, c.expected_urls) for c in (retrieval_quality.paraphrase_case(line, faq)
                                                  for line in _lines(DATA / "vkcloud_paraphrases.tsv"))]),
        ("VK Cloud paraphrases 2", "vkcloud",
         [(c["paraphrase"], pages(c["id"])) for c in common.read_jsonl(DATA / "vkcloud_paraphrases2.jsonl")]),
        ("VK Cloud near misses", "vkcloud",
         [(c["near_miss"], (c["expected_url"],)) for c in common.read_jsonl(DATA / "vkcloud_near_misses.jsonl")
          if c["expected_url"]]),
    ]


def baseline_modules() -> tuple[Any, Any]:
    """(no check, main's excerpts without the «Да» rule), read from git once."""
    import truthfulness

    saved, truthfulness.BASELINE_COMMIT = truthfulness.BASELINE_COMMIT, BASELINE_COMMIT
    try:
        old_asked = truthfulness._module_from_git("answers/asked.py", "baseline_asked")
        old = truthfulness._module_from_git("answers/excerpts.py", "baseline_excerpts", asked=old_asked)
    finally:
        truthfulness.BASELINE_COMMIT = saved
    return (lambda *args: []), old


@contextlib.contextmanager
def check_off(baseline: tuple[Any, Any]) -> Iterator[None]:
    """The chain without the subject check and with main's excerpts: the baseline."""
    from answers import pipeline

    saved = pipeline._off_subject, pipeline.excerpts
    pipeline._off_subject, pipeline.excerpts = baseline
    try:
        yield
    finally:
        pipeline._off_subject, pipeline.excerpts = saved


Timed = tuple[list[Any], list[Any], list[float], list[float]]


def _replies(bots: dict[str, Any], cases: list[tuple[str, str]]) -> Timed:
    """Each question answered with the check off, then on (turn by turn, so both see the same warmth)."""
    from django.test import override_settings

    from answers import pipeline

    baseline = baseline_modules()
    off: list[Any] = []
    on: list[Any] = []
    off_ms: list[float] = []
    on_ms: list[float] = []
    with override_settings(LLM_PROVIDER="none"):
        for bot, question in cases:
            for replies, times, switch in ((off, off_ms, check_off(baseline)), (on, on_ms, contextlib.nullcontext())):
                with switch:
                    started = time.perf_counter()
                    replies.append(pipeline.answer(bot=bots[bot], text=question, history=[]))
                    times.append((time.perf_counter() - started) * 1000)
    return off, on, off_ms, on_ms


def _right(reply: Any, pages: tuple[str, ...]) -> bool:
    from knowledge.evaluation import rank_of

    return bool(pages and not reply.flags.get("unanswered") and reply.links
                and rank_of([reply.links[0]["url"]], pages))


def _bare_yes_no(reply: Any) -> bool:
    return not reply.flags.get("unanswered") and bool(_YES_NO_FIRST.match(reply.text))


def whatever_the_score(bots: dict[str, Any], cases: list[tuple[str, str]]) -> tuple[list[bool], list[float]]:
    """The check on the entry the chain would show, for every question (turns timed apart)."""
    from answers import asked, pipeline
    from knowledge.search import search_entries

    refused, times = [], []
    for bot, question in cases:
        results = search_entries(bots[bot], question, k=pipeline.SEARCH_K)
        top = asked.answering(results, question, floor=0.0)
        turn = pipeline.Turn(bot=bots[bot], history=[], language="ru")
        started = time.perf_counter()
        refused.append(bool(top and pipeline._off_subject(turn, question, top)))
        times.append((time.perf_counter() - started) * 1000)
    return refused, times


def main() -> None:
    os.environ.setdefault("CRAWL_ALLOW_PRIVATE", "1")
    common.setup_django()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bots.models import Bot

    bots = {name: Bot.objects.get(slug=f"bench-{name}-e5-small") for name in ("demo", "vkcloud")}
    sets = question_sets()
    cases = [(bot, q) for _name, bot, qs in sets for q, _pages in qs]
    _replies(bots, cases[:20])  # warm: the model, the dictionaries
    before, after, before_ms, after_ms = _replies(bots, cases)
    vetoed, check_ms = whatever_the_score(bots, cases)
    import truthfulness

    facts = {c["question"]: c["fact"] for c in common.read_jsonl(DATA / "one_fact.jsonl")}
    rows, at, with_fact = [], 0, [0, 0]
    for name, _bot, qs in sets:
        n = len(qs)
        b, a, v = before[at:at + n], after[at:at + n], vetoed[at:at + n]
        if name.startswith("one-fact"):
            for i, got in enumerate((b, a)):
                with_fact[i] += sum(truthfulness.contains_fact(r.text, facts[q])
                                    for (q, _p), r in zip(qs, got, strict=True))
        pages = [p for _q, p in qs]
        if pages[0]:
            measure = [sum(_right(r, p) for r, p in zip(got, pages, strict=True)) for got in (b, a)]
            label = "answered right"
        else:
            measure = [sum(not r.flags.get("unanswered") for r in got) for got in (b, a)]
            label = "answered (should be 0)"
        bare = [sum(_bare_yes_no(r) for r in got) for got in (b, a)]
        rows.append([name, n, label, f"{measure[0]} ({measure[0] / n:.3f})", f"{measure[1]} ({measure[1] / n:.3f})",
                     f"{bare[0]} → {bare[1]}", f"{sum(v)} ({sum(v) / n:.3f})"])
        for question, r0, r1 in zip([q for q, _p in qs], b, a, strict=True):
            if r0.flags.get("unanswered") != r1.flags.get("unanswered"):
                print(f"  {name}: {question!r}: {'refused now' if r1.flags.get('unanswered') else 'answered now'}"
                      f" {r1.llm_meta.get('off_subject') or ''}", file=sys.stderr)
        at += n
    print(f"# Out of scope means no answer — {common.machine()}\n")
    print(common.table(["set", "questions", "measure", "check off (baseline)", "check on",
                        "replies opening with a bare Да/Нет (off → on)", "refused by the check whatever the score"],
                       rows))
    print(f"\nOne-fact questions whose reply contains the fact: {with_fact[0]}/{len(facts)} off, "
          f"{with_fact[1]}/{len(facts)} on")
    ran = sorted(check_ms)
    print(f"\nThe check's own time per turn (all {len(ran)} questions, warm): p50 {statistics.median(ran):.2f} ms, "
          f"p95 {ran[int(len(ran) * 0.95)]:.2f} ms")
    print(f"Whole retrieval-only turns: p50 {statistics.median(before_ms):.1f} ms off, "
          f"{statistics.median(after_ms):.1f} ms on")


if __name__ == "__main__":
    main()
