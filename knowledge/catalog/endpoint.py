"""One call to a shop's order endpoint, and what its answer says.

The call goes through the crawler's SSRF-safe client (core/http.py): private addresses are
refused unless the installation allows them, every attempt has ORDER_TIMEOUT seconds, a dead or
slow endpoint (connection refused, timeout, 5xx) gets ORDER_RETRIES more attempts and nothing else
does. Redirects are followed only within the endpoint's own origin: the secret headers go with the
request, and a redirect to another host (a private address above all) must not carry them there.

What must stay true:
- Only three outcomes: found (with a status read by the owner's JSON pointer), not_found (404/410),
  unavailable (everything else, with a reason for the owner). A body that is not JSON, HTML, JSON
  without a status, a status that is not text: unavailable, never a guess.
- Every value shown to a visitor is read from the response by a pointer and cleaned here (no
  control characters, bounded length; a tracking link only as an http(s) address).
- The response body is never returned whole nor logged: only the fields below leave this module.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Final, Literal
from urllib.parse import quote, urlsplit

import jsonpointer
from django.conf import settings
from django.utils.translation import gettext_noop

from core import http
from core.texts import Text, shown, stored
from knowledge.catalog import secrets
from knowledge.catalog.exceptions import SecretsUnreadable
from knowledge.catalog.models import OrderEndpoint

Outcome = Literal["found", "not_found", "unavailable"]
MAX_STATUS: Final = 200
MAX_DATE: Final = 60
MAX_LINK: Final = 500
_NOT_FOUND: Final = frozenset({404, 410})
_RETRY_STATUSES: Final = frozenset({500, 502, 503, 504})
_CONTROL: Final = dict.fromkeys([*range(0, 32), 127], " ")


@dataclass(frozen=True)
class Order:
    status: str
    delivery_date: date | None = None  # when the response gave an ISO date
    date_text: str = ""  # the date as the response gave it, when it was not ISO
    tracking_url: str = ""
    # For the second factor only: compared, never shown, never stored.
    phone: str = field(default="", repr=False)
    email: str = field(default="", repr=False)


@dataclass(frozen=True)
class Fetched:
    outcome: Outcome
    order: Order | None = None
    http_status: int | None = None
    text: Text = ""  # why, a stored text (core/texts.py) for the lookup log
    duration_ms: float = 0.0
    attempts: int = 0

    @property
    def reason(self) -> str:
        """Why, in the active language."""
        return shown(self.text)


def order_url(endpoint: OrderEndpoint, number: str) -> str:
    """The template with the number put in as one path/query component (quoted: "/" and "?" too)."""
    return endpoint.url_template.replace("{number}", quote(number, safe=""))


_clients: dict[tuple[Any, ...], http.SafeClient] = {}
_clients_lock = threading.Lock()


def make_client() -> http.SafeClient:
    """The process's client with the order limits, shared by every lookup (SafeClient is
    thread-safe): a new httpx client per lookup would build a TLS context and a connection each
    time, tens of milliseconds. Keyed by the settings it was made with, so a changed setting
    (tests, a reload) gets a client of its own."""
    key = (settings.ORDER_TIMEOUT, settings.ORDER_MAX_BYTES, settings.CRAWL_ALLOW_PRIVATE,
           tuple(getattr(settings, "CRAWL_ALLOWED_NETWORKS", [])))
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            client = _clients[key] = http.SafeClient(
                timeout=settings.ORDER_TIMEOUT, max_bytes=settings.ORDER_MAX_BYTES, max_redirects=3
            )
        return client


def order_fetch(*, endpoint: OrderEndpoint, number: str, client: http.SafeClient | None = None) -> Fetched:
    """Ask the endpoint about `number`. Never raises for anything the endpoint or the network does."""
    started = time.perf_counter()
    client = client or make_client()
    try:
        headers = {"Accept": "application/json", **secrets.unseal(endpoint.headers_token)}
    except SecretsUnreadable as exc:
        return Fetched("unavailable", text=exc.text, duration_ms=_ms(started))
    url = order_url(endpoint, number)
    result, attempts = _attempts(client, url, headers)
    if not isinstance(result, http.Response):
        return Fetched("unavailable", text=result, duration_ms=_ms(started), attempts=attempts)
    fetched = _read(endpoint, result)
    return Fetched(fetched.outcome, fetched.order, result.status, fetched.text, _ms(started), attempts)


def _attempts(client: http.SafeClient, url: str, headers: dict[str, str]) -> tuple[http.Response | Text, int]:
    """The response, or the reason there is none; a retry only for what a second try may fix."""
    origin = _origin(url)
    result: http.Response | Text = ""
    for attempt in range(1, settings.ORDER_RETRIES + 2):
        try:
            result = client.get(url, headers=headers, follow=lambda target: _origin(target) == origin)
        except (http.FetchTimeout, http.Unreachable) as exc:
            result = exc.text
            continue
        except http.FetchError as exc:  # refused address, too large, too many redirects: final
            return exc.text, attempt
        if isinstance(result, http.Response) and result.status in _RETRY_STATUSES:
            continue
        return result, attempt
    return result, settings.ORDER_RETRIES + 1


def _read(endpoint: OrderEndpoint, response: http.Response) -> Fetched:
    status = response.status
    if status in _NOT_FOUND:
        return Fetched("not_found")
    if http.redirect_target(response) is not None:
        return Fetched("unavailable", text=stored(gettext_noop("переадресация на другой адрес — по ней не идём")))
    if not 200 <= status < 300:
        return Fetched("unavailable", text=stored(gettext_noop("ответ %(status)s"), status=status))
    if response.media_type == "text/html" or response.body.lstrip()[:1] == b"<":
        return Fetched("unavailable", text=stored(gettext_noop("вместо JSON пришла HTML-страница")))
    try:
        document = json.loads(response.body)
    except (ValueError, UnicodeDecodeError):
        return Fetched("unavailable", text=stored(gettext_noop("ответ не JSON")))
    order_status = _text(_at(document, endpoint.status_pointer), MAX_STATUS)
    if not order_status:
        return Fetched("unavailable", text=stored(gettext_noop("в ответе нет статуса по указателю %(pointer)s"),
                                                          pointer=endpoint.status_pointer))
    delivery, date_text = _date(_at(document, endpoint.date_pointer))
    order = Order(
        status=order_status, delivery_date=delivery, date_text=date_text,
        tracking_url=_link(_at(document, endpoint.tracking_pointer)),
        phone=_text(_at(document, endpoint.phone_pointer), 40), email=_text(_at(document, endpoint.email_pointer), 254),
    )
    return Fetched("found", order)


def _at(document: Any, pointer: str) -> Any:
    if not pointer:
        return None
    try:
        return jsonpointer.resolve_pointer(document, pointer, None)
    except (jsonpointer.JsonPointerException, TypeError):
        return None


def _text(value: Any, limit: int) -> str:
    """A scalar as one clean line; containers, booleans and null are not text."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return ""
    text = " ".join(str(value).translate(_CONTROL).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _date(value: Any) -> tuple[date | None, str]:
    text = _text(value, MAX_DATE)
    if not text:
        return None, ""
    try:
        return datetime.fromisoformat(text).date(), ""
    except ValueError:
        pass
    try:
        return date.fromisoformat(text), ""
    except ValueError:
        return None, text


def _link(value: Any) -> str:
    text = _text(value, MAX_LINK)
    parts = urlsplit(text) if text else None
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc or " " in text:
        return ""
    return text


def _origin(url: str) -> tuple[str, str]:
    parts = urlsplit(url)
    return parts.scheme, parts.netloc.lower()


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 2)
