"""What the crawler may fetch (robots.txt) and where a site lists its pages (sitemaps).

Sitemaps are parsed here rather than with ultimate-sitemap-parser: that library does accept a
custom web client (so our SSRF rules and timeouts would apply), but it decompresses up to a fixed
100 MB, retries 5xx answers five times with sleeps, ignores content types, probes a dozen guessed
paths and pickles pages into temp files. A sitemap here is one bounded GET through SafeClient,
a bounded gunzip and lxml with entities and network access off.
"""

from __future__ import annotations

import zlib
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from django.conf import settings
from django.utils.translation import gettext_noop
from lxml import etree
from protego import Protego

from core.http import FetchError, SafeClient, TooLarge, size_text
from core.texts import Text, stored

ROBOTS_MAX_BYTES = 512 * 1024  # RFC 9309 asks crawlers to read at least 500 KiB
SITEMAP_MAX_BYTES = 50 * 1024 * 1024  # the sitemaps.org limit for one uncompressed file
SITEMAP_MAX_FILES = 50
MAX_CRAWL_DELAY = 60.0  # a robots.txt asking for an hour between requests would stall a crawl forever
SITEMAP_TYPES = {"application/xml", "text/xml", "application/gzip", "application/x-gzip",
                 "application/octet-stream", "text/plain", ""}
GZIP_MAGIC = b"\x1f\x8b"


def robots_token() -> str:
    """The product token robots.txt groups are matched against, e.g. "SpravkaBot"."""
    return settings.CRAWL_USER_AGENT.split("/")[0].strip() or "SpravkaBot"


@dataclass
class Robots:
    """The parsed robots.txt of one site; `blocked` (a reason, a stored text) means the whole site is
    off-limits."""

    parser: Protego | None = None
    blocked: Text = ""

    def allows(self, url: str) -> bool:
        if self.blocked:
            return False
        return self.parser is None or bool(self.parser.can_fetch(url, robots_token()))

    def crawl_delay(self) -> float:
        delay = self.parser.crawl_delay(robots_token()) if self.parser else None
        return min(float(delay or 0.0), MAX_CRAWL_DELAY)

    def sitemaps(self) -> list[str]:
        return list(self.parser.sitemaps) if self.parser else []


def robots_fetch(client: SafeClient, origin: str) -> Robots:
    """robots.txt by RFC 9309: missing (4xx) allows everything, a server error (5xx) forbids
    everything for now. Network errors propagate: the site itself is unreachable."""
    try:
        response = client.get(f"{origin}/robots.txt", max_bytes=ROBOTS_MAX_BYTES)
    except TooLarge:
        return Robots()
    if response.status >= 500:
        return Robots(blocked=stored(
            gettext_noop("robots.txt отвечает HTTP %(status)s — сайт просит пока его не обходить"),
            status=response.status))
    if not 200 <= response.status < 300 or response.media_type == "text/html":
        return Robots()  # no robots.txt (an HTML answer is a catch-all page, not rules)
    return Robots(parser=Protego.parse(response.body.decode("utf-8", errors="replace")))


@dataclass
class SitemapResult:
    urls: list[str] = field(default_factory=list)  # page URLs in document order, no repeats
    priorities: dict[str, float] = field(default_factory=dict)  # <priority> where a sitemap gives one
    problems: list[Text] = field(default_factory=list)  # one stored text per sitemap that failed


def gunzip_limited(data: bytes, limit: int) -> bytes:
    """Decompress without ever holding more than `limit` bytes (a small .gz can unpack to gigabytes)."""
    try:
        out = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data, limit + 1)
    except zlib.error as exc:
        raise FetchError(stored(gettext_noop("sitemap.xml.gz повреждён"))) from exc
    if len(out) > limit:
        raise TooLarge(stored(gettext_noop("sitemap больше %(size)s после распаковки"), size=size_text(limit)))
    return out


def sitemap_parse(body: bytes, priorities: dict[str, float] | None = None) -> tuple[str, list[str]]:
    """("urlset" | "sitemapindex" | other root name, the <loc> of each entry). Entities are not
    expanded and nothing is loaded from the network; `recover` reads slightly broken files."""
    parser = etree.XMLParser(resolve_entities=False, no_network=True, huge_tree=False, recover=True,
                             remove_comments=True, remove_pis=True)
    try:
        root = etree.fromstring(body, parser)
    except etree.XMLSyntaxError:
        return "", []
    if root is None:
        return "", []
    kind = etree.QName(root).localname
    item = "sitemap" if kind == "sitemapindex" else "url"
    locs = []
    for entry in root.iterchildren(f"{{*}}{item}"):
        loc = entry.find("{*}loc")
        if loc is not None and loc.text and loc.text.strip():
            locs.append(loc.text.strip())
            if priorities is not None:
                _note_priority(priorities, locs[-1], entry.find("{*}priority"))
    return kind, locs


def _note_priority(priorities: dict[str, float], url: str, element: Any) -> None:
    """sitemaps.org: 0.0..1.0, default 0.5; anything else is ignored."""
    try:
        value = float((element.text or "").strip()) if element is not None else None
    except ValueError:
        return
    if value is not None and 0.0 <= value <= 1.0:
        priorities[url] = value


def _only_sitemap_types(_status: int, headers: httpx.Headers) -> None:
    media = headers.get("content-type", "").split(";")[0].strip().lower()
    if media not in SITEMAP_TYPES:
        raise FetchError(stored(gettext_noop("не XML (%(media)s)"), media=media))


def _sitemap_body(client: SafeClient, url: str) -> bytes:
    response = client.get(url, max_bytes=settings.CRAWL_MAX_PAGE_BYTES, check_headers=_only_sitemap_types)
    if response.status != 200:
        raise FetchError(stored(gettext_noop("HTTP %(status)s"), status=response.status))
    body = response.body
    return gunzip_limited(body, SITEMAP_MAX_BYTES) if body.startswith(GZIP_MAGIC) else body


def sitemap_collect(
    client: SafeClient, sitemap_urls: list[str], *, accept: Callable[[str], bool], limit: int,
) -> SitemapResult:
    """Page URLs from sitemaps and the sitemap indexes they point to (same site only, bounded in
    files and pages). Each unreadable sitemap becomes a problem line, never an exception."""
    result = SitemapResult()
    queue = deque(url for url in sitemap_urls if accept(url))
    seen: set[str] = set()
    pages: dict[str, None] = {}
    while queue and len(seen) < SITEMAP_MAX_FILES and len(pages) < limit:
        url = queue.popleft()
        if url in seen:
            continue
        seen.add(url)
        try:
            kind, locs = sitemap_parse(_sitemap_body(client, url), result.priorities)
        except FetchError as exc:
            result.problems.append(stored(gettext_noop("%(url)s: %(reason)s"), url=url, reason=exc.text))
            continue
        if kind == "sitemapindex":
            queue.extend(loc for loc in locs if accept(loc))
        elif kind == "urlset":
            pages.update((loc, None) for loc in locs if accept(loc))
        else:
            result.problems.append(
                stored(gettext_noop("%(url)s: это не sitemap (нет <urlset> или <sitemapindex>)"), url=url))
    result.urls = list(pages)[:limit]
    return result
