"""Misspelt questions without a model: what the speller (knowledge/spelling.py) gives back.

    python bench/misspellings.py [--seed 21]

A seeded generator makes one edit in each of the two longest words of every question: a letter
inserted, dropped, replaced (by a neighbour on the Russian keyboard or any Cyrillic letter) or two
swapped. The chain runs without a model (LLM_PROVIDER none) on the demo shop's answerable cases
(demo/cases.jsonl) and the VK Cloud paraphrases (bench/data/vkcloud_paraphrases.tsv): the page under
the reply right; and on the out-of-scope sets (the demo's unanswerable cases and
tests/data/demo_out_of_scope.txt, bench/data/vkcloud_out_of_scope.txt): answered at all. Each set
clean and misspelt, with the speller off (the chain as before it, the baseline) and on, same run.
Then: false corrections of site words (the speller over every word of each bench bot's entries),
and what the speller costs a turn (its own time, and the whole turn with and without it).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
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
OUT_OF_SCOPE_DEMO = common.REPO / "tests" / "data" / "demo_out_of_scope.txt"
_WORD = re.compile(r"[а-яёА-ЯЁ]+")
_LETTERS = "абвгдежзийклмнопрстуфхцчшщъыьэюя"
# The Russian keyboard (ЙЦУКЕН), each row shifted as on a real one: neighbours are keys at most
# one key-width apart.
_ROWS = ("йцукенгшщзхъ", "фывапролджэ", "ячсмитьбю")
_SHIFT = (0.0, 0.25, 0.75)
_KEYS = {ch: (row, col + _SHIFT[row]) for row, keys in enumerate(_ROWS) for col, ch in enumerate(keys)}


def neighbours(letter: str) -> list[str]:
    if letter not in _KEYS:
        return []
    row, x = _KEYS[letter]
    return [ch for ch, (r, y) in _KEYS.items() if ch != letter and abs(r - row) <= 1 and abs(y - x) <= 1.0]


def typo(word: str, rng: random.Random) -> str:
    """`word` with one edit: insert, delete, substitute (keyboard-near or any letter), transpose."""
    for _ in range(20):
        i = rng.randrange(len(word))
        kind = rng.choice(("insert", "delete", "substitute", "transpose"))
        lower = word[i].lower()
        near = neighbours(lower)
        letter = rng.choice(near) if near and rng.random() < 0.5 else rng.choice(_LETTERS)
        if kind == "insert":
            made = word[:i] + letter + word[i:]
        elif kind == "delete" and len(word) > 2:
            made = word[:i] + word[i + 1 :]
        elif kind == "substitute":
            made = word[:i] + (letter.upper() if word[i].isupper() else letter) + word[i + 1 :]
        elif kind == "transpose" and i + 1 < len(word):
            made = word[:i] + word[i + 1] + word[i] + word[i + 2 :]
        else:
            continue
        if made.lower() != word.lower():
            return made
    return word


def misspell(question: str, rng: random.Random) -> str:
    """One edit in each of the two longest words (the first of equal length)."""
    words = list(_WORD.finditer(question))
    chosen = sorted(words, key=lambda m: (-len(m.group()), m.start()))[:2]
    text = question
    for match in sorted(chosen, key=lambda m: -m.start()):  # right to left: offsets stay valid
        text = text[: match.start()] + typo(match.group(), rng) + text[match.end() :]
    return text


@contextlib.contextmanager
def speller(on: bool) -> Iterator[None]:
    """The chain with the speller, or as it was before it (the no-model typo retry never runs)."""
    from answers import pipeline

    original = pipeline._spelled
    if not on:
        pipeline._spelled = lambda turn, text, **_: None
    try:
        yield
    finally:
        pipeline._spelled = original


def run(bot: Any, questions: list[str]) -> list[Any]:
    from django.test import override_settings

    from answers import pipeline

    with override_settings(LLM_PROVIDER="none"):
        return [pipeline.answer(bot=bot, text=q, history=[]) for q in questions]


def right(replies: list[Any], cases: list[Any]) -> int:
    from knowledge.evaluation import rank_of

    return sum(bool(not r.flags.get("unanswered") and r.links and rank_of([r.links[0]["url"]], c.expected_urls))
               for r, c in zip(replies, cases, strict=True))


def answered(replies: list[Any]) -> int:
    return sum(not r.flags.get("unanswered") for r in replies)


def share(n: int, total: int) -> str:
    return f"{n}/{total} ({n / total:.3f})"


def sets() -> dict[str, tuple[str, list[Any], bool]]:
    """name -> (bot, cases, answerable)."""
    import retrieval_quality

    from knowledge.evaluation import case_from_dict, load_cases

    demo = load_cases(common.DEMO_CASES)
    faq = {f["id"]: f for f in common.read_jsonl(common.VKCLOUD_FAQ)}
    paraphrases = [retrieval_quality.paraphrase_case(line, faq) for line in _lines(DATA / "vkcloud_paraphrases.tsv")]

    def unanswerable(path: Path) -> list[Any]:
        return [case_from_dict({"question": q, "answerable": False}) for q in _lines(path)]

    return {
        "demo cases (answerable)": ("demo", [c for c in demo if c.answerable], True),
        "VK Cloud paraphrases": ("vkcloud", paraphrases, True),
        "demo out of scope (cases + tests/data)": (
            "demo", [c for c in demo if not c.answerable] + unanswerable(OUT_OF_SCOPE_DEMO), False),
        "VK Cloud out of scope": ("vkcloud", unanswerable(DATA / "vkcloud_out_of_scope.txt"), False),
    }


def _lines(path: Path) -> list[str]:
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def quality_rows(bots: dict[str, Any], seed: int) -> tuple[list[list[Any]], dict[str, list[float]]]:
    rows: list[list[Any]] = []
    costs: dict[str, list[float]] = {"spelling": []}
    for name, (bot_name, cases, answerable) in sets().items():
        rng = random.Random(f"{seed}:{name}")
        clean = [c.question for c in cases]
        misspelt = [misspell(q, rng) for q in clean]
        results = {}
        for label, questions in (("clean", clean), ("misspelt", misspelt)):
            for on in (False, True):
                with speller(on):
                    results[label, on] = run(bots[bot_name], questions)
        total = len(cases)
        keys = (("clean", False), ("clean", True), ("misspelt", False), ("misspelt", True))
        counts = [right(results[key], cases) if answerable else answered(results[key]) for key in keys]
        rows.append([name, total] + [share(n, total) for n in counts])
        for on in results["misspelt", True]:
            if "spelling" in on.timings:
                costs["spelling"].append(on.timings["spelling"])
        for q, bad, on in zip(clean, misspelt, results["misspelt", True], strict=True):
            if "spelling" in on.llm_meta:
                print(f"  {name}: {bad!r} -> {on.llm_meta['spelling']['understood']!r} (asked {q!r})",
                      file=sys.stderr)
    return rows, costs


def false_correction_rows(bots: dict[str, Any]) -> list[list[Any]]:
    """Every word of a bot's active entries, through the speller: a site word must stay as it is."""
    from knowledge import spelling
    from knowledge.models import Entry

    rows = []
    for name, bot in bots.items():
        texts = [f"{t} {h} {x}" for t, h, x in
                 Entry.objects.filter(bot=bot, active=True).values_list("title", "heading_path", "text")]
        changed = 0
        for text in texts:
            changed += len(spelling.correct(bot.pk, text[:100_000]).changes)
        words = spelling.words_of(texts)
        lone = [w for w in words if spelling.correct(bot.pk, w).changes]
        rows.append([name, len(texts), len(words), changed, len(lone)])
    return rows


def added_ms(bot: Any, questions: list[str]) -> list[float]:
    """Per question: the turn's time with the speller minus without, in ABBA order, warm."""
    with speller(True):
        run(bot, questions)
    added = []
    for i, q in enumerate(questions):
        took: dict[bool, list[float]] = {True: [], False: []}
        for on in ((False, True, True, False) if i % 2 else (True, False, False, True)):
            with speller(on):
                took[on].append(run(bot, [q])[0].timings["total"])
        added.append(statistics.mean(took[True]) - statistics.mean(took[False]))
    return added


def speed_rows(bots: dict[str, Any], costs: dict[str, list[float]]) -> list[list[Any]]:
    """The speller alone; and the whole turn with it and without it, question by question in
    alternating order (ABBA), warm (each asked once before: vectors memoised as after a few visitors)."""
    from knowledge import spelling
    from knowledge.evaluation import load_cases

    bot = bots["demo"]
    questions = [misspell(c.question, random.Random(1)) for c in sets()["demo cases (answerable)"][1]]
    own = []
    for q in questions:
        started = time.perf_counter()
        spelling.correct(bot.pk, q)
        own.append((time.perf_counter() - started) * 1000)
    added = added_ms(bot, questions)
    as_asked = added_ms(bot, [c.question for c in load_cases(common.DEMO_CASES)])  # typos and all

    def p(values: list[float], q: int) -> str:
        return f"{statistics.quantiles(values, n=100)[q - 1]:.2f}" if len(values) > 1 else "-"

    return [
        ["spelling.correct alone (demo, misspelt cases, warm)", len(own), p(own, 50), p(own, 95)],
        ["the speller's step in turns that ran it (all misspelt sets)", len(costs["spelling"]),
         p(costs["spelling"], 50), p(costs["spelling"], 95)],
        ["whole turn, speller on minus off (demo misspelt, warm, ABBA)", len(added), p(added, 50), p(added, 95)],
        ["whole turn, speller on minus off (demo/cases.jsonl as asked, warm, ABBA)", len(as_asked),
         p(as_asked, 50), p(as_asked, 95)],
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed", type=int, default=21)
    args = parser.parse_args()
    os.environ.setdefault("CRAWL_ALLOW_PRIVATE", "1")
    os.environ.setdefault("CRAWL_DELAY", "0")
    common.setup_django()
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import retrieval_quality

    from knowledge import spelling

    bots = {name: retrieval_quality.prepare_bot(name, "e5-small", fresh=False) for name in ("demo", "vkcloud")}
    started = time.perf_counter()
    spelling.warm_up()
    print(f"# Misspelt questions without a model — {common.machine()}\n")
    print(f"The language's dictionary loaded in {time.perf_counter() - started:.1f} s "
          f"({len(spelling.language_speller().words)} words).\n")
    rows, costs = quality_rows(bots, args.seed)
    print("## Page under the reply right (answerable sets) / answered at all (out of scope)\n")
    print(common.table(["set", "questions", "clean, speller off (baseline)", "clean, speller on",
                        "misspelt, speller off (baseline)", "misspelt + speller"], rows))
    print("\n## False corrections of site words: every word of the bot's entries through the speller\n")
    print(common.table(["bot", "entries", "distinct words", "words changed in the entries' texts",
                        "words changed alone"], false_correction_rows(bots)))
    print("\n## What it costs (ms)\n")
    print(common.table(["what", "n", "p50", "p95"], speed_rows(bots, costs)))


if __name__ == "__main__":
    main()
