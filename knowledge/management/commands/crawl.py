"""`manage.py crawl SLUG [--url URL] [--max-pages N]`: crawl in this process, to the end, no
worker needed; a progress bar on a terminal, then a summary a shop owner can read."""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _
from tqdm import tqdm

from bots.exceptions import BotNotFound
from bots.models import Bot
from bots.selectors import bot_by_slug
from knowledge.crawler import crawl_source
from knowledge.extract import normalize_url
from knowledge.models import CrawlRun, Source
from knowledge.runs import run_start
from knowledge.services import source_get_or_create

CRAWLABLE = (Source.Kind.SITE, Source.Kind.SITEMAP)


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise ValueError(value)
    return number


class ProgressBar:
    """tqdm over pages, then over embeddings; silent when stdout is not a terminal (logs, CI)."""

    def __init__(self, label: str) -> None:
        self.bar = tqdm(total=0, desc=label, unit=_("стр"), file=sys.stderr, disable=not sys.stdout.isatty(),
                        leave=False)
        self.embedding = False

    def __call__(self, run: CrawlRun) -> None:
        if run.status == CrawlRun.Status.EMBEDDING and not self.embedding:
            self.embedding = True
            self.bar.unit = _("зап")
            self.bar.set_description(_("Векторы"), refresh=False)
            self.bar.reset(total=run.embeddings_total)
        done, total = (
            (run.embeddings_done, run.embeddings_total) if self.embedding else (run.pages_done, run.pages_total)
        )
        self.bar.total = max(total, done)
        self.bar.n = done
        self.bar.refresh()

    def close(self) -> None:
        self.bar.close()


class Command(BaseCommand):
    # A str, not a lazy text: argparse wants one (a command runs in one language: SPRAVKA_LANGUAGE).
    help = _("Обойти сайт бота и обновить знания: crawl SLUG [--url URL] [--max-pages N]")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help=_("код бота"))
        parser.add_argument("--url", default="", help=_("адрес сайта; без него — все источники-сайты бота"))
        parser.add_argument("--max-pages", type=_positive, default=None, help=_("не больше N страниц"))
        parser.add_argument("--no-embed", action="store_true", help=_("не считать векторы сейчас (посчитает "
                            "следующий обход или задача embed_bot)"))

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            bot = bot_by_slug(options["slug"])
        except BotNotFound as exc:
            raise CommandError(str(exc)) from exc
        failures = []
        for source in self.sources(bot, options["url"]):
            run = self.crawl(source, options["max_pages"], embed=not options["no_embed"])
            if run.status == CrawlRun.Status.FAILED:
                failures.append(f"{source.url}: {run.message_shown}")
        if failures:
            raise CommandError(_("Обход не удался.") + " " + " ".join(failures))

    def sources(self, bot: Bot, url: str) -> list[Source]:
        if url:
            return [source_get_or_create(bot=bot, kind=Source.Kind.SITE, url=self.checked_url(url))]
        sources = list(bot.sources.filter(kind__in=CRAWLABLE).order_by("pk"))
        if sources:
            return sources
        if not bot.site_url:
            raise CommandError(_("У бота «%(slug)s» не указан адрес сайта. Укажите его: --url https://…") % {
                "slug": bot.slug})
        return [source_get_or_create(bot=bot, kind=Source.Kind.SITE, url=self.checked_url(bot.site_url))]

    def checked_url(self, url: str) -> str:
        normalized = normalize_url(url)
        if not normalized:
            raise CommandError(
                _("Неправильный адрес сайта: «%(url)s». Нужен адрес вида https://shop.ru/") % {"url": url})
        return normalized

    def crawl(self, source: Source, max_pages: int | None, *, embed: bool) -> CrawlRun:
        run = run_start(source=source)
        bar = ProgressBar(_("Страницы"))
        try:
            crawl_source(run=run, max_pages=max_pages, progress=bar, embed=embed)
        finally:
            bar.close()
        self.summary(run, embed=embed)
        return run

    def summary(self, run: CrawlRun, *, embed: bool) -> None:
        ok = run.status == CrawlRun.Status.DONE
        status = self.style.SUCCESS(_("готово")) if ok else self.style.ERROR(_("ошибка"))
        self.stdout.write(_("Обход %(url)s — %(status)s") % {"url": run.source.url, "status": status})
        self.stdout.write(_("Страницы: загружено %(fetched)s, без изменений %(unchanged)s, пропущено %(skipped)s, "
                            "с ошибкой %(failed)s") % {"fetched": run.fetched, "unchanged": run.unchanged,
                                                       "skipped": run.skipped, "failed": run.failed})
        if ok and run.message_shown:
            for line in run.message_shown.splitlines():
                self.stdout.write(f"  {line}")
        self.stdout.write(_("Записи: создано %(created)s, обновлено %(updated)s, отключено %(deactivated)s") % {
            "created": run.entries_created, "updated": run.entries_updated, "deactivated": run.entries_deactivated})
        if ok and embed:
            self.stdout.write(_("Векторы: %(done)s из %(total)s") % {"done": run.embeddings_done,
                                                                   "total": run.embeddings_total})
