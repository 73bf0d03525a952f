"""How far ranking can go on the VK Cloud paraphrases with the signals e5-small and the lexicon give.

    python bench/paraphrase_ceiling.py

For each of the 150 paraphrases (bench/data/vkcloud_paraphrases.tsv) the search's candidates and
their raw signals are fetched once, then ranked four ways (same run, same candidates):

1. the shipped score (knowledge/search.py): the baseline;
2. each signal alone (cosine, lexical coverage, title/heading trigram);
3. the best fusion weights on a grid, chosen on one half of the paraphrases (even lines) and reported
   on the other (odd lines), and the other way round: a held-out check of any re-weighting;
4. an oracle reranker over the top k of the shipped ranking: hit@1 = the share whose right page is
   anywhere in the top k (what a perfect reranker of k passages could reach).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import common

K_ORACLE = (1, 3, 5, 10, 30)


def _rank(signals: list[Any], key: Any, expected: tuple[str, ...]) -> int | None:
    from knowledge.evaluation import rank_of

    ranked = sorted(signals, key=lambda s: (-key(s), s.entry_id))
    return rank_of([s.url for s in ranked], expected)


def _hits(ranks: list[int | None], k: int) -> float:
    return round(sum(1 for r in ranks if r is not None and r <= k) / len(ranks), 3)


def main() -> None:
    os.environ.setdefault("CRAWL_ALLOW_PRIVATE", "1")
    os.environ.setdefault("CRAWL_DELAY", "0")
    common.setup_django()
    import retrieval_quality

    from knowledge import search

    bot = retrieval_quality.prepare_bot("vkcloud", "e5-small", fresh=False)
    cases = [c for c in retrieval_quality.load_sets(["vkcloud"])["vkcloud"].extra["paraphrases + out-of-scope"]
             if c.answerable]
    vectors = common.embed_queries([c.question for c in cases], "e5-small")
    fetched = [
        (c, search.fetch_signals(bot.pk, " ".join(c.question.split()), vectors[c.question], model_key="e5-small")[0])
        for c in cases
    ]

    def shipped(s: Any) -> float:
        return search.score_of(s, model_key="e5-small", fix_bonus=bot.fix_bonus)

    rows: list[list[Any]] = []
    base = [_rank(sig, shipped, c.expected_urls) for c, sig in fetched]
    rows.append(["shipped score (baseline)", "all 150", _hits(base, 1), _hits(base, 3)])
    singles = {"cosine alone": lambda s: s.cosine or 0.0, "lexical alone": lambda s: s.lexical,
               "title/heading trigram alone": lambda s: max(s.trigram, s.heading)}
    for name, key in singles.items():
        ranks = [_rank(sig, key, c.expected_urls) for c, sig in fetched]
        rows.append([name, "all 150", _hits(ranks, 1), _hits(ranks, 3)])

    def fused(w_vec: float, w_lex: float, w_tri: float, ceiling: float) -> Any:
        def key(s: Any) -> float:
            low, high = search.COSINE_RANGE["e5-small"]
            vector = max(0.0, min(ceiling, ((s.cosine or 0.0) - low) / (high - low)))
            return w_vec * vector + w_lex * s.lexical + w_tri * max(s.trigram, s.heading)
        return key

    grid = [(v, lx, t, ceil) for v in (0.4, 0.5, 0.6, 0.7, 0.8, 0.9) for lx in (0.0, 0.1, 0.2, 0.3, 0.4)
            for t in (0.0, 0.05, 0.1, 0.2) for ceil in (1.0, 1.5, 3.0)]
    halves = {"even": fetched[0::2], "odd": fetched[1::2]}
    for tune, test in (("even", "odd"), ("odd", "even")):
        def score(weights: tuple[float, float, float, float], part: list[Any]) -> tuple[float, float]:
            ranks = [_rank(sig, fused(*weights), c.expected_urls) for c, sig in part]
            return _hits(ranks, 1), _hits(ranks, 3)
        best = max(grid, key=lambda w: (score(w, halves[tune]), -abs(w[0] - 0.6)))
        tuned, held = score(best, halves[tune]), score(best, halves[test])
        label = (f"best grid weights on the {tune} half (vector {best[0]}, lexical {best[1]}, title {best[2]}, "
                 f"cap {best[3]})")
        rows.append([label, f"tuned on {tune}: {tuned[0]} / {tuned[1]}", held[0], held[1]])
    for k in K_ORACLE:
        rows.append([f"oracle reranker of the top {k}", "all 150", _hits(base, k), _hits(base, max(k, 3))])
    missing = sum(1 for c, sig in fetched if _rank(sig, shipped, c.expected_urls) is None)
    print(f"# VK Cloud paraphrases: the ranking ceiling — {common.machine()}\n")
    print(common.table(["ranking", "tuned on", "hit@1 (held-out half for the grid)", "hit@3"], rows))
    print(f"\nright page not among the candidates at all: {missing} of {len(fetched)}")
    for c, sig in fetched:
        rank = _rank(sig, shipped, c.expected_urls)
        if rank is None or rank > 3:
            print(f"  rank {rank}: {c.question}  (right: {' '.join(c.expected_urls)[:120]})", file=sys.stderr)


if __name__ == "__main__":
    main()
