"""`manage.py runroute review_reply SLUG [--limit N]`: reply drafts for the bot's reviews that have
no run yet, oldest first, one line per review and a summary."""

from __future__ import annotations

from collections import Counter
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils.translation import gettext as _

from bots.models import Bot
from routes.declarations import ROUTES, RouteRejected
from routes.models import CustomerReview
from routes.review_reply import review_reply_run

RUNNERS = {"review_reply"}


class Command(BaseCommand):
    # A str, not a lazy text: argparse wants one (a command runs in one language: SPRAVKA_LANGUAGE).
    help = _("Запустить маршрут для бота (сейчас: review_reply — ответы на отзывы без прогона).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("route")
        parser.add_argument("slug")
        parser.add_argument("--limit", type=int, default=None, help=_("не больше N отзывов"))

    def handle(self, *args: Any, **options: Any) -> None:
        route = options["route"]
        if route not in RUNNERS:
            known = ", ".join(sorted(RUNNERS))
            if route in ROUTES:
                message = _("Маршрут «%(route)s» объявлен, но запускается не отсюда. Запускаемые: %(known)s.")
            else:
                message = _("Маршрут «%(route)s» не объявлен. Запускаемые: %(known)s.")
            raise CommandError(message % {"route": route, "known": known})
        bot = Bot.objects.filter(slug=options["slug"]).first()
        if bot is None:
            raise CommandError(_("Бота с кодом «%(slug)s» нет.") % {"slug": options["slug"]})
        limit = options["limit"]
        if limit is not None and limit < 1:
            raise CommandError(_("--limit должен быть не меньше 1."))
        reviews = CustomerReview.objects.filter(bot=bot, runs__isnull=True).select_related("bot").order_by("id")
        todo = list(reviews[:limit] if limit else reviews)
        if not todo:
            self.stdout.write(_("Отзывов без ответа нет."))
            return
        counts: Counter[str] = Counter()
        for number, review in enumerate(todo, start=1):
            try:
                run = review_reply_run(review=review)
            except RouteRejected as exc:
                raise CommandError(_("Маршрут отвергнут: %(reason)s") % {"reason": exc}) from exc
            counts[run.get_status_display()] += 1
            score = "—" if run.score is None else f"{run.score:.2f}"
            manual = " " + _("(вручную)") if run.manual else ""
            self.stdout.write(f"[{number}/{len(todo)}] " + _(
                "отзыв %(review)s: прогон %(run)s, %(status)s%(manual)s, оценка %(score)s, ремонтов %(repairs)s") % {
                "review": review.pk, "run": run.pk, "status": run.get_status_display(), "manual": manual,
                "score": score, "repairs": run.repairs})
        self.stdout.write(_("Итого: %(counts)s") % {
            "counts": ", ".join(f"{name} — {count}" for name, count in counts.most_common())})
