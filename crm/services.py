"""Connecting a bot to its CRM: the one module that writes a `CrmConnection`. The owner's CRM page
calls these.

What must stay true:
- What the owner typed is checked before any call: amoCRM's address is the account's own
  (https://<subdomain>.amocrm.ru, a bare subdomain is completed), Bitrix24's is an inbound webhook
  (https://<portal>/rest/<user>/<code>/); both on https and on a public address (CRM_ALLOW_HTTP and
  CRAWL_ALLOW_PRIVATE lift that for the demo and the tests only).
- The key is checked with the CRM (a test call) before anything is saved, and stored sealed.
- Disconnecting forgets the key; leads still queued fail with a reason the owner reads.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Final
from urllib.parse import urlsplit

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

from bots.models import Bot
from core import secrets
from core.texts import Stored, stored, stored_pair
from crm import providers
from crm.exceptions import BadInput, CrmError
from crm.models import CrmConnection, Kind

SECRET_PURPOSE: Final = b"spravka-crm-key"
AMO_TOKEN: Final = re.compile(r"^[A-Za-z0-9._~+/=-]{20,4000}$")
SUBDOMAIN: Final = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
BITRIX_PATH: Final = re.compile(r"^/rest/(?P<user>[0-9]{1,10})/(?P<code>[A-Za-z0-9]{6,64})/?$")


def secret_of(connection: CrmConnection) -> str:
    return secrets.unseal(connection.secret_sealed, purpose=SECRET_PURPOSE)


def connection_of(bot: Bot) -> CrmConnection | None:
    return CrmConnection.objects.filter(bot=bot).first()


def _address(raw: str, *, field: str) -> tuple[str, str, str]:
    """(scheme, host with port, path) of a typed address, refused when it is not https to a public host."""
    parts = urlsplit(raw)
    schemes = {"https", "http"} if settings.CRM_ALLOW_HTTP else {"https"}
    if parts.scheme not in schemes or not parts.hostname or parts.username or parts.password:
        raise BadInput(stored(gettext_noop("Нужен адрес на https://, например %(example)s."),
                              example=EXAMPLES[field]), field=field)
    try:
        literal = ipaddress.ip_address(parts.hostname)
    except ValueError:
        literal = None
    if literal is not None and not settings.CRAWL_ALLOW_PRIVATE and not literal.is_global:
        raise BadInput(stored(gettext_noop(
            "Адрес %(host)s во внутренней сети: Справка отправляет заявки только на публичные адреса."),
            host=parts.hostname), field=field)
    if parts.query or parts.fragment:
        raise BadInput(stored(gettext_noop("Уберите из адреса всё после «?» или «#»: нужен адрес %(example)s."),
                              example=EXAMPLES[field]), field=field)
    return parts.scheme, parts.netloc.lower(), parts.path


EXAMPLES: Final = {"amocrm_url": "https://company.amocrm.ru", "bitrix24_url": "https://company.bitrix24.ru/rest/1/abc123xyz/"}


def amocrm_base(raw: str) -> str:
    """The account's base address: «company», «company.amocrm.ru» and «https://company.amocrm.ru/» all
    give https://company.amocrm.ru."""
    raw = (raw or "").strip().rstrip("/")
    if not raw:
        raise BadInput(stored(gettext_noop("Укажите адрес аккаунта amoCRM, например company.amocrm.ru.")),
                       field="amocrm_url")
    if SUBDOMAIN.fullmatch(raw.lower()):
        raw = f"https://{raw.lower()}.{settings.AMOCRM_DOMAIN}"
    elif "://" not in raw:
        raw = f"https://{raw}"
    scheme, host, path = _address(raw, field="amocrm_url")
    if path not in ("", "/"):
        raise BadInput(stored(gettext_noop(
            "Нужен только адрес аккаунта, без пути: например https://company.amocrm.ru.")), field="amocrm_url")
    return f"{scheme}://{host}"


def bitrix24_webhook(raw: str) -> tuple[str, str]:
    """(the webhook's address ending in «/», the same without its secret code), from what the owner
    pasted: a trailing method («…/profile.json», «…/crm.lead.add») is dropped."""
    raw = (raw or "").strip()
    if not raw:
        raise BadInput(stored(gettext_noop("Вставьте адрес входящего вебхука Битрикс24.")), field="bitrix24_url")
    scheme, host, path = _address(raw, field="bitrix24_url")
    segments = [s for s in path.split("/") if s]
    if len(segments) == 4 and "." in segments[-1]:
        segments = segments[:3]
    match = BITRIX_PATH.fullmatch("/" + "/".join(segments) + "/")
    if match is None:
        raise BadInput(stored(gettext_noop(
            "Это не адрес входящего вебхука: он выглядит как https://company.bitrix24.ru/rest/1/abc123xyz/ — "
            "скопируйте его целиком из настроек вебхука.")), field="bitrix24_url")
    base = f"{scheme}://{host}/rest/{match['user']}/"
    return f"{base}{match['code']}/", base


def amocrm_token(raw: str) -> str:
    token = (raw or "").strip()
    if token.lower().startswith("bearer "):
        token = token[7:].strip()
    if not AMO_TOKEN.fullmatch(token):
        raise BadInput(stored(gettext_noop(
            "Это не похоже на долгосрочный токен amoCRM: скопируйте его целиком из настроек интеграции "
            "(«Ключи и доступы»), без пробелов.")), field="amocrm_token")
    return token


def _failed(exc: CrmError) -> Stored:
    if exc.refused:
        return exc.text
    if exc.retryable:
        return stored(gettext_noop("Не удалось проверить подключение: %(error)s. Попробуйте ещё раз через минуту."),
                      error=exc.text)
    return stored(gettext_noop("Не удалось проверить подключение: %(error)s."), error=exc.text)


class ConnectFailed(Exception):
    def __init__(self, text: Stored, *, field: str | None = None) -> None:
        super().__init__(str(text))
        self.text, self.field = text, field


def amocrm_connect(*, bot: Bot, url: str, token: str) -> CrmConnection:
    """Check the address and the key with amoCRM (GET /api/v4/account), then save them."""
    try:
        base, key = amocrm_base(url), amocrm_token(token)
    except BadInput as exc:
        raise ConnectFailed(exc.text, field=exc.field) from exc
    try:
        name = providers.amocrm_check(base, key)
    except CrmError as exc:
        raise ConnectFailed(_failed(exc)) from exc
    return _save(bot=bot, kind=Kind.AMOCRM, account=base, name=name, secret=key)


def bitrix24_connect(*, bot: Bot, url: str) -> CrmConnection:
    """Check the webhook with Bitrix24 (crm.lead.fields), then save it."""
    try:
        webhook, account = bitrix24_webhook(url)
    except BadInput as exc:
        raise ConnectFailed(exc.text, field=exc.field) from exc
    try:
        providers.bitrix24_check(webhook)
    except CrmError as exc:
        raise ConnectFailed(_failed(exc)) from exc
    host = account.split("://", 1)[1].split("/", 1)[0]
    return _save(bot=bot, kind=Kind.BITRIX24, account=account, name=host, secret=webhook)


def _save(*, bot: Bot, kind: str, account: str, name: str, secret: str) -> CrmConnection:
    hint = secret.rstrip("/").rsplit("/", 1)[-1][-4:]
    now = timezone.now()
    with transaction.atomic():
        connection, _created = CrmConnection.objects.select_for_update().get_or_create(
            bot=bot, defaults={"kind": kind, "account": account})
        connection.kind, connection.account, connection.account_name = kind, account, name[:200]
        connection.secret_sealed = secrets.seal(secret, purpose=SECRET_PURPOSE)
        connection.secret_hint = f"…{hint}"
        connection.status, connection.connected_at, connection.checked_at = CrmConnection.Status.ACTIVE, now, now
        connection.last_error, connection.last_error_stored, connection.last_error_at = "", None, None
        connection.save()
    return connection


def connection_check(*, connection: CrmConnection) -> Stored | None:
    """A test call with the saved key: None when it works (the connection is marked working), else
    the reason (the connection is marked failing with it)."""
    try:
        secret = secret_of(connection)
    except secrets.Unreadable:
        error = stored(gettext_noop("Ключ не расшифровать: ключ шифрования сервера изменился — подключите CRM заново."))
        connection_failing(connection, error)
        return error
    try:
        if connection.kind == Kind.AMOCRM:
            providers.amocrm_check(connection.account, secret)
        else:
            providers.bitrix24_check(secret)
    except CrmError as exc:
        error = _failed(exc)
        connection_failing(connection, error)
        return error
    connection_working(connection)
    return None


def connection_disconnect(*, connection: CrmConnection) -> CrmConnection:
    """Forget the key; the leads already sent stay in the CRM, the queued ones fail with a reason."""
    connection.status, connection.secret_sealed = CrmConnection.Status.DISCONNECTED, ""
    connection.save(update_fields=["status", "secret_sealed", "updated_at"])
    return connection


def connection_failing(connection: CrmConnection, error: Stored) -> None:
    connection.last_error, connection.last_error_stored = stored_pair(error, 500)
    connection.last_error_at = timezone.now()
    fields = ["last_error", "last_error_stored", "last_error_at", "updated_at"]
    if connection.status == CrmConnection.Status.ACTIVE:
        connection.status = CrmConnection.Status.FAILING
        fields.append("status")
    connection.save(update_fields=fields)


def connection_working(connection: CrmConnection) -> None:
    """A call went through: a failing connection is working again."""
    connection.checked_at = timezone.now()
    fields = ["checked_at", "updated_at"]
    if connection.status == CrmConnection.Status.FAILING:
        connection.status = CrmConnection.Status.ACTIVE
        fields.append("status")
    connection.save(update_fields=fields)
