"""Whether a long-lived copy of a Bot row (an open widget socket holds one for hours) still shows the
bot's current settings: voice, thresholds, handoff, language. Every committed change of the row sets
a new random token in Redis (`bot_changed`); a copy remembers the token read just before the row was
(`bot_remember`), and `bot_fresh` compares the two: one Redis GET per turn, the row read again only
when they differ.

What must stay true:
- The token is set after commit, never before: a copy reloaded on seeing a new token must read the
  new row. And a copy's token is read before its row, so a change committed in between is seen.
- A copy read at an unknown moment (a socket's, read at connect) is read again when it is adopted
  with a token (`bot_adopt`): a change committed between its read and the token would be missed.
- Tokens are random, not counters: a Redis that comes back empty cannot hand out a token again
  that a copy remembers from before.
- A Redis that cannot be asked makes the copy reload (one query) rather than keep old settings.
- Every writer of the Bot row is covered: `Model.save()` (the admin, the services) through the
  receivers below; a queryset `.update()` of a setting calls `bot_changed` itself
  (`bot_voice_set` in bots/services.py).
"""

from __future__ import annotations

import logging
import uuid
from typing import Any, Final

from django.core.cache import cache
from django.db import transaction
from django.db.models.signals import post_delete, post_save
from redis.exceptions import RedisError

from bots.models import Bot

logger = logging.getLogger("spravka.bots")

_ATTRIBUTE: Final = "_settings_token"
_UNKNOWN: Final = object()  # Redis was away when the copy was read: the next check reloads it


def _key(bot_id: int) -> str:
    return f"bots:settings:{bot_id}"


def _token(bot_id: int) -> object:
    try:
        value = cache.get(_key(bot_id))
    except (RedisError, OSError) as exc:
        logger.warning("bot %s: its settings token could not be read (%s)", bot_id, exc)
        return _UNKNOWN
    return value if isinstance(value, str) else None


def _publish(bot_id: int) -> None:
    try:
        cache.set(_key(bot_id), uuid.uuid4().hex, timeout=None)
    except (RedisError, OSError) as exc:
        logger.warning("bot %s: open chats keep its old settings until they reload (%s)", bot_id, exc)


def bot_changed(*, bot_id: int) -> None:
    """The bot's settings changed in the current transaction: open copies reload after it commits."""
    transaction.on_commit(lambda: _publish(bot_id))


def bot_remember(*, bot_id: int) -> object:
    """The token to pass to `bot_mark`: read it *before* reading the row it goes with."""
    return _token(bot_id)


def bot_mark(bot: Bot, token: object) -> Bot:
    """Remember `token` (from `bot_remember`) with `bot`, whose row was read after the token."""
    bot.__dict__[_ATTRIBUTE] = token
    return bot


def bot_adopt(bot: Bot, token: object) -> Bot:
    """Mark `bot`, read at an unknown moment before `token` was (a socket's copy, read at connect),
    with `token`: its row is read again first, unless it already carries that very token."""
    remembered = bot.__dict__.get(_ATTRIBUTE, _UNKNOWN)
    if remembered is _UNKNOWN or remembered != token:
        bot.refresh_from_db()
    return bot_mark(bot, token)


def bot_fresh(bot: Bot) -> Bot:
    """`bot` itself, its fields read again when its settings changed since it was read. A copy no
    token was remembered for (read per call, e.g. a command) is taken as current and marked now."""
    remembered = bot.__dict__.get(_ATTRIBUTE, None)
    current = _token(bot.pk)
    if _ATTRIBUTE in bot.__dict__ and (current is _UNKNOWN or current != remembered):
        bot.refresh_from_db()
    bot.__dict__[_ATTRIBUTE] = current
    return bot


def _saved(sender: type[Bot], instance: Bot, created: bool = False, **kwargs: Any) -> None:
    if not created:  # a new bot has no copies anywhere yet
        bot_changed(bot_id=instance.pk)


def _deleted(sender: type[Bot], instance: Bot, **kwargs: Any) -> None:
    bot_changed(bot_id=instance.pk)


post_save.connect(_saved, sender=Bot, dispatch_uid="bots.freshness.saved")
post_delete.connect(_deleted, sender=Bot, dispatch_uid="bots.freshness.deleted")
