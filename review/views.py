"""The public page of an owner's answer: the link a visitor sees under an answer taken from a
correction or an added Q/A, so that the fact has an address, like every other source."""

from __future__ import annotations

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from chat.selectors import bot_for_widget
from knowledge.selectors import owner_answer


def answer_page(request: HttpRequest, public_key: str, key: str) -> HttpResponse:
    bot = bot_for_widget(public_key)
    entry = owner_answer(bot=bot, key=key) if bot is not None else None
    if bot is None or entry is None:  # another bot's key, an undone correction: simply not found
        raise Http404("No such answer")
    return render(request, "review/answer.html", {"bot": bot, "entry": entry})
