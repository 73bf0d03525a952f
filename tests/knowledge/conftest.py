"""Fixtures for the crawler tests: a local web site per test and a one-call crawl."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from knowledge.models import CrawlRun, Source
from tests.knowledge.sites import Site

RunCrawl = Callable[..., CrawlRun]


@pytest.fixture
def crawl_settings(settings: Any) -> Any:
    """Local sites need private addresses allowed, and no politeness delay. tests/conftest.py sets
    these through the environment, but pytest-django has imported the settings by then, so the
    crawler tests set them here as well."""
    settings.CRAWL_ALLOW_PRIVATE = True
    settings.CRAWL_DELAY = 0.0
    return settings


@pytest.fixture
def shop_site(crawl_settings: Any) -> Iterator[Site]:
    """An empty site on 127.0.0.1; the test fills `shop_site.routes`."""
    site = Site().start()
    try:
        yield site
    finally:
        site.stop()


@pytest.fixture
def site_source(bot: Any, shop_site: Site) -> Source:
    return Source.objects.create(bot=bot, kind=Source.Kind.SITE, url=shop_site.url("/"), title="Сайт")


@pytest.fixture
def run_crawl(site_source: Source) -> RunCrawl:
    """Crawl a source to the end in this thread. Embedding is off unless asked for: most tests are
    about pages and entries, and vectors are slow."""
    from knowledge.crawler import crawl_source

    def run(source: Source | None = None, **options: Any) -> CrawlRun:
        options.setdefault("embed", False)
        target = source or site_source
        crawl = CrawlRun.objects.create(bot_id=target.bot_id, source=target)
        return crawl_source(run=crawl, **options)

    return run
