"""Web Push to the operators' browsers: a conversation that starts waiting reaches every browser
that agreed to it (PushManager.subscribe() on the inbox page, «Уведомления на рабочий стол»), even
with the inbox closed. The one module that writes a `PushSubscription`.

What must stay true:
- Push is off without the VAPID keys (settings.SPRAVKA_VAPID_*): the inbox shows no button, a
  subscription is refused and nothing is sent; nothing else fails.
- A subscription is checked whole before anything is stored: an https:// endpoint on a known push
  service host (settings.PUSH_HOSTS; the worker posts there, so no other address, no internal one,
  is ever reached), a P-256 public key and a 16-byte auth secret in base64url. A bad one gets a
  Russian reason and stores nothing.
- A notice goes only to the subscriptions of the bot's own operators (its owners when it has none,
  as the e-mail alerts): tenant-safe, whoever else subscribed.
- One subscription's failure never holds another: each is sent by its own task. 404/410 from the
  push service means the browser dropped it: it is deleted. A 5xx, a 429 or no answer is retried
  with backoff (PUSH_RETRY_BASE, doubled) up to PUSH_MAX_ATTEMPTS; anything else counts as a failure.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

import requests
from cryptography.hazmat.primitives.asymmetric import ec
from django.conf import settings
from django.db import transaction
from django.db.models import F, QuerySet
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext as _

from bots.models import Membership
from chat import selectors
from chat.models import Conversation
from inbox.models import PushSubscription

logger = logging.getLogger("spravka.inbox")

MAX_ENDPOINT: Final = 1024
MAX_PER_USER: Final = 10  # browsers per person; the oldest goes when an eleventh subscribes
BODY_CHARS: Final = 140  # the visitor's question as a notice shows it
GONE: Final = frozenset({404, 410})


class PushError(Exception):
    """A subscription refused, with a reason a person reads (Russian, translated)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Subscription:
    endpoint: str
    p256dh: str
    auth: str


@dataclass(frozen=True)
class Outcome:
    """What one send did: `sent`, `gone` (deleted), `retry` (after `wait` seconds) or `failed`."""

    kind: str
    wait: float = 0.0


def push_enabled() -> bool:
    return bool(settings.SPRAVKA_VAPID_PUBLIC_KEY and settings.SPRAVKA_VAPID_PRIVATE_KEY
                and settings.SPRAVKA_VAPID_SUBJECT)


def public_key() -> str:
    """The application server key the inbox page subscribes with; "" when push is off."""
    return settings.SPRAVKA_VAPID_PUBLIC_KEY if push_enabled() else ""


# ----- checking what a browser sent ----------------------------------------------------------------


def _b64url(value: str) -> bytes:
    if not value.replace("-", "").replace("_", "").rstrip("=").isalnum() or not value.isascii():
        raise ValueError("not base64url")
    try:
        return base64.urlsafe_b64decode(value.rstrip("=") + "=" * (-len(value.rstrip("=")) % 4))
    except (binascii.Error, ValueError) as exc:
        raise ValueError("not base64url") from exc


def endpoint_allowed(endpoint: str) -> bool:
    """An https:// address (http:// with PUSH_ALLOW_HTTP) on a host of settings.PUSH_HOSTS or its
    subdomain, without a user or password in it."""
    try:
        parts = urlsplit(endpoint)
        host = (parts.hostname or "").lower()
        parts.port  # noqa: B018 - a bad port raises here
    except ValueError:
        return False
    schemes = {"https", "http"} if settings.PUSH_ALLOW_HTTP else {"https"}
    if parts.scheme not in schemes or not host or parts.username or parts.password:
        return False
    return any(host == allowed or host.endswith("." + allowed) for allowed in settings.PUSH_HOSTS)


def subscription_parse(data: Any) -> Subscription:
    """What PushSubscription.toJSON() sent, checked; PushError with the reason otherwise."""
    if not isinstance(data, dict):
        raise PushError(_("Подписка должна быть объектом JSON из PushSubscription.toJSON()."))
    endpoint, keys = data.get("endpoint"), data.get("keys")
    if not isinstance(endpoint, str) or not endpoint:
        raise PushError(_("В подписке нет адреса службы уведомлений (endpoint)."))
    if len(endpoint) > MAX_ENDPOINT:
        raise PushError(_("Адрес службы уведомлений длиннее %(max)s символов.") % {"max": MAX_ENDPOINT})
    if not endpoint_allowed(endpoint):
        raise PushError(_("Адрес подписки должен начинаться с https:// и вести к службе уведомлений браузера."))
    if not isinstance(keys, dict) or not isinstance(keys.get("p256dh"), str) or not isinstance(keys.get("auth"), str):
        raise PushError(_("В подписке нет ключей p256dh и auth."))
    p256dh, auth = keys["p256dh"], keys["auth"]
    try:
        point = _b64url(p256dh) if len(p256dh) <= 100 else b""
        ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point)
        if len(point) != 65:
            raise ValueError("not an uncompressed point")
    except ValueError as exc:
        raise PushError(_("Ключ подписки p256dh повреждён: нужен открытый ключ P-256 в base64url.")) from exc
    try:
        secret = _b64url(auth) if len(auth) <= 32 else b""
    except ValueError:
        secret = b""
    if len(secret) != 16:
        raise PushError(_("Ключ подписки auth повреждён: нужны 16 байт в base64url."))
    return Subscription(endpoint=endpoint, p256dh=p256dh.rstrip("="), auth=auth.rstrip("="))


# ----- writes --------------------------------------------------------------------------------------


def subscription_save(*, user: Any, data: Any, language: str = "") -> PushSubscription:
    """Store the browser's subscription for `user` (PushError when push is off or it is bad). The
    same endpoint again updates its keys; from another account it moves to this one."""
    if not push_enabled():
        raise PushError(_("Уведомления на рабочий стол на этом сервере выключены."))
    parsed = subscription_parse(data)
    with transaction.atomic():
        subscription, _created = PushSubscription.objects.update_or_create(
            endpoint=parsed.endpoint,
            defaults={"user": user, "p256dh": parsed.p256dh, "auth": parsed.auth, "language": language[:10],
                      "failures": 0, "last_error": ""},
        )
        keep = PushSubscription.objects.filter(user=user).order_by("-id").values_list("id", flat=True)[:MAX_PER_USER]
        PushSubscription.objects.filter(user=user).exclude(id__in=list(keep)).delete()
    return subscription


def subscription_delete(*, user: Any, endpoint: Any) -> bool:
    """Forget `user`'s subscription at `endpoint`; False when they have none there (another
    user's endpoint included: nothing of theirs is touched)."""
    if not isinstance(endpoint, str) or not endpoint or len(endpoint) > MAX_ENDPOINT:
        return False
    deleted, _kinds = PushSubscription.objects.filter(user=user, endpoint=endpoint).delete()
    return bool(deleted)


def subscriptions_of(user: Any) -> QuerySet[PushSubscription]:
    return PushSubscription.objects.filter(user=user)


# ----- sending -------------------------------------------------------------------------------------


def recipients(bot_id: int) -> list[int]:
    """Subscription ids of the bot's active operators; of its owners when it has no operator."""
    members = Membership.objects.filter(bot_id=bot_id, user__is_active=True)
    operators = members.filter(role=Membership.Role.OPERATOR)
    people = operators if operators.exists() else members.filter(role=Membership.Role.OWNER)
    return list(PushSubscription.objects.filter(user_id__in=people.values("user_id")).order_by("id")
                .values_list("id", flat=True))


def _payload(conversation: Conversation, language: str, *, given: bool = False) -> str:
    question = selectors.last_visitor_messages(conversation, limit=1)
    body = " ".join(question[0].text.split()) if question else ""
    if len(body) > BODY_CHARS:
        body = body[: BODY_CHARS - 1].rstrip() + "…"
    with translation.override(language or settings.LANGUAGE_CODE):
        title = _("Вам передан разговор — {bot}") if given else _("Посетитель ждёт оператора — {bot}")
        title = title.replace("{bot}", conversation.bot.name)
        body = body or _("Посетитель позвал оператора")
    return json.dumps({
        "title": title, "body": body, "conversation_id": conversation.pk,
        "url": reverse("inbox:conversation", args=[conversation.pk]),
    }, ensure_ascii=False)


def retry_delay(attempt: int) -> float:
    """Seconds before retry number `attempt` (1-based): base, 2×base, 4×base…, at most ten minutes."""
    return float(min(600.0, settings.PUSH_RETRY_BASE * 2 ** (attempt - 1)))


def _post(subscription: PushSubscription, data: str) -> None:
    """One request to the push service (pywebpush: VAPID header, aes128gcm body); raises on failure."""
    from pywebpush import webpush

    with requests.Session() as session:
        session.max_redirects = 0  # a push service answers, it does not send the worker elsewhere
        webpush(
            subscription_info={"endpoint": subscription.endpoint,
                               "keys": {"p256dh": subscription.p256dh, "auth": subscription.auth}},
            data=data, vapid_private_key=settings.SPRAVKA_VAPID_PRIVATE_KEY,
            vapid_claims={"sub": settings.SPRAVKA_VAPID_SUBJECT}, timeout=settings.PUSH_TIMEOUT,
            ttl=settings.PUSH_TTL, headers={"Urgency": "high", "Topic": "waiting"},
            requests_session=session,
        )


def _failed(subscription: PushSubscription, reason: str) -> None:
    PushSubscription.objects.filter(pk=subscription.pk).update(failures=F("failures") + 1, last_error=reason[:200])


def _still_news(conversation: Conversation, subscription: PushSubscription, given: bool) -> bool:
    """Whether the notice still says something true: the conversation waits; or, for one given in
    turn (`given`), the subscription's user still holds it."""
    if given:
        return conversation.state == Conversation.State.OPERATOR and conversation.assigned_to_id == subscription.user_id
    return conversation.state == Conversation.State.WAITING_OPERATOR


def push_send(*, subscription_id: int, conversation_id: int, attempt: int = 1, given: bool = False) -> Outcome:
    """Send one subscription the notice about one waiting conversation, or (`given`) about one given
    to its user in turn (inbox/assignment.py). Nothing is sent when the subscription is gone, push is
    off, its user no longer works in the bot, or the notice is no longer true (taken meanwhile, a
    retry included)."""
    subscription = PushSubscription.objects.select_related("user").filter(pk=subscription_id).first()
    conversation = Conversation.objects.select_related("bot").filter(pk=conversation_id).first()
    if subscription is None or conversation is None or not push_enabled():
        return Outcome("skipped")
    if not _still_news(conversation, subscription, given):
        return Outcome("skipped")
    if not given and subscription_id not in recipients(conversation.bot_id):  # left the bot since it was queued
        return Outcome("skipped")
    if not endpoint_allowed(subscription.endpoint):  # PUSH_HOSTS narrowed since it subscribed
        _failed(subscription, "endpoint no longer allowed")
        return Outcome("failed")
    from pywebpush import WebPushException

    try:
        _post(subscription, _payload(conversation, subscription.language, given=given))
    except WebPushException as exc:
        status = exc.response.status_code if exc.response is not None else None
        if status in GONE:
            PushSubscription.objects.filter(pk=subscription.pk).delete()
            return Outcome("gone")
        return _after_failure(subscription, attempt, f"HTTP {status}" if status else str(exc.message),
                              retryable=status is None or status == 429 or status >= 500)
    except requests.RequestException as exc:
        return _after_failure(subscription, attempt, type(exc).__name__,
                              retryable=not isinstance(exc, requests.TooManyRedirects))
    PushSubscription.objects.filter(pk=subscription.pk).update(
        last_success_at=timezone.now(), failures=0, last_error="")
    return Outcome("sent")


def _after_failure(subscription: PushSubscription, attempt: int, reason: str, *, retryable: bool) -> Outcome:
    _failed(subscription, reason)
    logger.warning("web push to subscription %s failed (attempt %s): %s", subscription.pk, attempt, reason)
    if retryable and attempt < settings.PUSH_MAX_ATTEMPTS:
        return Outcome("retry", retry_delay(attempt))
    return Outcome("failed")


def waiting_recipients(*, conversation_id: int) -> list[int]:
    """The subscriptions to tell about a conversation that started waiting (none when push is off
    or nobody waits any more)."""
    if not push_enabled():
        return []
    conversation = Conversation.objects.filter(pk=conversation_id).only("bot_id", "state").first()
    if conversation is None or conversation.state != Conversation.State.WAITING_OPERATOR:
        return []
    return recipients(conversation.bot_id)


def given_recipients(*, conversation_id: int, operator_id: int) -> list[int]:
    """The subscriptions to tell that a conversation was given to `operator_id` in turn: theirs, while
    they still hold it (none when push is off)."""
    if not push_enabled():
        return []
    held = Conversation.objects.filter(pk=conversation_id, state=Conversation.State.OPERATOR,
                                       assigned_to_id=operator_id).exists()
    if not held:
        return []
    return list(PushSubscription.objects.filter(user_id=operator_id).order_by("id").values_list("id", flat=True))
