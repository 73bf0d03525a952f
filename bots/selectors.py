"""Which bots a person may see. Every view, admin page and consumer goes through these."""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any, Final

from django.contrib.auth import get_user_model
from django.db.models import Q, QuerySet

from bots.models import Bot, Membership

SLUG: Final = re.compile(r"[-a-zA-Z0-9_]{1,64}")
OWNER: Final = Membership.Role.OWNER
OPERATOR: Final = Membership.Role.OPERATOR
# Who answers visitors in the operators' inbox: an owner may always step in for an operator.
INBOX_ROLES: Final = frozenset({OWNER, OPERATOR})


def bots_for_user(user: Any, *, roles: Collection[str] | None = None) -> QuerySet[Bot]:
    """The bots `user` belongs to, limited to memberships with one of `roles` (any role when None).
    A superuser belongs to every bot in every role."""
    if not user.is_authenticated:
        return Bot.objects.none()
    if getattr(user, "is_superuser", False):
        return Bot.objects.all()
    memberships = Membership.objects.filter(user_id=user.pk)
    if roles is not None:
        memberships = memberships.filter(role__in=list(roles))
    return Bot.objects.filter(pk__in=memberships.values("bot_id"))


def roles_by_bot(user: Any) -> dict[int, str]:
    """{bot id: role} of the user's memberships, in one query (a user has one role per bot). For
    pages that check several roles per request; a superuser's rights are not memberships."""
    if not user.is_authenticated:
        return {}
    return dict(Membership.objects.filter(user_id=user.pk).values_list("bot_id", "role"))


def owned_bots(user: Any) -> QuerySet[Bot]:
    """Bots whose settings and knowledge `user` may see and change."""
    return bots_for_user(user, roles=[OWNER])


def inbox_bots(user: Any) -> QuerySet[Bot]:
    """Bots whose conversations `user` may read and answer in the operators' inbox."""
    return bots_for_user(user, roles=INBOX_ROLES)


def inbox_users(bot_id: int) -> Q:
    """Who may read and answer the bot's conversations, as a condition on users (`inbox_bots`'s rule
    from the other side, in one query for many users): active, and a superuser or an owner or
    operator of the bot."""
    members = Membership.objects.filter(bot_id=bot_id, role__in=list(INBOX_ROLES)).values("user_id")
    return Q(is_active=True) & (Q(is_superuser=True) | Q(pk__in=members))


def inbox_members(bot_id: int) -> QuerySet[Any]:
    """The bot's active owners and operators (no superuser without a membership), by name: whom a
    conversation may be handed to."""
    members = Membership.objects.filter(bot_id=bot_id, role__in=list(INBOX_ROLES)).values("user_id")
    return get_user_model().objects.filter(is_active=True, pk__in=members).order_by("first_name", "username")


def bot_by_slug(slug: str) -> Bot:
    """The bot for a command-line slug, with a message a person understands when it is missing."""
    from bots.exceptions import BotNotFound

    # A slug is letters, digits, "-" and "_": anything else cannot name a bot (and a NUL or a lone
    # surrogate would not even reach the database).
    if not isinstance(slug, str) or not SLUG.fullmatch(slug):
        raise BotNotFound(slug)
    try:
        return Bot.objects.get(slug=slug)
    except Bot.DoesNotExist as exc:
        raise BotNotFound(slug) from exc


def member_emails(bot: Bot, *, role: str) -> list[str]:
    """E-mail addresses of the bot's active members with `role` (the login when it is an e-mail)."""
    from django.core.exceptions import ValidationError
    from django.core.validators import validate_email

    emails: list[str] = []
    for membership in Membership.objects.filter(bot=bot, role=role, user__is_active=True).select_related("user"):
        for candidate in (membership.user.email, membership.user.get_username()):
            try:
                validate_email(candidate)
            except ValidationError:
                continue
            emails.append(candidate)
            break
    return sorted(set(emails))
