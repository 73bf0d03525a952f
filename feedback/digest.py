"""The weekly digest (the «missed-questions digest»): one e-mail per bot to its owners, HTML and
text, in the bot's language: conversations, answered share, handoffs, the review queue with a link, top gaps."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from typing import Any, Final

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.db import IntegrityError, transaction
from django.db.models import Count
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import formats, timezone, translation
from django.utils.translation import gettext as _

from bots.models import Bot, Membership
from feedback.gaps import gaps_refresh
from feedback.models import DigestLog, Gap, GapQuestion, Outcome
from feedback.outcomes import outcomes_refresh
from review.selectors import pending_count

TOP_GAPS: Final = 5


def digest_period(today: date | None = None) -> tuple[date, date]:
    """The week the digest reports: the last full Monday..Sunday before `today`."""
    today = today or timezone.localdate()
    start = today - timedelta(days=today.weekday() + 7)
    return start, start + timedelta(days=6)


def digest_context(*, bot: Bot, start: date, end: date) -> dict[str, Any]:
    tz = timezone.get_current_timezone()
    since = datetime.combine(start, time.min, tz)
    until = since + timedelta(days=(end - start).days + 1)
    outcomes = dict(Outcome.objects.filter(bot=bot, started_at__gte=since, started_at__lt=until)
                    .values_list("kind").annotate(n=Count("id")).values_list("kind", "n"))
    total = sum(outcomes.values())
    answered = outcomes.get(Outcome.Kind.ANSWERED, 0)
    handed = (Outcome.Kind.HANDED_OFF, Outcome.Kind.OPERATOR_CLOSED, Outcome.Kind.LEAD)
    handoffs = sum(outcomes.get(k, 0) for k in handed)
    week_counts = dict(GapQuestion.objects.filter(bot=bot, asked_at__gte=since, asked_at__lt=until)
                       .values_list("gap_id").annotate(n=Count("id")).values_list("gap_id", "n"))
    top = list(Gap.objects.filter(pk__in=list(week_counts), status=Gap.Status.OPEN))
    top.sort(key=lambda g: (-week_counts[g.pk], -g.count))
    base = settings.SPRAVKA_PUBLIC_URL
    return {
        "bot": bot, "start": start, "end": end, "conversations": total, "answered": answered,
        "answered_share": round(100 * answered / total) if total else None, "handoffs": handoffs,
        "abandoned": outcomes.get(Outcome.Kind.ABANDONED, 0), "queue": pending_count(bot=bot),
        "queue_url": f"{base}{reverse('admin:review_reviewitem_changelist')}?bot={bot.pk}",
        "gaps_url": f"{base}{reverse('admin:feedback_gap_changelist')}?bot={bot.pk}",
        "stats_url": f"{base}{reverse('admin:feedback_outcome_changelist')}?bot={bot.pk}",
        "gaps": [{"title": g.title, "week": week_counts[g.pk], "total": g.count} for g in top[:TOP_GAPS]],
    }


def owner_emails(bot: Bot) -> list[str]:
    rows = Membership.objects.filter(bot=bot, role=Membership.Role.OWNER).select_related("user")
    return sorted({m.user.email for m in rows if m.user.email and m.user.is_active})


def digest_send(*, bot: Bot, today: date | None = None, once: bool = False) -> int:
    """Send last week's digest to the bot's owners; returns how many people it went to. With
    `once` (the weekly task), a week already sent is not sent again, even if the task runs twice."""
    start, end = digest_period(today)
    recipients = owner_emails(bot)
    if not recipients:
        return 0
    if once:
        try:
            with transaction.atomic():
                DigestLog.objects.create(bot=bot, period_start=start, recipients=recipients)
        except IntegrityError:
            return 0
    else:
        DigestLog.objects.get_or_create(bot=bot, period_start=start, defaults={"recipients": recipients})
    gaps_refresh(bot=bot)
    outcomes_refresh(bot=bot)
    context = digest_context(bot=bot, start=start, end=end)
    with translation.override(bot.language):  # owners read the digest in their bot's language
        subject = _("Spravka: неделя %(start)s–%(end)s у «%(name)s»") % {
            "start": formats.date_format(start, "SHORT_DATE_FORMAT"),
            "end": formats.date_format(end, "SHORT_DATE_FORMAT"), "name": bot.name}
        text, html = (render_to_string(f"feedback/digest.{ext}", context) for ext in ("txt", "html"))
    message = EmailMultiAlternatives(subject=subject, body=text, from_email=settings.DEFAULT_FROM_EMAIL, to=recipients)
    message.attach_alternative(html, "text/html")
    message.send()
    return len(recipients)
