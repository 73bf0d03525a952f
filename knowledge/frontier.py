"""Which page the crawler fetches next: the pages visitors ask about first.

A polite crawl of a big site takes a quarter of an hour or more (one request a second), and every
page is answerable the moment it is stored, so the order decides what the bot can answer in its
first minutes. Order, most important first:
1. the topic of the address: delivery, payment, returns, contacts, FAQ, support, prices, warranty
   (Russian words, their transliterations and English, in any segment of the path);
2. the sitemap's <priority> (0.5 when it gives none);
3. depth: clicks from the start page for a discovered link, path segments for a sitemap address;
4. the order of discovery (stable, so a crawl is repeatable).
"""

from __future__ import annotations

import heapq
import itertools
import re
from urllib.parse import unquote, urlsplit

# Stems, matched at the start of a path segment's words: "dostavka-i-oplata", "faq", "refund".
TOPICS = re.compile(
    r"(?:^|[/_\-.])(?:"
    r"dostav|delivery|shipping|доставк|"
    r"oplat|payment|pay\b|billing|оплат|"
    r"vozvrat|obmen|return|refund|exchange|возврат|обмен|"
    r"kontakt|contact|контакт|"
    r"faq|voprosy|vopros|questions|вопрос|"
    r"help|support|podderzhk|помощь|поддержк|"
    r"garanti|warranty|гарант|"
    r"ceny|price|pricing|tarif|цены|тариф|"
    r"about|o-nas|o-kompanii|о-нас|о-компании|rekvizit|requisites|реквизит"
    r")",
    re.IGNORECASE,
)
DEFAULT_PRIORITY = 0.5


def topic_tier(url: str) -> int:
    """0 for an address about what visitors ask (see TOPICS), 1 otherwise."""
    path = unquote(urlsplit(url).path).lower()
    return 0 if TOPICS.search(path) else 1


def path_depth(url: str) -> int:
    return len([part for part in urlsplit(url).path.split("/") if part])


class Frontier:
    """A priority queue of URLs (each URL once: the caller keeps `seen`)."""

    def __init__(self) -> None:
        self._heap: list[tuple[int, float, int, int, str]] = []
        self._order = itertools.count()

    def push(self, url: str, *, depth: int | None = None, priority: float | None = None) -> None:
        depth = path_depth(url) if depth is None else min(depth, path_depth(url))
        rank = DEFAULT_PRIORITY if priority is None else priority
        heapq.heappush(self._heap, (topic_tier(url), -rank, depth, next(self._order), url))

    def pop(self) -> tuple[str, int]:
        """(url, depth) of the most important waiting URL."""
        _tier, _rank, depth, _n, url = heapq.heappop(self._heap)
        return url, depth

    def clear(self) -> None:
        self._heap.clear()

    def __len__(self) -> int:
        return len(self._heap)

    def __bool__(self) -> bool:
        return bool(self._heap)
