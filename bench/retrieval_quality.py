"""Retrieval quality: lexical-only and vector-only (each model) beside the hybrid, on three data sets,
plus the calibration of the match and confidence thresholds on the demo shop.

    python bench/retrieval_quality.py [--models e5-small use-m3] [--sets demo xquad vkcloud] [--fresh]

Data: xquad-ru (240 Wikipedia passages, 1,190 questions) loaded as chunks; the demo shop and the
VK Cloud docs crawled from local servers with the project's crawler; VK Cloud FAQ questions are
searched against the crawled docs (the answer is on the FAQ page; `linked_pages` also count in the
second column), and so are paraphrases of them (bench/data/vkcloud_paraphrases.tsv: the same 150
questions as a visitor would word them, expected page = the FAQ page or a page it links to) with
40 out-of-scope questions (bench/data/vkcloud_out_of_scope.txt) for refusal. Single-signal baselines
rank the very candidates the hybrid sees by one signal, in the same run, so the ratios compare like
with like.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import common

MODELS = ("e5-small", "use-m3")
DATA = Path(__file__).resolve().parent / "data"


def paraphrase_case(line: str, faq: dict[str, dict[str, Any]]) -> Any:
    """A line of vkcloud_paraphrases.tsv: FAQ id, the paraphrase, and (optionally) more right pages
    labelled by hand: another FAQ page asking the same, or the docs page on exactly that topic. The
    FAQ page and the pages its answer links to are always right."""
    from knowledge.evaluation import case_from_dict

    key, question, *more = line.split("\t")
    pair = faq[key]
    urls = [pair["page_url"], *pair.get("linked_pages", []), *(more[0].split() if more else [])]
    return case_from_dict({"question": question, "expected_urls": urls})


def _lines(path: Path) -> list[str]:
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
SETS = ("demo", "xquad", "vkcloud")


@dataclass
class DataSet:
    name: str
    cases: list[Any]
    extra: dict[str, list[Any]]


def crawl_into(bot: Any, url: str) -> None:
    from django.core.management import call_command

    call_command("crawl", bot.slug, "--url", url, "--no-embed", stdout=open(os.devnull, "w"))


def serve_demo() -> str:
    from demo.server import make_server

    server = make_server("127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/"


def serve_vkcloud() -> str:
    """The VK Cloud copy names http://127.0.0.1:8000 in its sitemap: serve a copy rewritten for a
    free port, so the bench never collides with a developer's server on 8000."""
    import functools
    import http.server
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="spravka-vk-")
    shutil.copytree(common.VKCLOUD_SITE, folder, dirs_exist_ok=True)

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=folder))
    origin = f"http://127.0.0.1:{server.server_address[1]}"
    for name in ("sitemap.xml", "robots.txt"):
        path = Path(folder) / name
        path.write_text(path.read_text(encoding="utf-8").replace("http://127.0.0.1:8000", origin), encoding="utf-8")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return origin + "/"


def prepare_bot(name: str, model: str, *, fresh: bool) -> Any:
    """The bench bot for (data set, model): loaded or crawled once, vectors from the cache."""
    from knowledge.models import Entry

    bot = common.bench_bot(f"bench-{name}-{model}", fresh=fresh)
    if not Entry.objects.filter(bot=bot, active=True).exists():
        if name == "xquad":
            common.load_passages(bot, common.read_jsonl(common.XQUAD / "passages.jsonl"), source_title="xquad")
        else:
            crawl_into(bot, serve_demo() if name == "demo" else serve_vkcloud())
    with common.timed(f"{name}/{model}: vectors"):
        common.embed_bot(bot, model)
    from knowledge.search import RECOMMENDED_CONFIDENCE, RECOMMENDED_MATCH

    bot.match_threshold, bot.confidence_threshold = RECOMMENDED_MATCH, RECOMMENDED_CONFIDENCE
    bot.save(update_fields=["match_threshold", "confidence_threshold"])
    return bot


def load_sets(names: list[str]) -> dict[str, DataSet]:
    from knowledge.evaluation import case_from_dict, load_cases

    demo = load_cases(common.DEMO_CASES)
    unrelated = [c for c in demo if not c.answerable]
    sets = {
        "demo": DataSet("demo", demo, {}),
        "xquad": DataSet("xquad", load_cases(common.XQUAD / "cases.jsonl"), {"demo-unanswerable": unrelated}),
    }
    faq = common.read_jsonl(common.VKCLOUD_FAQ)
    strict = [case_from_dict({"question": f["question"], "expected_url": f["page_url"]}) for f in faq]
    linked = [
        case_from_dict({"question": f["question"], "expected_urls": [f["page_url"], *f.get("linked_pages", [])]})
        for f in faq
    ]
    by_id = {f["id"]: f for f in faq}
    paraphrases = [paraphrase_case(line, by_id) for line in _lines(DATA / "vkcloud_paraphrases.tsv")]
    out_of_scope = [
        case_from_dict({"question": q, "answerable": False}) for q in _lines(DATA / "vkcloud_out_of_scope.txt")
    ]
    sets["vkcloud"] = DataSet("vkcloud", strict, {
        "faq+linked": linked, "demo-unanswerable": unrelated,
        "paraphrases + out-of-scope": paraphrases + out_of_scope,
    })
    return {name: sets[name] for name in names}


def single_signal_outcomes(bot: Any, model: str, cases: list[Any], vectors: dict[str, Any]) -> dict[str, list[Any]]:
    """Rank each question's hybrid candidates by one raw signal: the lexical-only and vector-only
    baselines (same candidates, same run)."""
    from knowledge import search
    from knowledge.evaluation import outcome_of

    keys = {"lexical": lambda s: s.lexical, "vector": lambda s: -1.0 if s.cosine is None else s.cosine}
    out: dict[str, list[Any]] = {name: [] for name in keys}
    for case in cases:
        query = " ".join(case.question.split())
        signals, _words = search.fetch_signals(bot.pk, query, vectors[case.question], model_key=model)
        for name, key in keys.items():
            found = [s for s in signals if name != "lexical" or s.lexical > 0]
            ranked = sorted(found, key=lambda s: (-key(s), s.entry_id))
            results = [search.fuse(s, model_key=model, fix_bonus=bot.fix_bonus) for s in ranked[:5]]
            out[name].append(outcome_of(case, results))
    return out


def hybrid_outcomes(bot: Any, model: str, cases: list[Any], vectors: dict[str, Any]) -> list[Any]:
    from knowledge.evaluation import run_cases
    from knowledge.search import search_entries

    return run_cases(cases, lambda q: search_entries(bot, q, k=5, query_vector=vectors[q], model_key=model))


def evaluate_set(data: DataSet, model: str, *, fresh: bool) -> tuple[list[list[Any]], dict[str, Any]]:
    from knowledge.evaluation import summarize

    bot = prepare_bot(data.name, model, fresh=fresh)
    questions = [c.question for c in data.cases] + [c.question for extra in data.extra.values() for c in extra]
    with common.timed(f"{data.name}/{model}: query vectors"):
        vectors = common.embed_queries(list(dict.fromkeys(questions)), model)
    rows: list[list[Any]] = []
    singles = single_signal_outcomes(bot, model, data.cases, vectors)
    for mode in ("lexical", "vector"):
        report = summarize(singles[mode], threshold=bot.match_threshold)
        rows.append([data.name, model, f"{mode}-only", report.hit1, report.hit3, report.mrr, "", ""])
    hybrid = hybrid_outcomes(bot, model, data.cases, vectors)
    report = summarize(hybrid, threshold=bot.match_threshold)
    right = report.answered_right
    refusal = report.refusal if report.unanswerable else ""
    rows.append([data.name, model, "hybrid", report.hit1, report.hit3, report.mrr, right, refusal])
    for label, cases in data.extra.items():
        extra = summarize(hybrid_outcomes(bot, model, cases, vectors), threshold=bot.match_threshold)
        if extra.answerable:
            row = [extra.hit1, extra.hit3, extra.mrr, extra.answered_right, extra.refusal if extra.unanswerable else ""]
            rows.append([data.name, model, f"hybrid, {label}", *row])
        else:
            rows.append([data.name, model, f"hybrid, {label}", "", "", "", "", extra.refusal])
    return rows, {"outcomes": hybrid, "bot": bot}


def calibration_rows(outcomes: list[Any], model: str) -> list[list[Any]]:
    from knowledge.evaluation import best_match_threshold, confidence_threshold, summarize, top1_precision_above

    match = best_match_threshold(outcomes)
    report = summarize(outcomes, threshold=match)
    confidence = confidence_threshold(outcomes)
    precision, count = top1_precision_above(outcomes, confidence)
    return [[model, match, report.answered_right, report.refusal, confidence, precision, count]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    parser.add_argument("--sets", nargs="+", default=list(SETS), choices=SETS)
    parser.add_argument("--fresh", action="store_true", help="reload and recrawl the bench bots")
    args = parser.parse_args()
    os.environ.setdefault("CRAWL_ALLOW_PRIVATE", "1")
    os.environ.setdefault("CRAWL_DELAY", "0")
    common.setup_django()
    from knowledge.search import RECOMMENDED_MATCH

    rows: list[list[Any]] = []
    calibration: list[list[Any]] = []
    for name, data in load_sets(args.sets).items():
        for model in args.models:
            set_rows, extra = evaluate_set(data, model, fresh=args.fresh)
            rows += set_rows
            if name == "demo":
                calibration += calibration_rows(extra["outcomes"], model)
    print(f"# Retrieval quality — {common.machine()}; match threshold {RECOMMENDED_MATCH}\n")
    print(common.table(["set", "model", "mode", "hit@1", "hit@3", "MRR", "answered-right", "refusal"], rows))
    if calibration:
        print("\n## Threshold calibration on demo/cases.jsonl (best single match threshold per model)\n")
        print(common.table(
            ["model", "best match", "answered-right", "refusal", "confidence", "top-1 right above it", "cases above"],
            calibration,
        ))


if __name__ == "__main__":
    main()
