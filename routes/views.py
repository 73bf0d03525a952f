"""The signed intake of customer reviews: POST /routes/reviews/<bot slug>/ with one review as JSON.

Answers: 201 created, 200 already known (the same review sent again), 400 with the problems,
401 a missing or wrong signature, 404 an unknown bot, 405 anything but POST."""

from __future__ import annotations

from django.http import HttpRequest, JsonResponse
from django.utils.translation import gettext as _
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from bots.models import Bot
from chat.webhooks import SIGNATURE_HEADER
from routes.reviews import ReviewsRefused, review_receive, signature_valid


@csrf_exempt
@require_POST
def review_intake(request: HttpRequest, slug: str) -> JsonResponse:
    bot = Bot.objects.filter(slug=slug).first()
    if bot is None:
        return JsonResponse({"ok": False, "error": _("Бот не найден.")}, status=404)
    body = request.body
    if not signature_valid(bot, body, request.headers.get(SIGNATURE_HEADER, "")):
        return JsonResponse({"ok": False, "error": _("Подпись запроса неверна или отсутствует.")}, status=401)
    try:
        review, created = review_receive(bot=bot, body=body)
    except ReviewsRefused as exc:
        return JsonResponse({"ok": False, "error": _("Отзыв не принят."), "problems": exc.problems}, status=400)
    return JsonResponse({"ok": True, "review": review.pk, "created": created}, status=201 if created else 200)
