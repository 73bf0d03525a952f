"""Retrieval metrics: plain functions, checked on hand-made outcomes."""

from __future__ import annotations

import pytest

from knowledge.evaluation import (
    Case,
    Outcome,
    best_match_threshold,
    case_from_dict,
    confidence_threshold,
    outcome_of,
    percentile,
    rank_of,
    summarize,
    url_path,
)
from knowledge.search import SearchResult


def result(url: str, score: float) -> SearchResult:
    return SearchResult(entry_id=0, url=url, title="", text="", kind="chunk", score=score)


def outcome(rank: int | None, score: float, *, answerable: bool = True) -> Outcome:
    case = Case(question="q", expected_urls=("/a/",) if answerable else (), answerable=answerable)
    return Outcome(case=case, rank=rank, top_score=score, latency_ms=1.0)


def test_urls_match_by_path_whatever_the_host_anchor_or_trailing_slash() -> None:
    assert url_path("http://127.0.0.1:8001/delivery/moscow/#sroki") == "/delivery/moscow/"
    assert url_path("/delivery/moscow") == "/delivery/moscow/"
    assert url_path("http://shop.example") == "/"


def test_rank_is_the_first_result_on_an_expected_page() -> None:
    urls = ["http://h/faq/", "http://h/pickup/#a", "http://h/pickup/"]
    assert rank_of(urls, ["/pickup/", "/contacts/"]) == 2
    assert rank_of(urls, ["/returns/"]) is None


def test_a_case_takes_one_or_several_expected_urls_and_defaults_answerable_by_them() -> None:
    assert case_from_dict({"question": "q", "expected_url": "/a/"}).expected_urls == ("/a/",)
    many = case_from_dict({"question": "q", "expected_urls": ["/a/", "/b/"], "answerable": True})
    assert many.expected_urls == ("/a/", "/b/")
    assert case_from_dict({"question": "q", "answerable": False}).answerable is False
    with pytest.raises(ValueError):
        case_from_dict({"question": "q", "answerable": True})


def test_an_unanswerable_case_has_no_rank() -> None:
    case = Case(question="q", expected_urls=(), answerable=False)
    assert outcome_of(case, [result("/a/", 0.9)]).rank is None


def test_summary_counts_hits_mrr_answered_right_and_refusals_at_one_threshold() -> None:
    outcomes = [
        outcome(1, 0.9), outcome(2, 0.8), outcome(4, 0.9), outcome(None, 0.2), outcome(1, 0.3),
        outcome(None, 0.7, answerable=False), outcome(None, 0.1, answerable=False),
    ]
    report = summarize(outcomes, threshold=0.5)
    assert report.answerable == 5 and report.unanswerable == 2
    assert report.hit1 == pytest.approx(2 / 5)
    assert report.hit3 == pytest.approx(3 / 5)
    assert report.mrr == pytest.approx((1 + 0.5 + 0.25 + 0 + 1) / 5)
    assert report.answered_right == pytest.approx(2 / 5)  # rank<=3 and score>=0.5: the first two
    assert report.refusal == pytest.approx(1 / 2)


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 50) == 50.0
    assert percentile(values, 95) == 95.0
    assert percentile([], 95) == 0.0


def test_the_match_threshold_sits_between_right_answers_and_unanswerable_questions() -> None:
    outcomes = [outcome(1, s) for s in (0.6, 0.7, 0.8)] + [outcome(None, s, answerable=False) for s in (0.2, 0.3)]
    threshold = best_match_threshold(outcomes)
    assert 0.3 < threshold <= 0.6
    report = summarize(outcomes, threshold=threshold)
    assert report.answered_right == 1.0 and report.refusal == 1.0


def test_confidence_is_where_top_1_becomes_reliable() -> None:
    outcomes = [outcome(2, 0.5), outcome(2, 0.55), outcome(1, 0.6), outcome(1, 0.7), outcome(1, 0.8)]
    assert confidence_threshold(outcomes, target=0.9) == pytest.approx(0.56, abs=0.01)
