"""Retrieval metrics as plain functions: `manage.py evaluate`, the benchmarks and the threshold
calibration all use these, so a number in docs/benchmarks.md means what the command prints.

A case is {"question", "expected_url" | "expected_urls", "answerable"}. A result matches a case
when its URL has the same path as an expected URL: host, query and #anchor are ignored, because
crawled entries carry absolute URLs with section anchors while cases name site paths.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from knowledge.search import SearchResult


@dataclass(frozen=True)
class Case:
    question: str
    expected_urls: tuple[str, ...]
    answerable: bool


@dataclass(frozen=True)
class Outcome:
    """One case after search: the 1-based rank of the first right result (None: not in the list)."""

    case: Case
    rank: int | None
    top_score: float
    latency_ms: float


@dataclass(frozen=True)
class Report:
    answerable: int
    unanswerable: int
    hit1: float
    hit3: float
    mrr: float
    answered_right: float
    refusal: float
    p50_ms: float
    p95_ms: float
    threshold: float

    def as_dict(self) -> dict[str, float | int]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def case_from_dict(data: dict[str, object]) -> Case:
    urls = data.get("expected_urls") or ([data["expected_url"]] if data.get("expected_url") else [])
    if not isinstance(urls, list):
        raise ValueError("expected_urls must be a list")
    answerable = bool(data.get("answerable", bool(urls)))
    if answerable and not urls:
        raise ValueError(f"an answerable case needs expected_url(s): {data.get('question')!r}")
    return Case(question=str(data["question"]), expected_urls=tuple(str(u) for u in urls), answerable=answerable)


def load_cases(path: Path) -> list[Case]:
    with path.open(encoding="utf-8") as handle:
        return [case_from_dict(json.loads(line)) for line in handle if line.strip()]


def url_path(url: str) -> str:
    """'/delivery/moscow' == 'http://host:8001/delivery/moscow/#sroki' == '/delivery/moscow/'."""
    path = urlsplit(url).path or "/"
    return path if path.endswith("/") else path + "/"


def rank_of(urls: Sequence[str], expected: Iterable[str]) -> int | None:
    wanted = {url_path(u) for u in expected}
    for position, url in enumerate(urls, start=1):
        if url and url_path(url) in wanted:
            return position
    return None


def outcome_of(case: Case, results: Sequence[SearchResult], latency_ms: float = 0.0) -> Outcome:
    rank = rank_of([r.url for r in results], case.expected_urls) if case.answerable else None
    top = results[0].score if results else 0.0
    return Outcome(case=case, rank=rank, top_score=top, latency_ms=latency_ms)


def run_cases(cases: Sequence[Case], search: Callable[[str], list[SearchResult]]) -> list[Outcome]:
    """Search every case once, timing each call (whatever `search` includes, e.g. embedding)."""
    outcomes = []
    for case in cases:
        started = time.perf_counter()
        results = search(case.question)
        outcomes.append(outcome_of(case, results, (time.perf_counter() - started) * 1000))
    return outcomes


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100); 0.0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    index = max(0, math.ceil(q / 100 * len(ordered)) - 1)
    return ordered[min(index, len(ordered) - 1)]


def _share(hits: int, total: int) -> float:
    return hits / total if total else 0.0


def summarize(outcomes: Sequence[Outcome], *, threshold: float) -> Report:
    """hit@1, hit@3, MRR over answerable cases; answered-right = answerable, above `threshold` and
    right in the top 3; refusal = unanswerable and below `threshold`."""
    good = [o for o in outcomes if o.case.answerable]
    bad = [o for o in outcomes if not o.case.answerable]
    latencies = [o.latency_ms for o in outcomes]
    return Report(
        answerable=len(good), unanswerable=len(bad),
        hit1=_share(sum(o.rank == 1 for o in good), len(good)),
        hit3=_share(sum(o.rank is not None and o.rank <= 3 for o in good), len(good)),
        mrr=sum(1 / o.rank for o in good if o.rank) / len(good) if good else 0.0,
        answered_right=_share(
            sum(o.top_score >= threshold and o.rank is not None and o.rank <= 3 for o in good), len(good)
        ),
        refusal=_share(sum(o.top_score < threshold for o in bad), len(bad)),
        p50_ms=percentile(latencies, 50), p95_ms=percentile(latencies, 95), threshold=threshold,
    )


def threshold_sweep(outcomes: Sequence[Outcome], thresholds: Iterable[float]) -> list[Report]:
    return [summarize(outcomes, threshold=t) for t in thresholds]


def best_match_threshold(outcomes: Sequence[Outcome], *, step: float = 0.005) -> float:
    """The `match` threshold that maximises min(answered-right, refusal); ties go to the middle of
    the best plateau, so the chosen value sits as far as possible from both failure sides."""
    grid = [round(i * step, 4) for i in range(int(1 / step) + 1)]
    scored = [(min(r.answered_right, r.refusal), r.threshold) for r in threshold_sweep(outcomes, grid)]
    best = max(value for value, _t in scored)
    plateau = [t for value, t in scored if value == best]
    return plateau[len(plateau) // 2]


def top1_precision_above(outcomes: Sequence[Outcome], threshold: float) -> tuple[float, int]:
    """Among answerable cases whose top score is >= threshold: the share with the right top-1."""
    above = [o for o in outcomes if o.case.answerable and o.top_score >= threshold]
    return _share(sum(o.rank == 1 for o in above), len(above)), len(above)


def confidence_threshold(outcomes: Sequence[Outcome], *, target: float = 0.9, step: float = 0.005) -> float:
    """The lowest score above which top-1 is right at least `target` of the time (unanswerable
    cases count as wrong: a confident answer to them is a wrong answer)."""
    for i in range(int(1 / step) + 1):
        threshold = round(i * step, 4)
        above = [o for o in outcomes if o.top_score >= threshold]
        if above and _share(sum(o.rank == 1 for o in above), len(above)) >= target:
            return threshold
    return 1.0
