"""kill -9 of the Celery worker in the middle of a crawl of a local site, then a new worker: the crawl
finishes (acks_late redelivers the task; the run's heartbeat is gone, so the new worker crawls it
again: knowledge/runclaims.py), every page is stored once with all its entries, none twice, and a
page is never half-written (its row and its entries are one transaction) — checked right after the
kill and at the end. The worker, its broker and cache are the fleet's own Redis
(tests/faults/crawls.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from core.texts import russian
from knowledge.crawler import RESUMED
from knowledge.models import CrawlRun
from tests.faults.crawls import KILL_AFTER, crawl_around_a_kill
from tests.faults.harness import Fleet
from tests.knowledge.sites import Site

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def site() -> Iterator[Site]:
    site = Site().start()
    yield site
    site.stop()


async def test_a_crawl_whose_worker_was_killed_finishes_on_the_next_worker_with_every_page_whole_and_once(
    fleet: Fleet, bot, site: Site
):
    outcome = await asyncio.to_thread(crawl_around_a_kill, fleet, bot=bot, site=site, kill=True)

    at_kill, at_end = outcome.at_kill, outcome.at_end
    assert at_kill is not None and KILL_AFTER <= at_kill.pages < outcome.pages, "killed mid-crawl"
    assert at_kill.half_written == [] and at_kill.duplicates == 0
    assert outcome.status == CrawlRun.Status.DONE, outcome.message
    assert outcome.message.startswith(russian(RESUMED))  # the second worker crawled it again, and says so
    assert at_end.pages == outcome.pages and at_end.half_written == [] and at_end.duplicates == 0
    assert at_end.entries == outcome.expected_entries
    assert outcome.fetched + outcome.unchanged == outcome.pages and outcome.failed == 0
    assert outcome.unchanged >= KILL_AFTER  # what the first worker stored was not written again
    assert outcome.tracebacks == 0
