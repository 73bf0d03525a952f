"""Visitors in English, without a model (issue 21, item 4): the page under the reply for English
questions to the two Russian bench sites, beside everything else the same search answers, with
today's search (main's knowledge/search.py at BASELINE_COMMIT, read from git) in the same run.

    SPRAVKA_DATA_DIR=... python bench/english.py

Sets (each through `pipeline.answer` with LLM_PROVIDER="none", as a visitor of the demo gets it):
- English: bench/data/demo_cases_en.jsonl (32 demo questions with their page) and
  bench/data/vkcloud_paraphrases_en.tsv (the 150 VK Cloud paraphrases in English, same FAQ ids and
  extra right pages as the Russian file): the page under the reply is right.
- Russian, unchanged: demo/cases.jsonl (page right, unanswerable answered),
  bench/data/vkcloud_paraphrases.tsv (page right), bench/data/one_fact.jsonl (the fact in the text).
- Out of scope: bench/data/vkcloud_out_of_scope.txt (VK Cloud), tests/data/demo_out_of_scope.txt
  (demo), bench/data/out_of_scope_en.txt (26 English questions, asked of both): answered = a reply
  that is not the no-answer.
- The cost of a turn: p50 of the chain's total time over every question above.

The bench bots are read only (`prepare_bot(..., fresh=False)`).
"""

from __future__ import annotations

import contextlib
import statistics
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

DATA = Path(__file__).resolve().parent / "data"
BASELINE_COMMIT = "df6f4cb"  # main before English questions were read across languages


@contextlib.contextmanager
def todays_search() -> Iterator[None]:
    """The chain with main's search (the very file at BASELINE_COMMIT)."""
    from answers import pipeline

    module = common.module_from_git(BASELINE_COMMIT, "knowledge/search.py", "baseline_search")
    saved = pipeline.search_entries
    pipeline.search_entries = module.__dict__["search_entries"]
    try:
        yield
    finally:
        pipeline.search_entries = saved


def _lines(path: Path) -> list[str]:
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def load(bots: dict[str, Any]) -> list[tuple[str, Any, list[Any]]]:
    """(set name, bot, cases); a case is (question, expected urls or None for out of scope, fact)."""
    from bench.retrieval_quality import paraphrase_case
    from knowledge.evaluation import load_cases

    faq = {f["id"]: f for f in common.read_jsonl(common.VKCLOUD_FAQ)}

    def cases_of(path: Path) -> list[Any]:
        return [(c.question, list(c.expected_urls) if c.answerable else None, None) for c in load_cases(path)]

    def paraphrases(path: Path) -> list[Any]:
        cases = [paraphrase_case(line, faq) for line in _lines(path)]
        return [(c.question, list(c.expected_urls), None) for c in cases]

    def refused(path: Path) -> list[Any]:
        return [(q, None, None) for q in _lines(path)]

    facts = common.read_jsonl(DATA / "one_fact.jsonl")
    return [
        ("demo, English (page right)", bots["demo"], cases_of(DATA / "demo_cases_en.jsonl")),
        ("VK Cloud paraphrases, English (page right)", bots["vkcloud"],
         paraphrases(DATA / "vkcloud_paraphrases_en.tsv")),
        ("demo/cases.jsonl (page right)", bots["demo"], cases_of(common.DEMO_CASES)),
        ("VK Cloud paraphrases, Russian (page right)", bots["vkcloud"], paraphrases(DATA / "vkcloud_paraphrases.tsv")),
        ("one_fact.jsonl (fact in the text)", None,
         [(c["question"], [c["expected_url"]], (c["fact"], c["set"])) for c in facts]),
        ("out of scope, VK Cloud (answered)", bots["vkcloud"], refused(DATA / "vkcloud_out_of_scope.txt")),
        ("out of scope, demo (answered)", bots["demo"], refused(common.REPO / "tests/data/demo_out_of_scope.txt")),
        ("out of scope, English, demo (answered)", bots["demo"], refused(DATA / "out_of_scope_en.txt")),
        ("out of scope, English, VK Cloud (answered)", bots["vkcloud"], refused(DATA / "out_of_scope_en.txt")),
    ]


def measure(sets: list[tuple[str, Any, list[Any]]], bots: dict[str, Any]) -> tuple[dict[str, str], list[float]]:
    from django.test import override_settings

    from answers import pipeline
    from bench.truthfulness import contains_fact
    from knowledge.evaluation import rank_of

    figures: dict[str, str] = {}
    times: list[float] = []
    with override_settings(LLM_PROVIDER="none"):
        for name, bot, cases in sets:
            good = wrongly = 0
            unanswerable = sum(expected is None for _, expected, _ in cases)
            for question, expected, fact in cases:
                asked = bots[fact[1]] if fact else bot
                reply = pipeline.answer(bot=asked, text=question, history=[])
                times.append(reply.timings["total"])
                answered = not reply.flags.get("unanswered")
                if fact:
                    good += contains_fact(reply.text, fact[0])
                elif expected is None:
                    wrongly += answered
                else:
                    good += bool(answered and reply.links and rank_of([reply.links[0]["url"]], expected))
            if unanswerable == len(cases):
                figures[name] = f"{wrongly}/{unanswerable} ({wrongly / unanswerable:.3f})"
                continue
            total = len(cases) - unanswerable
            figures[name] = f"{good}/{total} ({good / total:.3f})"
            if unanswerable:  # demo/cases.jsonl mixes both: its unanswerable ones answered, apart
                figures[name.replace("page right", "unanswerable answered")] = f"{wrongly}/{unanswerable}"
    return figures, times


def floor_sweep(sets: list[tuple[str, Any, list[Any]]]) -> list[list[Any]]:
    """The limit of e5-small across languages: for each cosine floor a cross-language answer could
    be given at, the English questions whose best result is the right page and clears it, and the
    English out-of-scope questions that clear it (ranking as the new search, no threshold); "none"
    is the ranking's own ceiling."""
    from knowledge.evaluation import rank_of
    from knowledge.search import search_entries

    english = [(name, bot, cases) for name, bot, cases in sets if "English" in name]
    tops = {name: [(search_entries(bot, question, k=1)[0], expected) for question, expected, _ in cases]
            for name, bot, cases in english}
    rows = []
    for floor in (None, 0.80, 0.81, 0.82, 0.83, 0.84, 0.85, 0.86):
        row: list[Any] = ["none" if floor is None else f"{floor:.2f}"]
        for name, _bot, cases in english:
            cleared = [(top, expected) for top, expected in tops[name]
                       if floor is None or top.components["cosine"] >= floor]
            if all(expected is None for _, expected, _ in cases):
                row.append(f"{len(cleared)}/{len(cases)}")
            else:
                right = sum(bool(rank_of([top.url], expected)) for top, expected in cleared)
                row.append(f"{right}/{len(cases)} ({right / len(cases):.3f})")
        rows.append(row)
    return rows


def main() -> None:
    common.setup_django()
    from bench.retrieval_quality import prepare_bot

    bots = {name: prepare_bot(name, "e5-small", fresh=False) for name in ("demo", "vkcloud")}
    sets = load(bots)
    with todays_search():
        before, before_times = measure(sets, bots)
    after, after_times = measure(sets, bots)
    rows: list[list[Any]] = [[name, before[name], after[name]] for name in before]
    rows.append(["turn p50, ms (every question above)", round(statistics.median(before_times), 1),
                 round(statistics.median(after_times), 1)])
    print(common.machine())
    print(common.table(["set", f"today's search (main {BASELINE_COMMIT})", "read across languages"], rows))
    names = [name for name, _bot, _cases in sets if "English" in name]
    print(common.table(["cosine floor", *names], floor_sweep(sets)))


if __name__ == "__main__":
    main()
