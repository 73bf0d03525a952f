"""API keys: made, checked and revoked here (the admin, `manage.py apikey` and the REST API's
authentication all call these functions).

What must stay true:
- The key is `spr_<prefix>_<secret>`; only SHA-256 of the whole key is stored, so a leaked
  database gives no working key. The secret has 256 random bits: a fast hash is enough (a slow
  password hash guards guessable secrets, and would cost every API request tens of ms).
- A key belongs to one bot; everything the API does with it is scoped to that bot.
- A revoked key never works again (revocation is a timestamp, the row stays for the record).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from datetime import timedelta
from typing import Any, Final

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from bots.models import ApiKey, Bot

KEY_PATTERN: Final = re.compile(r"spr_([a-z0-9]{10})_([A-Za-z0-9_-]{43})")
PREFIX_PATTERN: Final = re.compile(r"(?:spr_)?([a-z0-9]{10})")
NAME_MAX: Final = 100
# `last_used_at` is written at most this often per key: not one UPDATE per request.
TOUCH_EVERY: Final = timedelta(minutes=5)
_ALPHABET: Final = "abcdefghijklmnopqrstuvwxyz0123456789"


class ApiKeyNotFound(Exception):
    def __init__(self, prefix: str) -> None:
        shown = prefix.encode("utf-8", "backslashreplace").decode("utf-8")[:40]
        super().__init__(_("Ключ «%(prefix)s» у этого бота не найден.") % {"prefix": shown})


def key_digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _new_prefix() -> str:
    return "".join(secrets.choice(_ALPHABET) for _ in range(10))


def _clean_name(name: Any) -> str:
    if not isinstance(name, str) or not name.strip():
        raise ValidationError(_("Укажите название ключа, например «1С» или «CRM»."))
    name = " ".join(name.split())
    if len(name) > NAME_MAX:
        raise ValidationError(_("Название ключа длиннее %(max)d символов.") % {"max": NAME_MAX})
    if "\x00" in name or any(0xD800 <= ord(ch) <= 0xDFFF for ch in name):
        raise ValidationError(_("В названии ключа недопустимые символы."))
    return name


@transaction.atomic
def api_key_create(*, bot: Bot, name: str, user: Any = None) -> tuple[ApiKey, str]:
    """A new key for `bot`. Returns the row and the key itself: show it once, it is not stored."""
    clean = _clean_name(name)
    while True:
        prefix = _new_prefix()
        if not ApiKey.objects.filter(prefix=prefix).exists():
            break
    key = f"spr_{prefix}_{secrets.token_urlsafe(32)}"
    row = ApiKey.objects.create(
        bot=bot, name=clean, prefix=prefix, key_hash=key_digest(key),
        created_by=user if getattr(user, "pk", None) else None,
    )
    return row, key


def api_key_revoke(*, bot: Bot, prefix: str, user: Any = None) -> ApiKey:
    """Revoke the bot's key that starts with `prefix` (with or without `spr_`). Revoking twice is
    harmless; another bot's prefix is not found, like a missing one."""
    match = PREFIX_PATTERN.fullmatch(prefix.strip()) if isinstance(prefix, str) else None
    if match is None:
        raise ApiKeyNotFound(str(prefix))
    with transaction.atomic():
        row = ApiKey.objects.select_for_update().filter(bot=bot, prefix=match.group(1)).first()
        if row is None:
            raise ApiKeyNotFound(prefix)
        if row.revoked_at is None:
            row.revoked_at = timezone.now()
            row.revoked_by = user if getattr(user, "pk", None) else None
            row.save(update_fields=["revoked_at", "revoked_by"])
    return row


def api_key_authenticate(key: str) -> ApiKey | None:
    """The active key row (with its bot) for a key as a client sent it, or None. One query, plus an
    UPDATE of `last_used_at` at most every TOUCH_EVERY."""
    match = KEY_PATTERN.fullmatch(key)
    if match is None:
        return None
    row = ApiKey.objects.select_related("bot").filter(prefix=match.group(1), revoked_at__isnull=True).first()
    if row is None or not hmac.compare_digest(row.key_hash, key_digest(key)):
        return None
    now = timezone.now()
    if row.last_used_at is None or now - row.last_used_at > TOUCH_EVERY:
        ApiKey.objects.filter(pk=row.pk).update(last_used_at=now)
        row.last_used_at = now
    return row
