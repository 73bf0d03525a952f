"""The webhooks messengers post their updates to. Each answers at once (the update is handled by a
worker): 200 for a stored, repeated or ignored update, 403 for a forged one, 400 for a body that is
not an update, 404 for an address no connection has, 413 for a body too large."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from messengers import turns
from messengers.exceptions import BadUpdate
from messengers.models import Connection

TELEGRAM_SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"  # noqa: S105 - a header name


def _refused(status: int, error: str) -> JsonResponse:
    return JsonResponse({"ok": False, "error": error}, status=status)


@csrf_exempt
@require_POST
def telegram_update(request: HttpRequest, key: str) -> JsonResponse:
    try:
        turns.update_receive(kind=Connection.Kind.TELEGRAM, key=key,
                             secret=request.headers.get(TELEGRAM_SECRET_HEADER, ""), body=request.body)
    except turns.UnknownAddress:
        return _refused(404, "unknown webhook address")
    except turns.Forged:
        return _refused(403, "wrong secret token")
    except turns.TooLarge:
        return _refused(413, "update too large")
    except BadUpdate as exc:
        return _refused(400, f"not a Telegram update: {exc}")
    return JsonResponse({"ok": True})
