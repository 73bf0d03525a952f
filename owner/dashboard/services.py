"""The dashboard's workflows, each a short sequence of the lower apps' services: a bot is written by
`bots.services`, sources, crawls and entries by `knowledge.services` and
`knowledge.importing` (versioned there). Nothing here touches a table directly."""

from __future__ import annotations

from typing import Any, Final
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.text import slugify
from django.utils.translation import gettext as _

from bots.models import Bot
from bots.services import bot_create
from knowledge.crawler import source_crawl
from knowledge.models import CrawlRun, Source
from knowledge.selectors import sources_of
from knowledge.services import source_create

SLUG_MAX: Final = 50
SLUG_TRIES: Final = 50


def slug_candidates(url: str) -> list[str]:
    """«https://www.shop-ru.example/» -> shop-ru-example, shop-ru-example-2, …"""
    host = (urlsplit(url).hostname or "").removeprefix("www.")
    base = slugify(host.replace(".", "-"))[:SLUG_MAX].strip("-") or "bot"
    return [base, *(f"{base}-{n}" for n in range(2, SLUG_TRIES + 1))]


def bot_onboard(*, user: Any, url: str, name: str = "") -> tuple[Bot, CrawlRun]:
    """A new bot for the site at `url` (already checked by dashboard.sitecheck), owned by `user`,
    with the site as its first source and its crawl queued (the task is sent after commit)."""
    host = (urlsplit(url).hostname or url).removeprefix("www.")
    taken = set(Bot.objects.filter(slug__in=slug_candidates(url)).values_list("slug", flat=True))
    for slug in slug_candidates(url):
        if slug in taken:
            continue
        with transaction.atomic():
            try:
                bot, _password = bot_create(slug=slug, site_url=url, name=(name.strip() or host)[:200], owner=user)
            except ValidationError:  # taken a moment ago by someone else: try the next code
                continue
            source = source_create(bot=bot, kind=Source.Kind.SITE, url=url, title=name.strip() or host)
            return bot, source_crawl(source=source)
    # 50 bots for one host: not a case a person meets, but the message must still make sense.
    raise ValidationError(_("Для этого сайта уже слишком много ботов: удалите лишние в администрировании."))


def site_add(*, bot: Bot, url: str) -> CrawlRun:
    """Crawl the site at `url` for `bot`: its existing source of that address, or a new one."""
    with transaction.atomic():
        source = sources_of(bot=bot).filter(kind=Source.Kind.SITE, url=url).first()
        if source is None:
            host = (urlsplit(url).hostname or url).removeprefix("www.")
            source = source_create(bot=bot, kind=Source.Kind.SITE, url=url, title=host)
        return source_crawl(source=source)
