"""The operators' inbox pages: server-rendered, made live by static/assistant/inbox.js over the
operator socket. Thin: scope by `access`, read through chat selectors, render."""

from __future__ import annotations

import csv
import itertools
import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final

from django.contrib.auth.decorators import login_required
from django.contrib.staticfiles import finders
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.shortcuts import render
from django.template.defaultfilters import date as date_format
from django.urls import reverse
from django.utils import timezone
from django.utils.text import Truncator
from django.utils.timesince import timesince
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_POST

from bots.selectors import inbox_members
from chat import frames as chat_frames
from chat import leads, presence, selectors
from chat.exceptions import NotFound
from chat.models import Conversation
from inbox import canned, copilot, notes, push
from inbox.access import access_conversation, inbox_bot_ids

LEADS_PAGE = 200


def _texts() -> dict[str, Any]:
    """What static/assistant/inbox.js says, in the page's language ({name} are filled in by it)."""
    return {
        "visitor": _("Посетитель"), "waits": _("ждёт {n} мин"), "waits_now": _("ждёт меньше минуты"),
        "late": _("дольше срока ({n} мин)"), "late_count": _("дольше срока: {n}"),
        "holder": _("Ведёт: {name}"),
        "notify_title": _("Посетитель ждёт оператора — {bot}"), "unanswered": _("Бот не смог ответить на этот вопрос"),
        "source": _("Источник"), "card": _("Товар"), "out_of_stock": _("нет в наличии"),
        "offline": _("Нет связи. Переподключаемся…"),
        "refused": _("Входящие открываются только с адреса этого сервера."), "error": _("Что-то пошло не так."),
        "canned_empty": _("Нет шаблонов на «{q}»"), "note": _("Заметка"),
        "copilot_insert": _("Вставить"), "copilot_question": _("Вопрос: {q}"),
        "copilot_insert_label": _("Вставить в ответ: {title}"),
        "copilot_drafting": _("Составляем черновик…"), "copilot_draft_label": _("Черновик ответа"),
        "present": _("На месте"), "away": _("Отошёл(ла)"),
        "present_hint": _("Вам приходят новые разговоры. Нажмите, если отходите."),
        "away_hint": _("Новые разговоры вам не приходят. Нажмите, когда вернётесь."),
        "channels": {"telegram": "Telegram", "vk": _("ВКонтакте"), "max": "MAX"},
        "roles": {"visitor": _("Посетитель"), "bot": _("Бот"), "operator": _("Оператор"), "system": _("Система")},
        "states": {
            "bot": _("отвечает бот"), "waiting_operator": _("ждёт оператора"), "operator": _("у оператора"),
            "closed": _("закрыт"),
        },
    }


@dataclass(frozen=True)
class Row:
    """One conversation of the list as templates/inbox/_row.html shows it (inbox.js draws the
    same row from a Conversation frame, `renderRow`). What the template computed per row (a
    reversed URL, two translated phrases, the shortened preview) is made here in one pass, with
    the same text: with 500 waiting conversations those tags were half of the page's rendering
    (docs/benchmarks.md, "Operators")."""

    c: Conversation
    url: str
    who: str
    when: str
    preview: str
    late: str = ""  # «дольше срока (5 мин)» when it waits past its bot's promised first reply


def late_text(c: Conversation, now: datetime) -> str:
    """The words for a wait past the bot's promised first reply (`operator_sla_minutes`), else ""."""
    minutes = c.bot.operator_sla_minutes
    if c.state != Conversation.State.WAITING_OPERATOR or not c.waiting_since or not minutes:
        return ""
    if now - c.waiting_since <= timedelta(minutes=minutes):
        return ""
    return _("дольше срока ({n} мин)").replace("{n}", str(minutes))


def _rows(conversations: Iterable[Conversation], now: datetime) -> list[Row]:
    # The links are "<inbox>c/<id>/", the `inbox:conversation` route (one reverse per page, not per row).
    base = reverse("inbox:index")
    waits = _("ждёт %(since)s")
    clock = "h:i A" if get_language() == "en" else "H:i"  # as inbox.js's Intl.DateTimeFormat: 09:05 AM / 09:05
    rows = []
    for c in conversations:
        if c.state == Conversation.State.WAITING_OPERATOR and c.waiting_since:
            # Under a minute timesince says «0 минут»: the same words as inbox.js then.
            fresh = now - c.waiting_since < timedelta(minutes=1)
            when = _("ждёт меньше минуты") if fresh else waits % {"since": timesince(c.waiting_since, now)}
        else:
            when = date_format(timezone.localtime(c.updated_at), clock)
        preview = c.last_message.text if c.last_message else ""  # type: ignore[attr-defined]
        rows.append(Row(c, f"{base}c/{c.pk}/", c.visitor_label, when,
                        Truncator(preview).chars(90), late_text(c, now)))
    return rows


FIRST_PAINT_ROWS: Final = 40


def _context(request: HttpRequest, bot_ids: set[int], *, rows: bool = True, **extra: Any) -> dict[str, Any]:
    queue = selectors.inbox_queue(bot_ids=bot_ids, operator_id=int(request.user.pk or 0))
    now = timezone.now()
    # The page paints a screenful of the waiting; the socket's `queue` frame brings every row a moment
    # later (inbox.js renders it whole). 500 rows in the HTML took 1.4 s to first paint on a phone.
    lists = {"waiting": queue.waiting[:FIRST_PAINT_ROWS], "mine": queue.mine, "recent": queue.recent}
    return {
        "queue": queue, "now": now, "operator_name": chat_frames.display_name(request.user),
        "rows": {name: _rows(items, now) for name, items in lists.items()} if rows else None,
        "waiting_more": max(0, len(queue.waiting) - FIRST_PAINT_ROWS),
        "late_count": sum(1 for c in queue.waiting if late_text(c, now)),
        "has_bots": bool(bot_ids), "texts": _texts(), **extra,
    }


def _transcript(messages: list[Any], notes_: list[Any]) -> list[tuple[str, Any]]:
    """Messages and operators' notes in the order they were written, for templates/inbox/inbox.html."""
    items = [("message", m) for m in messages] + [("note", n) for n in notes_ if not messages
                                                   or n.created_at >= messages[0].created_at]
    return sorted(items, key=lambda item: item[1].created_at)


def _transfer_to(current: Conversation, user: Any) -> list[tuple[int, str]]:
    """Whom the conversation may be handed to, by name; those not on hand say so."""
    away = presence.away_ids(current.bot)
    return [(u.pk, _("%(name)s — отошёл(ла)") % {"name": chat_frames.display_name(u)} if u.pk in away
             else chat_frames.display_name(u)) for u in inbox_members(current.bot_id) if u.pk != user.pk]


@login_required
def inbox(request: HttpRequest) -> HttpResponse:
    """The queue: waiting conversations first (longest wait on top), mine, recent."""
    bot_ids = inbox_bot_ids(request.user)
    context = _context(request, bot_ids, title=_("Входящие"), presence_away=presence.is_away(request.user))
    return render(request, "inbox/inbox.html", context)


@login_required
def conversation(request: HttpRequest, conversation_id: int) -> HttpResponse:
    """The queue beside one conversation's transcript and reply box."""
    bot_ids = inbox_bot_ids(request.user)
    try:
        current = access_conversation(request.user, conversation_id, bot_ids=bot_ids)
    except NotFound as exc:
        raise Http404(exc.message) from exc
    messages = selectors.transcript(current)
    name = chat_frames.display_name(request.user)
    context = _context(
        request, bot_ids, title=_("Разговор #%(id)s") % {"id": current.pk}, current=current, messages=messages,
        unanswered=selectors.unanswered_question_ids(messages),
        mine=current.assigned_to_id == request.user.pk,
        canned=canned.canned_replies_for(current, operator_name=name),
        transcript=_transcript(messages, notes.notes_of(current)),
        transfer_to=_transfer_to(current, request.user),
        copilot_draft=copilot.model_ready(current.bot), presence_away=presence.is_away(request.user),
    )
    return render(request, "inbox/inbox.html", context)


@login_required
def leads_page(request: HttpRequest) -> HttpResponse:
    bot_ids = inbox_bot_ids(request.user)
    rows = selectors.leads_for_bots(bot_ids=bot_ids)[:LEADS_PAGE]
    return render(request, "inbox/leads.html", _context(request, bot_ids, rows=False, title=_("Контакты"), leads=rows))


class _Echo:
    def write(self, value: str) -> str:
        return value


@login_required
def leads_csv(request: HttpRequest) -> StreamingHttpResponse:
    """Every lead of the user's bots as CSV (UTF-8 with BOM, so Excel reads Cyrillic)."""
    writer = csv.writer(_Echo())
    queryset = selectors.leads_for_bots(bot_ids=inbox_bot_ids(request.user)).iterator()
    rows = (writer.writerow(row) for row in leads.lead_csv_rows(queryset))
    response = StreamingHttpResponse(itertools.chain(["\ufeff"], rows), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="leads.csv"'
    return response



PUSH_MAX_BODY: Final = 4096  # a subscription's JSON is about 500 bytes


def _push_body(request: HttpRequest) -> tuple[Any, JsonResponse | None]:
    """The JSON a push request sent, or the refusal to answer with (not signed in, too big, not JSON)."""
    if not request.user.is_authenticated:
        return None, JsonResponse({"error": _("Войдите, чтобы включить уведомления.")}, status=403)
    if len(request.body) > PUSH_MAX_BODY:
        return None, JsonResponse({"error": _("Слишком большой запрос: подписка занимает меньше 4 КБ.")}, status=413)
    try:
        return json.loads(request.body), None
    except (ValueError, UnicodeDecodeError):
        return None, JsonResponse({"error": _("Запрос должен быть в JSON.")}, status=400)


@require_POST
def push_subscribe(request: HttpRequest) -> JsonResponse:
    """Store this browser's Web Push subscription (PushSubscription.toJSON()) for the signed-in user."""
    data, refused = _push_body(request)
    if refused is not None:
        return refused
    try:
        push.subscription_save(user=request.user, data=data, language=get_language() or "")
    except push.PushError as exc:
        return JsonResponse({"error": exc.message}, status=400)
    return JsonResponse({"ok": True})


@require_POST
def push_unsubscribe(request: HttpRequest) -> JsonResponse:
    """Forget this browser's subscription ({"endpoint": ...}); only the signed-in user's own."""
    data, refused = _push_body(request)
    if refused is not None:
        return refused
    endpoint = data.get("endpoint") if isinstance(data, dict) else None
    if not push.subscription_delete(user=request.user, endpoint=endpoint):
        return JsonResponse({"error": _("У вас нет такой подписки.")}, status=404)
    return JsonResponse({"ok": True})


@require_GET
def service_worker(request: HttpRequest) -> HttpResponse:
    """static/assistant/inbox-sw.js from /inbox/sw.js: a worker's scope is the folder it is served
    from, so it covers every inbox page (the notice's click opens one)."""
    found = finders.find("assistant/inbox-sw.js")
    if not found:
        raise Http404("inbox-sw.js")
    with open(str(found), encoding="utf-8") as script:
        response = HttpResponse(script.read(), content_type="application/javascript; charset=utf-8")
    response["Cache-Control"] = "no-cache"
    response["Service-Worker-Allowed"] = reverse("inbox:index")
    return response
