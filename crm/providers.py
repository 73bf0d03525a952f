"""The CRMs' own calls, and nothing else: no database here. Each provider offers `check`, `lead_create`
and `note_add`, mapped onto crm.exceptions.

Why plain HTTP and no client library: each CRM needs two or three documented calls, and every request
must go through the project's one outbound client (core/http.py: SSRF guard on every address,
deadline, size limit). The libraries on PyPI either open their own sessions (requests, aiohttp),
which would bypass that guard, or wrap OAuth flows Spravka does not use (amoCRM's long-lived token
and Bitrix24's inbound webhook need no token refresh).

amoCRM (API v4, `Authorization: Bearer <long-lived token>`): `GET /api/v4/account` checks the key;
`POST /api/v4/leads/complex` makes a lead with its contact (name, PHONE and EMAIL fields) in one
call; `POST /api/v4/leads/{id}/notes` with note_type "common" adds the transcript.

Bitrix24 (an inbound webhook `https://<portal>/rest/<user>/<code>/`, the code is the key):
`crm.lead.fields` checks it (it needs the CRM permission the lead needs); `crm.lead.add` makes the
lead with TITLE, NAME, PHONE/EMAIL multifields and the transcript in COMMENTS;
`crm.timeline.comment.add` adds a later transcript to an existing lead.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from typing import Any, Final

from django.conf import settings
from django.utils.translation import gettext_noop

from core.http import AddressRefused, FetchError, FetchTimeout, Response, SafeClient
from core.texts import stored
from crm.exceptions import CrmError
from crm.models import Kind

NAMES: Final[dict[str, Any]] = {Kind.AMOCRM: "amoCRM", Kind.BITRIX24: stored(gettext_noop("Битрикс24"))}
MAX_TEXT: Final = 20000  # characters of a transcript sent; a longer one keeps its end (the lead's moment)


@dataclass(frozen=True)
class Contact:
    name: str
    phone: str
    email: str
    title: str  # the lead's name in the CRM


def _name(kind: str) -> Any:
    """The CRM's name as a parameter of a stored text (a stored text itself where it is translated)."""
    return NAMES[kind]


def _client() -> SafeClient:
    return SafeClient(timeout=settings.CRM_TIMEOUT)


def _post(kind: str, url: str, payload: Any, headers: dict[str, str] | None = None) -> Response:
    body = json.dumps(payload, ensure_ascii=False).encode()
    return _call(kind, lambda client: client.post(
        url, content=body, headers={"Content-Type": "application/json", "Accept": "application/json",
                                    **(headers or {})}))


def _get(kind: str, url: str, headers: dict[str, str] | None = None) -> Response:
    return _call(kind, lambda client: client.get(url, headers={"Accept": "application/json", **(headers or {})}))


def _call(kind: str, send: Any) -> Response:
    try:
        with _client() as client:
            response: Response = send(client)
    except AddressRefused as exc:  # a private address stays private: trying again cannot help
        raise CrmError(stored(gettext_noop("%(crm)s: %(reason)s"), crm=_name(kind), reason=exc.text)) from exc
    except FetchTimeout as exc:
        raise CrmError(stored(gettext_noop("%(crm)s не ответила вовремя (%(reason)s)"), crm=_name(kind),
                              reason=exc.text), retryable=True) from exc
    except FetchError as exc:
        raise CrmError(stored(gettext_noop("%(crm)s недоступна: %(reason)s"), crm=_name(kind), reason=exc.text),
                       retryable=True) from exc
    _raise_for_status(kind, response)
    return response


def _raise_for_status(kind: str, response: Response) -> None:
    status = response.status
    if 200 <= status < 300:
        return
    if status in (401, 403):
        raise CrmError(stored(REFUSED[Kind(kind)]), status=status, refused=True)
    if status == 402:
        raise CrmError(stored(gettext_noop("%(crm)s: аккаунт не оплачен (ответ 402)"), crm=_name(kind)),
                       status=status)
    if status == 404:
        raise CrmError(stored(gettext_noop("%(crm)s: адрес не найден (ответ 404) — проверьте адрес аккаунта"),
                              crm=_name(kind)), status=status)
    retryable = status >= 500 or status in (408, 429)
    if retryable:
        text = stored(gettext_noop("%(crm)s отвечает ошибкой %(status)s"), crm=_name(kind), status=status)
    else:
        text = stored(gettext_noop("%(crm)s не приняла заявку (ответ %(status)s)"), crm=_name(kind), status=status)
    raise CrmError(text, status=status, retryable=retryable)


REFUSED: Final = {
    Kind.AMOCRM: gettext_noop(
        "amoCRM не принимает ключ (ответ 401): он отозван или скопирован не целиком. Создайте новый долгосрочный "
        "токен в amoCRM («amoМаркет» → ваша интеграция → «Ключи и доступы») и подключите CRM заново."),
    Kind.BITRIX24: gettext_noop(
        "Битрикс24 не принимает адрес вебхука (ответ 401): вебхук удалён или у него нет доступа к CRM. "
        "Создайте входящий вебхук с правом «CRM» («Разработчикам» → «Другое» → «Входящий вебхук») и "
        "подключите CRM заново."),
}


def _json(kind: str, response: Response) -> Any:
    try:
        return json.loads(response.body or b"null")
    except ValueError as exc:
        raise CrmError(stored(gettext_noop("%(crm)s ответила не JSON"), crm=_name(kind)), status=response.status,
                       retryable=True) from exc


def _unexpected(kind: str, status: int) -> CrmError:
    return CrmError(stored(gettext_noop("%(crm)s ответила непонятно (без номера сделки)"), crm=_name(kind)),
                    status=status, retryable=True)


def clip(transcript: str) -> str:
    return transcript if len(transcript) <= MAX_TEXT else "…\n" + transcript[-(MAX_TEXT - 2):]


# --- amoCRM -----------------------------------------------------------------------------------------

def _bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def amocrm_check(base: str, token: str) -> str:
    """The account's name (GET /api/v4/account)."""
    data = _json(Kind.AMOCRM, _get(Kind.AMOCRM, f"{base}/api/v4/account", _bearer(token)))
    return str(data.get("name") or data.get("subdomain") or "") if isinstance(data, dict) else ""


def _amo_field(code: str, value: str) -> dict[str, Any]:
    return {"field_code": code, "values": [{"value": value, "enum_code": "WORK"}]}


def amocrm_lead_create(base: str, token: str, contact: Contact) -> str:
    """A lead with its contact, in one call; the new lead's id."""
    fields = ([_amo_field("PHONE", contact.phone)] if contact.phone else []) + (
        [_amo_field("EMAIL", contact.email)] if contact.email else [])
    payload = [{"name": contact.title, "_embedded": {"contacts": [
        {"first_name": contact.name, "custom_fields_values": fields}]}}]
    response = _post(Kind.AMOCRM, f"{base}/api/v4/leads/complex", payload, _bearer(token))
    data = _json(Kind.AMOCRM, response)
    first = data[0] if isinstance(data, list) and data else None
    lead_id = first.get("id") if isinstance(first, dict) else None
    if not isinstance(lead_id, int):
        raise _unexpected(Kind.AMOCRM, response.status)
    return str(lead_id)


def amocrm_note_add(base: str, token: str, lead_id: str, text: str) -> None:
    payload = [{"note_type": "common", "params": {"text": clip(text)}}]
    _post(Kind.AMOCRM, f"{base}/api/v4/leads/{int(lead_id)}/notes", payload, _bearer(token))


# --- Bitrix24 ---------------------------------------------------------------------------------------

def _bitrix(webhook: str, method: str, payload: dict[str, Any]) -> Any:
    response = _post(Kind.BITRIX24, f"{webhook}{method}.json", payload)
    data = _json(Kind.BITRIX24, response)
    if isinstance(data, dict) and data.get("error"):  # Bitrix24 names the error beside a 2xx too
        raise CrmError(stored(gettext_noop("Битрикс24 отказал: %(error)s"),
                              error=str(data.get("error_description") or data["error"])[:200]),
                       status=response.status)
    return data.get("result") if isinstance(data, dict) else None


def _html(text: str) -> str:
    """COMMENTS and timeline comments are shown as HTML: a visitor's text stays text."""
    return html.escape(clip(text)).replace("\n", "<br>")


def bitrix24_check(webhook: str) -> str:
    _bitrix(webhook, "crm.lead.fields", {})
    return ""


def bitrix24_lead_create(webhook: str, contact: Contact, transcript: str) -> str:
    fields: dict[str, Any] = {"TITLE": contact.title, "NAME": contact.name, "SOURCE_ID": "WEB",
                              "COMMENTS": _html(transcript)}
    if contact.phone:
        fields["PHONE"] = [{"VALUE": contact.phone, "VALUE_TYPE": "WORK"}]
    if contact.email:
        fields["EMAIL"] = [{"VALUE": contact.email, "VALUE_TYPE": "WORK"}]
    result = _bitrix(webhook, "crm.lead.add", {"fields": fields, "params": {"REGISTER_SONET_EVENT": "Y"}})
    if not isinstance(result, int) and not (isinstance(result, str) and result.isdigit()):
        raise _unexpected(Kind.BITRIX24, 200)
    return str(result)


def bitrix24_note_add(webhook: str, lead_id: str, text: str) -> None:
    _bitrix(webhook, "crm.timeline.comment.add", {"fields": {
        "ENTITY_ID": int(lead_id), "ENTITY_TYPE": "lead", "COMMENT": _html(text)}})
