"""A bot's monthly budget for model calls: over it, the bot answers from its knowledge base only.

The chain asks `over_budget(bot)` once per model question; that must stay cheap at any volume of
billing lines, so nothing here sums the month's rows per turn:
- a bot without a budget costs one cache read and no query;
- the month's spending lives in the cache as whole micro-dollars (`_spent_key`), summed from
  `Usage` once when missing and then moved by `spent_add` with every billing line written
  (journal.usage_record): an atomic INCR, no read-modify-write race between workers; the key
  expires after an hour, so a line the cache missed (written between the sum and its store) is
  counted again within the hour: the figure never drifts for long;
- the limit is the Bot row's, but a socket keeps its Bot instance for hours: `budget_set` also
  puts the new limit in the cache (`_limit_key`, a week), and that wins over a stale instance.

Months are calendar months in the installation's time zone (settings.TIME_ZONE): a billing line
is counted into its month without looking up its bot. The owners get one e-mail per month when
the budget is first found spent: claimed atomically on the bot row (bots.services), sent by a
Celery task after commit, never inside the visitor's turn.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass
from decimal import Decimal
from typing import Final

from celery import shared_task
from django.core.cache import cache
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from bots.models import Bot
from llm.models import Usage

log = logging.getLogger("spravka.llm")

MICRO: Final = Decimal(1_000_000)
SPENT_SECONDS: Final = 3600
LIMIT_SECONDS: Final = 7 * 86400
ALERTED_SECONDS: Final = 40 * 86400
_NO_LIMIT: Final = "none"


@dataclass(frozen=True)
class BudgetStatus:
    month: str  # "2026-12"
    spent: Decimal  # USD, this month so far
    limit: Decimal | None  # USD; None: no budget set

    @property
    def over(self) -> bool:
        return self.limit is not None and self.spent >= self.limit

    @property
    def share(self) -> float | None:
        """Spent / limit (may exceed 1); None without a budget, 1 for a budget of 0."""
        if self.limit is None:
            return None
        if self.limit <= 0:
            return 1.0
        return float(self.spent / self.limit)


def month_start(now: dt.datetime | None = None) -> dt.datetime:
    """The first moment of the current calendar month (installation time zone), aware."""
    local = timezone.localtime(now or timezone.now())
    return local.replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def month_label(now: dt.datetime | None = None) -> str:
    return month_start(now).strftime("%Y-%m")


def _spent_key(bot_id: int, month: str) -> str:
    return f"llm:spent:{bot_id}:{month}"


def _limit_key(bot_id: int) -> str:
    return f"llm:budget:{bot_id}"


def month_spent(bot: Bot, now: dt.datetime | None = None) -> Decimal:
    """What the bot's model calls cost this month (USD), from the cache; summed once when missing."""
    key = _spent_key(bot.pk, month_label(now))
    micro = cache.get(key)
    if micro is None:
        total = Usage.objects.filter(bot_id=bot.pk, created_at__gte=month_start(now)).aggregate(
            total=Sum("cost_usd"))["total"] or Decimal(0)
        micro = int(total * MICRO)
        cache.add(key, micro, SPENT_SECONDS)
    return Decimal(int(micro)) / MICRO


def spent_add(*, bot_id: int, cost: Decimal, at: dt.datetime) -> None:
    """Count one billing line into its month's cached total, if that total is cached (otherwise
    the next `month_spent` sums the rows, this one included). Never fails the caller."""
    if not cost:
        return
    try:
        cache.incr(_spent_key(bot_id, month_label(at)), int(cost * MICRO))
    except ValueError:
        pass  # not cached: nothing to move
    except Exception:  # the cache is down: the figure is recomputed when it is back
        log.warning("budget: could not count a billing line of bot %s", bot_id, exc_info=True)


def _limit_of(bot: Bot, cached: object) -> Decimal | None:
    if cached is None:
        return bot.monthly_budget_usd
    return None if cached == _NO_LIMIT else Decimal(str(cached))


def budget_limit(bot: Bot) -> Decimal | None:
    """The bot's monthly budget: the one `budget_set` cached, else the instance's."""
    return _limit_of(bot, cache.get(_limit_key(bot.pk)))


def _status(bot: Bot, now: dt.datetime | None, *, need_spent: bool) -> BudgetStatus | None:
    """Limit and spent in one cache round trip; the month's rows are summed only when the total is
    not cached, and not at all for a bot without a budget unless `need_spent` (None then)."""
    month = month_label(now)
    limit_key, spent_key = _limit_key(bot.pk), _spent_key(bot.pk, month)
    cached = cache.get_many([limit_key, spent_key])
    limit = _limit_of(bot, cached.get(limit_key))
    micro = cached.get(spent_key)
    if limit is None and micro is None and not need_spent:
        return None
    spent = Decimal(int(micro)) / MICRO if micro is not None else month_spent(bot, now)
    return BudgetStatus(month=month, spent=spent, limit=limit)


def budget_status(bot: Bot, now: dt.datetime | None = None) -> BudgetStatus:
    status = _status(bot, now, need_spent=True)
    assert status is not None
    return status


def over_budget(bot: Bot) -> bool:
    """The chain's one check: True when the month's budget is spent, and then the model is not
    asked. The first time in a month it is found spent, the owners' e-mail is queued."""
    try:
        status = _status(bot, None, need_spent=False)
    except Exception:  # the cache is down: answering with the model beats refusing to
        log.warning("budget: could not check bot %s", bot.pk, exc_info=True)
        return False
    if status is None or not status.over:
        return False
    _alert_once(bot, status)
    return True


def _alert_once(bot: Bot, status: BudgetStatus) -> None:
    from bots.services import bot_budget_alert_claim

    if not cache.add(f"llm:budget-alerted:{bot.pk}:{status.month}", 1, ALERTED_SECONDS):
        return  # this process or another already claimed it this month
    if bot_budget_alert_claim(bot_id=bot.pk, month=status.month):
        transaction.on_commit(lambda: budget_alert_send.delay(bot.pk, status.month))


def budget_set(*, bot: Bot, limit: Decimal | None) -> Bot:
    """Set (or, with None, remove) the bot's monthly budget; effective on the next message.
    A raised budget that is no longer spent lets the month's e-mail go again when it is."""
    from bots.services import bot_budget_set, budget_value

    limit = budget_value(limit)
    rearm = limit is None or month_spent(bot) < limit
    bot = bot_budget_set(bot=bot, limit=limit, rearm_alert=rearm)
    stored = bot.monthly_budget_usd
    cache.set(_limit_key(bot.pk), _NO_LIMIT if stored is None else str(stored), LIMIT_SECONDS)
    if rearm:
        cache.delete(f"llm:budget-alerted:{bot.pk}:{month_label()}")
    return bot


def budget_alert_email(*, bot_id: int, month: str) -> int:
    """The owners' e-mail: the month's budget is spent, the bot answers without the model until
    the month ends or the budget is raised. Returns how many addresses it went to."""
    from django.conf import settings
    from django.core.mail import send_mail
    from django.utils import translation
    from django.utils.formats import number_format
    from django.utils.translation import gettext as _

    from bots.models import Membership
    from bots.selectors import member_emails
    from core.dates import month_in_sentence

    bot = Bot.objects.filter(pk=bot_id).first()
    if bot is None:
        return 0
    recipients = member_emails(bot, role=Membership.Role.OWNER)
    if not recipients:
        return 0
    status = budget_status(bot)
    with translation.override(bot.language):
        subject = _("Бюджет на модель исчерпан: «%(bot)s»") % {"bot": bot.name}
        body = _(
            "Бот «%(bot)s» израсходовал бюджет на модель за %(month)s: %(spent)s $ из %(limit)s $.\n\n"
            "До конца месяца или до увеличения бюджета бот отвечает только по базе знаний, без модели: "
            "ответы — выдержки из страниц с ссылками, на остальное — «точного ответа нет» и кнопка оператора.\n\n"
            "Расходы и бюджет: %(url)s\n"
        ) % {"bot": bot.name, "month": month_in_sentence(dt.datetime.strptime(month, "%Y-%m").date()),
             "spent": number_format(status.spent, 2), "limit": number_format(status.limit or 0, 2),
             "url": f"{settings.SPRAVKA_PUBLIC_URL}/b/{bot.slug}/usage/"}
    send_mail(subject=subject, message=body, from_email=None, recipient_list=recipients)
    return len(recipients)


@shared_task(autoretry_for=(OSError,), retry_backoff=60, max_retries=5)
def budget_alert_send(bot_id: int, month: str) -> int:
    """The month's budget e-mail to the bot's owners (claimed once per month before it is queued)."""
    return budget_alert_email(bot_id=bot_id, month=month)
