"""Onboarding's first look at a site, before a bot exists: is the address a web site we may
reach, what does its robots.txt allow, which sitemaps list how many pages. Every request goes
through the crawler's SafeClient (SSRF rules, time and size limits) and the crawler's own
robots.txt and sitemap readers (knowledge/discovery.py), so the check and the crawl that follows
cannot disagree about what is allowed.

Messages are for a shop owner, in Russian through gettext; the reasons the knowledge layer gives
(«соединение отклонено», a private address) are quoted after them, in the same language."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Final
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from core.http import AddressRefused, FetchError, SafeClient, TooLarge
from core.ratelimit import Limit, hit_sync
from core.texts import shown
from core.validators import validate_web_url
from knowledge.discovery import Robots, robots_fetch, sitemap_collect
from knowledge.extract import normalize_url, site_key

HTML_TYPES: Final = frozenset({"text/html", "application/xhtml+xml"})
PAGE_MAX_BYTES: Final = 2 * 1024 * 1024


@dataclass
class SiteCheck:
    """What the owner sees after «Проверить сайт». `error` set: nothing can be crawled."""

    url: str
    error: str = ""
    robots_found: bool = False
    crawl_delay: float = 0.0
    sitemaps: list[str] = field(default_factory=list)
    sitemap_pages: int = 0
    sitemap_problems: list[str] = field(default_factory=list)
    title: str = ""

    @property
    def ok(self) -> bool:
        return not self.error


def start_url(raw: str) -> str:
    """The address the owner typed as a crawl's start page; «shop.ru» reads as https://shop.ru/.
    ValidationError with a message a person understands when it is not a web address."""
    text = (raw or "").strip()
    if not text:
        raise ValidationError(_("Укажите адрес сайта, например https://shop.ru/"))
    if "://" not in text:
        text = f"https://{text}"
    url = None if any(ch.isspace() for ch in text) else normalize_url(text)
    if url is None or len(url) > 500:
        raise ValidationError(
            _("«%(value)s» — не адрес сайта. Нужен адрес вида https://shop.ru/") % {"value": raw[:200]}
        )
    try:
        validate_web_url(url)
    except ValidationError as exc:
        raise ValidationError(" ".join(exc.messages)) from exc
    return url


class SiteChecksLimited(Exception):
    """Too many site checks by one person in SITECHECK_RATE_WINDOW; `.message` says when to retry."""

    def __init__(self, retry_after: int) -> None:
        self.retry_after = max(1, retry_after)
        minutes = math.ceil(self.retry_after / 60)
        self.message = _("Слишком много проверок сайта подряд. Следующая — через %(minutes)d мин.") % {
            "minutes": minutes}
        super().__init__(self.message)


def site_check_count(*, user_id: int | str | None) -> None:
    """Count one site check by this person (each fetches a robots.txt, a page and sitemaps from an
    address they typed, so a script could make us fetch from anywhere in a loop): the widget's
    fixed windows in Redis (core/ratelimit.py), SITECHECK_RATE_USER checks per
    SITECHECK_RATE_WINDOW seconds; SiteChecksLimited past it. A Redis that cannot be reached lets
    the check through (logged), as the widget's limits do; 0 switches the limit off."""
    limit = Limit("sitecheck-user", str(user_id), settings.SITECHECK_RATE_USER, settings.SITECHECK_RATE_WINDOW)
    if limit.limit <= 0:
        return
    retry_after = hit_sync([limit], what="site checks")
    if retry_after is not None:
        raise SiteChecksLimited(retry_after)


def site_check(*, url: str) -> SiteCheck:
    """Fetch robots.txt, the start page and the sitemaps of `url` (already `start_url`-clean)."""
    result = SiteCheck(url=url)
    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}"
    with SafeClient(timeout=min(settings.CRAWL_TIMEOUT, 10.0)) as client:
        try:
            robots = robots_fetch(client, origin)
            if robots.blocked:
                result.error = _("Сайт просит его пока не обходить: %(reason)s") % {"reason": shown(robots.blocked)}
                return result
            if not robots.allows(url):
                result.error = _("robots.txt сайта запрещает обход этой страницы. Разрешите SpravkaBot в "
                                 "robots.txt или укажите другую страницу.")
                return result
            _check_page(client, url, result)
        except AddressRefused as exc:
            result.error = _("Этот адрес ведёт во внутреннюю сеть, такие адреса не обходятся (%(reason)s). "
                             "Укажите публичный адрес сайта.") % {"reason": exc.reason}
            return result
        except FetchError as exc:
            result.error = _("Сайт недоступен: %(reason)s. Проверьте адрес и что сайт открывается в "
                             "браузере.") % {"reason": exc.reason}
            return result
        if result.error:
            return result
        _note_robots(robots, result)
        _check_sitemaps(client, robots, origin, url, result)
    return result


def _check_page(client: SafeClient, url: str, result: SiteCheck) -> None:
    try:
        response = client.get(url, max_bytes=PAGE_MAX_BYTES)
    except TooLarge:
        return  # a very large home page is still a page; the crawler has its own limit
    if response.status >= 400:
        result.error = _("Страница %(url)s отвечает HTTP %(status)s. Укажите адрес страницы, которая "
                         "открывается.") % {"url": url, "status": response.status}
    elif response.media_type not in HTML_TYPES:
        result.error = _("По адресу %(url)s не веб-страница, а «%(type)s». Укажите адрес сайта, например "
                         "его главную страницу.") % {"url": url, "type": response.media_type or "?"}
    else:
        result.title = _page_title(response.body)


def _note_robots(robots: Robots, result: SiteCheck) -> None:
    result.robots_found = robots.parser is not None
    result.crawl_delay = robots.crawl_delay()


def _check_sitemaps(client: SafeClient, robots: Robots, origin: str, url: str, result: SiteCheck) -> None:
    """The sitemaps the crawl will read: those robots.txt names, else /sitemap.xml if allowed."""
    listed = robots.sitemaps()
    candidates = listed or [f"{origin}/sitemap.xml"]
    if not listed and not robots.allows(candidates[0]):
        return
    site = site_key(url)

    def same_site(candidate: str) -> bool:
        normalized = normalize_url(candidate)
        return normalized is not None and site_key(normalized) == site

    found = sitemap_collect(client, candidates, accept=same_site, limit=settings.CRAWL_MAX_PAGES)
    result.sitemap_pages = len(found.urls)
    result.sitemaps = candidates if (found.urls or listed) else []
    # A guessed /sitemap.xml that is simply missing is not a problem worth showing.
    result.sitemap_problems = [shown(problem) for problem in found.problems] if listed else []


def _page_title(body: bytes) -> str:
    from lxml import etree, html

    try:
        titles = html.fromstring(body[:PAGE_MAX_BYTES]).xpath("//title/text()")
    except (etree.ParserError, ValueError):  # an empty or unreadable page has no title
        return ""
    return " ".join(str(titles[0]).split())[:200] if titles else ""
