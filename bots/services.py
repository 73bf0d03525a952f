"""Writes for bots and memberships.

What must stay true: an account is admin staff exactly when it owns a bot (or is a superuser); an
operator-only account signs in at /accounts/login/ and works in the inbox, never in the admin.
Every membership write goes through here so `user_staff_sync` runs after it.
"""

from __future__ import annotations

import datetime as dt
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import BaseUserManager
from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator, validate_email, validate_slug
from django.db import models, transaction
from django.utils.translation import gettext as _

from bots import freshness
from bots.models import Bot, Membership, OpeningHours

# The thresholds an A/B experiment may change, and so its winner may leave on the bot.
THRESHOLDS: Final = ("match_threshold", "confidence_threshold")


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


@transaction.atomic
def bot_create(
    *, slug: str, site_url: str, name: str = "", owner_email: str = "", owner: Any = None
) -> tuple[Bot, str]:
    """Create a bot (and its owner when an e-mail is given). Returns the bot and the owner's new
    password, or "" when no owner was created or the owner already existed. `owner`: an existing
    account that becomes the bot's owner (the dashboard's onboarding, whatever its login is)."""
    validate_slug(slug)
    URLValidator(schemes=["http", "https"])(site_url)
    if Bot.objects.filter(slug=slug).exists():
        raise ValidationError(f"Бот с кодом «{slug}» уже существует.")
    bot = Bot.objects.create(
        slug=slug, name=name or slug, site_url=site_url, allowed_origins=[origin_of(site_url)]
    )
    password = ""
    if owner_email:
        password = membership_add(bot=bot, email=owner_email, role=Membership.Role.OWNER).password
    if owner is not None:
        Membership.objects.update_or_create(bot=bot, user=owner, defaults={"role": Membership.Role.OWNER})
        user_staff_sync(user=owner)
    return bot, password


def bot_origins_set(*, bot: Bot, origins: list[str]) -> Bot:
    """Replace where the bot's widget may run. Each origin is normalised (lower case, no default
    port, no trailing slash) and checked by the model's rule; a bad one raises ValidationError
    naming it, and the stored list stays as it was."""
    from bots.origins import normalize_origin
    from core.validators import validate_origins

    cleaned = list(dict.fromkeys(normalize_origin(origin) or origin.strip() for origin in origins))
    validate_origins(cleaned)
    bot.allowed_origins = cleaned
    bot.save(update_fields=["allowed_origins"])
    return bot


def bot_site_ensure(
    *, slug: str, name: str, site_url: str, origins: list[str], privacy_policy_url: str = ""
) -> Bot:
    """The bot `slug` for the site at `site_url`: created when missing, otherwise given this name,
    address, widget origins and privacy policy (its other settings stay). Every value is checked by
    the model's rules first; a bad one raises ValidationError and nothing is written."""
    values = {"name": name, "site_url": site_url, "allowed_origins": origins, "privacy_policy_url": privacy_policy_url}
    Bot(slug=slug, **values).clean_fields()
    bot, _created = Bot.objects.update_or_create(slug=slug, defaults=values)
    return bot


def bot_settings_save(*, bot: Bot) -> Bot:
    """Store a bot as the admin's page edited it, every field at once (a new bot is inserted). The
    page's form has already run the model's checks (fields, web addresses, a free slug). Open
    copies of the bot reload after commit (post_save, bots/freshness.py)."""
    bot.save()
    return bot


def bot_voice_set(*, bot: Bot, voice: dict[str, Any], thresholds: Mapping[str, float] | None = None) -> Bot:
    """Store the bot's voice as voice/services.py validated and numbered it (its shape is voice's
    business). `thresholds`: an experiment's winner adopted, match_threshold and/or
    confidence_threshold stored with it, each checked by the model's rule (0..1) first: a bad one
    raises ValidationError and nothing is written. One UPDATE of those columns only, so a copy of
    the bot read earlier never puts back other settings; open copies reload after commit."""
    values = {name: _threshold(bot, name, value) for name, value in (thresholds or {}).items()}
    Bot.objects.filter(pk=bot.pk).update(voice=voice, **values)
    freshness.bot_changed(bot_id=bot.pk)  # a queryset update sends no post_save
    bot.voice = voice
    for name, value in values.items():
        setattr(bot, name, value)
    return bot


def _threshold(bot: Bot, name: str, value: float) -> float:
    field = Bot._meta.get_field(name) if name in THRESHOLDS else None
    if not isinstance(field, models.FloatField):
        raise ValueError(f"not a threshold of the bot: {name}")
    return float(field.clean(value, bot))


@dataclass(frozen=True)
class MembershipResult:
    membership: Membership
    user_created: bool
    membership_created: bool
    # The previous role when an existing membership changed, "" when it is new or unchanged.
    previous_role: str
    # The new account's password when it was generated here (to be shown once), else "".
    password: str


@transaction.atomic
def membership_add(*, bot: Bot, email: str, role: str, password: str = "") -> MembershipResult:
    """Give the account `email` the `role` in `bot`: the account is created when missing (with
    `password`, or a generated one that is returned), an existing membership changes its role.
    An existing account keeps its password: `password` is only for a new one."""
    if role not in Membership.Role.values:
        raise ValidationError(
            _("Неизвестная роль «%(role)s»: owner (владелец) или operator (оператор).") % {"role": role}
        )
    user, generated, created = _user_for(email=email, password=password)
    membership = Membership.objects.select_for_update().filter(bot=bot, user=user).first()
    previous, new = "", membership is None
    if membership is None:
        membership = Membership.objects.create(bot=bot, user=user, role=role)
    elif membership.role != role:
        previous, membership.role = membership.role, role
        membership.save(update_fields=["role"])
    user_staff_sync(user=user)
    return MembershipResult(
        membership=membership, user_created=created, membership_created=new, previous_role=previous,
        password=generated,
    )


def membership_remove(*, membership: Membership) -> None:
    user = membership.user
    membership.delete()
    user_staff_sync(user=user)


def user_staff_sync(*, user: Any) -> bool:
    """Admin staff exactly when the account owns a bot (a superuser always is). Returns is_staff."""
    staff = bool(user.is_superuser) or Membership.objects.filter(user=user, role=Membership.Role.OWNER).exists()
    if user.is_staff != staff:
        user.is_staff = staff
        user.save(update_fields=["is_staff"])
    return staff


def _user_for(*, email: str, password: str) -> tuple[User, str, bool]:
    """The account for `email` (matched without regard to case), or a new one. Returns the user,
    the password generated for it ("" when given or not new) and whether it was created."""
    email = BaseUserManager.normalize_email(email.strip())
    validate_email(email)
    user_model = get_user_model()
    user = user_model.objects.filter(username__iexact=email).first()
    if user is not None:
        return user, "", False
    generated = "" if password else secrets.token_urlsafe(12)
    candidate = user_model(username=email, email=email)
    validate_password(password or generated, user=candidate)
    user = user_model.objects.create_user(username=email, email=email, password=password or generated)
    return user, generated, True


def opening_hours_set(*, bot: Bot, rows: list[tuple[int, dt.time, dt.time]]) -> None:
    """Replace the bot's weekly schedule of operators (weekday 0 = Monday, in the bot's time zone);
    the admin edits the same rows inline."""
    with transaction.atomic():
        bot.opening_hours.all().delete()
        OpeningHours.objects.bulk_create(
            [OpeningHours(bot=bot, weekday=weekday, opens=opens, closes=closes) for weekday, opens, closes in rows]
        )


# --- the monthly model budget (the rules and the cache are in llm/budget.py) ---------------


def budget_value(limit: Any) -> Any:
    """A monthly budget as stored: None, or USD with cents from 0 to 99 999 999.99; ValidationError
    with a message for the owner otherwise."""
    from decimal import Decimal, InvalidOperation

    if limit is None:
        return None
    try:
        value = Decimal(limit)
    except (InvalidOperation, TypeError, ValueError) as exc:
        raise ValidationError(_("Бюджет — число долларов, например 20 или 7.50.")) from exc
    if not value.is_finite() or value < 0 or value >= Decimal("100000000"):
        raise ValidationError(_("Бюджет — от 0 до 99 999 999 долларов."))
    return value.quantize(Decimal("0.01"))


def bot_budget_set(*, bot: Bot, limit: Any, rearm_alert: bool = False) -> Bot:
    """Store the bot's monthly budget (USD, None for none). `rearm_alert`: the budget is not spent
    any more, so this month's e-mail may go again if it is spent later."""
    bot.monthly_budget_usd = budget_value(limit)
    fields = ["monthly_budget_usd"]
    if rearm_alert:
        bot.budget_alerted_month = ""
        fields.append("budget_alerted_month")
    bot.save(update_fields=fields)
    return bot


def bot_budget_alert_claim(*, bot_id: int, month: str) -> bool:
    """True exactly once per bot and month (an atomic UPDATE): whoever gets True sends the e-mail."""
    return bool(Bot.objects.filter(pk=bot_id).exclude(budget_alerted_month=month).update(budget_alerted_month=month))


def bot_match_threshold_set(*, bot: Bot, value: float) -> Bot:
    """Store the bot's match threshold (the score a passage needs to be answered from; `manage.py
    calibrate` proposes one). ValidationError outside 0..1."""
    if not 0.0 <= value <= 1.0:
        raise ValidationError(_("Порог совпадения — число от 0 до 1."))
    bot.match_threshold = round(float(value), 3)
    bot.save(update_fields=["match_threshold"])
    return bot


def bot_operators_set(*, bot: Bot, sla_minutes: int, csat_after_bot: bool) -> Bot:
    """The operators' promise and the visitors' ratings: «первый ответ оператора в течение N минут»
    (0: no promise; the inbox marks a wait past it) and whether a conversation the bot resolved alone
    also asks for stars. ValidationError on a bad number, nothing written; one UPDATE of these columns
    only, so a copy of the bot read earlier never puts back other settings."""
    if isinstance(sla_minutes, bool) or not isinstance(sla_minutes, int) or not 0 <= sla_minutes <= 24 * 60:
        raise ValidationError(_("Срок первого ответа — целое число минут от 0 до 1440."))
    bot.operator_sla_minutes, bot.csat_after_bot = sla_minutes, bool(csat_after_bot)
    bot.save(update_fields=["operator_sla_minutes", "csat_after_bot"])
    return bot


def bot_visitor_choice_set(*, bot: Bot, on: bool) -> Bot:
    """Whether the widget offers «Спросить бота» / «Написать оператору» before the visitor's first
    message (shown only while handoff is on and operators work; chat/consumers.py decides). One
    UPDATE of this column only; open copies of the bot reload after commit."""
    Bot.objects.filter(pk=bot.pk).update(visitor_choice=bool(on))
    freshness.bot_changed(bot_id=bot.pk)  # a queryset update sends no post_save
    bot.visitor_choice = bool(on)
    return bot
