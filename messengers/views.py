"""The webhooks messengers post their updates to. Each answers at once (the update is handled by a
worker): 200 for a stored, repeated or ignored update, 403 for a forged one, 400 for a body that is
not an update, 404 for an address no connection has, 413 for a body too large. Telegram and MAX
read JSON; VK's Callback API reads plain text: `ok`, or the confirmation string for its handshake (any
other answer is an error to VK, which sends the event again)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from bots.selectors import inbox_bots
from messengers import operators, turns
from messengers.exceptions import BadUpdate
from messengers.models import Connection

TELEGRAM_SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"  # noqa: S105 - a header name
MAX_SECRET_HEADER = "X-Max-Bot-Api-Secret"  # noqa: S105 - a header name


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


@csrf_exempt
@require_POST
def max_update(request: HttpRequest, key: str) -> HttpResponse:
    """MAX sends the subscription's secret in a header, checked before the body is read."""
    received = _receive(Connection.Kind.MAX, key, request.headers.get(MAX_SECRET_HEADER, ""), request.body, "MAX")
    return received if isinstance(received, HttpResponse) else JsonResponse({"ok": True})


@login_required
def operator_page(request: HttpRequest) -> HttpResponse:
    """An operator's Telegram: for each bot they work in that has Telegram connected, a one-time
    code that links their chat with the bot (a deep link, or /start op_<code> sent to it), and
    «Отвязать» for a linked one."""
    bots = list(inbox_bots(request.user).filter(
        messenger_connections__kind=Connection.Kind.TELEGRAM,
    ).exclude(messenger_connections__status=Connection.Status.DISCONNECTED).distinct().order_by("name"))
    made: dict[int, str] = {}
    if request.method == "POST":
        bot = next((bot for bot in bots if str(bot.pk) == request.POST.get("bot")), None)
        if bot is None:
            raise PermissionDenied()
        if request.POST.get("action") == "unlink":
            operators.link_remove(user=request.user, bot=bot)
            return redirect("messengers:operator")
        try:
            made[bot.pk] = operators.code_make(user=request.user, bot=bot).code
        except operators.NotOperator as exc:
            raise PermissionDenied() from exc
    links = operators.links_of(request.user)
    rows = []
    for bot in bots:
        connection = operators.telegram_of(bot)
        code = made.get(bot.pk, "")
        rows.append({
            "bot": bot, "account": connection.account_name if connection else "", "link": links.get(bot.pk),
            "code": code, "start": f"{operators.PREFIX}{code}" if code else "",
        })
    return render(request, "messengers/operator.html", {
        "title": _("Telegram для операторов"), "rows": rows, "telegram_page": True, "minutes": operators.CODE_MINUTES,
    })
