"""Writes for bots and memberships."""

from __future__ import annotations

import datetime as dt
import secrets
from urllib.parse import urlsplit

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator, validate_email, validate_slug
from django.db import transaction

from assistant.bots.models import Bot, Membership, OpeningHours


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


@transaction.atomic
def bot_create(*, slug: str, site_url: str, name: str = "", owner_email: str = "") -> tuple[Bot, str]:
    """Create a bot (and its owner when an e-mail is given). Returns the bot and the owner's new
    password, or "" when no owner was created or the owner already existed."""
    validate_slug(slug)
    URLValidator(schemes=["http", "https"])(site_url)
    if Bot.objects.filter(slug=slug).exists():
        raise ValidationError(f"Бот с кодом «{slug}» уже существует.")
    bot = Bot.objects.create(
        slug=slug, name=name or slug, site_url=site_url, allowed_origins=[origin_of(site_url)]
    )
    password = ""
    if owner_email:
        owner, password = user_get_or_create(email=owner_email)
        Membership.objects.create(bot=bot, user=owner, role=Membership.Role.OWNER)
    return bot, password


def user_get_or_create(*, email: str, password: str = "") -> tuple[User, str]:
    """An owner account for the admin. A new account gets staff rights and a generated password."""
    validate_email(email)
    user_model = get_user_model()
    user = user_model.objects.filter(username=email).first()
    if user is not None:
        return user, ""
    password = password or secrets.token_urlsafe(9)
    user = user_model.objects.create_user(username=email, email=email, password=password, is_staff=True)
    return user, password


def opening_hours_set(*, bot: Bot, rows: list[tuple[int, dt.time, dt.time]]) -> None:
    """Replace the bot's weekly schedule of operators (weekday 0 = Monday, in the bot's time zone);
    the admin edits the same rows inline."""
    with transaction.atomic():
        bot.opening_hours.all().delete()
        OpeningHours.objects.bulk_create(
            [OpeningHours(bot=bot, weekday=weekday, opens=opens, closes=closes) for weekday, opens, closes in rows]
        )
