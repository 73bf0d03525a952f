"""The webhooks messengers post their updates to. Each answers at once (the update is handled by a
worker): 200 for a stored, repeated or ignored update, 403 for a forged one, 400 for a body that is
not an update, 404 for an address no connection has, 413 for a body too large. Telegram reads
JSON; VK's Callback API reads plain text: `ok`, or the confirmation string for its handshake (any
other answer is an error to VK, which sends the event again)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from messengers import turns
from messengers.exceptions import BadUpdate
from messengers.models import Connection

TELEGRAM_SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"  # noqa: S105 - a header name


def _refused(status: int, error: str) -> JsonResponse:
    return JsonResponse({"ok": False, "error": error}, status=status)


def _receive(kind: str, key: str, secret: str | None, body: bytes, name: str) -> turns.Received | JsonResponse:
    try:
        return turns.update_receive(kind=kind, key=key, secret=secret, body=body)
    except turns.UnknownAddress:
        return _refused(404, "unknown webhook address")
    except turns.Forged:
        return _refused(403, "wrong secret token")
    except turns.TooLarge:
        return _refused(413, "update too large")
    except BadUpdate as exc:
        return _refused(400, f"not a {name} update: {exc}")


@csrf_exempt
@require_POST
def telegram_update(request: HttpRequest, key: str) -> HttpResponse:
    received = _receive(Connection.Kind.TELEGRAM, key, request.headers.get(TELEGRAM_SECRET_HEADER, ""), request.body,
                        "Telegram")
    return received if isinstance(received, HttpResponse) else JsonResponse({"ok": True})


@csrf_exempt
@require_POST
def vk_update(request: HttpRequest, key: str) -> HttpResponse:
    """VK's secret is in the body (`secret`), read once the body is parsed."""
    received = _receive(Connection.Kind.VK, key, None, request.body, "VK")
    if isinstance(received, HttpResponse):
        return received
    return HttpResponse(received.confirmation or "ok", content_type="text/plain; charset=utf-8")
