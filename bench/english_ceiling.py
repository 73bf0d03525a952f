"""How far meaning alone can take an English question to a Russian page, by the two embedding models
the project ships (issue 21, item 4: the right page for ≥ 0.8 of the English VK Cloud paraphrases).

    SPRAVKA_DATA_DIR=... SPRAVKA_SHARED=../shared python bench/english_ceiling.py

For each question, the passage nearest by cosine (no words, no threshold) among the bench bots'
entries (`bench-vkcloud-e5-small`, `bench-demo-e5-small`, read only); passage vectors of either model
from the bench cache (computed once when missing). Models: e5-small (what every bot uses), use-m3
(Universal Sentence Encoder multilingual, trained for cross-language retrieval), and blends of the
two (each cosine first rescaled by its model's range, then weighted). Printed: the right page first
(hit@1) and among the first three pages (hit@3); and, at the floor that lets through at most one
of the 26 English out-of-scope questions, the share still answered right (what a reply could show).
The Russian paraphrases are the check that a blend does not cost the site's own language.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

# Each model's cosines mapped onto about 0..1 before blending (e5-small's span is narrow and high).
SCALE = {"e5-small": (0.74, 0.88), "use-m3": (0.0, 0.5)}
BLENDS = (("e5-small", 0.0), ("use-m3", 1.0), ("e5-small 0.7 + use-m3 0.3", 0.3), ("e5-small 0.5 + use-m3 0.5", 0.5))
OUT_OF_SCOPE_LET_THROUGH = 1


def passages(bot: Any, model: str) -> tuple[Any, list[str]]:
    """(unit passage vectors, their page urls) of the bot's active entries."""
    import numpy as np

    from knowledge.drafts import passage_text
    from knowledge.models import Entry

    entries = list(Entry.objects.filter(bot=bot, active=True).order_by("pk"))
    texts = [passage_text(e) for e in entries]
    cache, embedder = common.EmbeddingCache(model), common.embedder_for(model)
    missing = [t for t in dict.fromkeys(texts) if cache.get(t) is None]
    for start in range(0, len(missing), 32):
        part = missing[start:start + 32]
        for text, vector in zip(part, embedder.passages(part), strict=True):
            cache.put(text, np.asarray(vector, dtype=np.float32))
    cache.save()
    matrix = np.stack([cache.get(t) for t in texts])
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True), [e.url for e in entries]


def scores(bot: Any, questions: list[str]) -> dict[str, Any]:
    """model -> (questions × passages) cosines rescaled to SCALE, and the passages' urls."""
    import numpy as np

    out: dict[str, Any] = {}
    for model, (low, high) in SCALE.items():
        matrix, urls = passages(bot, model)
        embedder = common.embedder_for(model)
        queries = np.stack([np.asarray(embedder.query(q), dtype=np.float32) for q in questions])
        queries /= np.linalg.norm(queries, axis=1, keepdims=True)
        out[model] = ((queries @ matrix.T - low) / (high - low), urls)
    return out


def first_pages(row: Any, urls: list[str], n: int = 3) -> list[str]:
    import numpy as np

    pages: list[str] = []
    for i in np.argsort(-row):
        if urls[i] not in pages:
            pages.append(urls[i])
        if len(pages) == n:
            break
    return pages


def rows_for(bot: Any, label: str, answerable: list[tuple[str, list[str]]], refused: list[str]) -> list[list[Any]]:
    from knowledge.evaluation import rank_of

    questions = [q for q, _ in answerable] + refused
    by_model = scores(bot, questions)
    urls = by_model["e5-small"][1]
    rows = []
    for name, weight in BLENDS:
        blended = (1 - weight) * by_model["e5-small"][0] + weight * by_model["use-m3"][0]
        tops = blended.max(axis=1)
        ranks = [rank_of(first_pages(blended[i], urls), expected) for i, (_, expected) in enumerate(answerable)]
        n = len(answerable)
        outside = sorted(tops[n:], reverse=True)
        floor = outside[OUT_OF_SCOPE_LET_THROUGH] if len(outside) > OUT_OF_SCOPE_LET_THROUGH else 0.0
        right = sum(rank == 1 and tops[i] > floor for i, rank in enumerate(ranks))
        rows.append([label, name, f"{sum(r == 1 for r in ranks) / n:.3f}", f"{sum(bool(r) for r in ranks) / n:.3f}",
                     f"{right / n:.3f}" if refused else "—", f"{floor:.3f}" if refused else "—"])
        if refused and "+" in name:
            for at in (0.45, 0.5, 0.55, 0.6, 0.65, 0.7):  # the trade-off around it, on stderr
                kept = sum(r == 1 and tops[i] > at for i, r in enumerate(ranks))
                print(f"  {label} {name} floor {at}: right {kept}/{n}"
                      f" out of scope {sum(t > at for t in tops[n:])}/{len(tops) - n}", file=sys.stderr)
    return rows


def main() -> None:
    common.setup_django()
    from bench.english import DATA, _lines
    from bench.retrieval_quality import paraphrase_case, prepare_bot
    from knowledge.evaluation import load_cases

    faq = {f["id"]: f for f in common.read_jsonl(common.VKCLOUD_FAQ)}
    vk, demo = prepare_bot("vkcloud", "e5-small", fresh=False), prepare_bot("demo", "e5-small", fresh=False)

    def paraphrases(path: Path) -> list[tuple[str, list[str]]]:
        return [(c.question, list(c.expected_urls)) for c in (paraphrase_case(line, faq) for line in _lines(path))]

    english_out = _lines(DATA / "out_of_scope_en.txt")
    demo_en = [(c.question, list(c.expected_urls)) for c in load_cases(DATA / "demo_cases_en.jsonl") if c.answerable]
    rows = rows_for(vk, "VK Cloud paraphrases, English (150)", paraphrases(DATA / "vkcloud_paraphrases_en.tsv"),
                    english_out)
    rows += rows_for(vk, "VK Cloud paraphrases, Russian (150)", paraphrases(DATA / "vkcloud_paraphrases.tsv"), [])
    rows += rows_for(demo, f"demo, English ({len(demo_en)})", demo_en, english_out)
    print(f"# English questions to a Russian site by meaning alone — {common.machine()}\n")
    print(common.table(["set", "vectors", "hit@1", "hit@3",
                        f"right above the floor that lets {OUT_OF_SCOPE_LET_THROUGH} of 26 out-of-scope through",
                        "that floor (rescaled units)"],
                       rows))


if __name__ == "__main__":
    main()
