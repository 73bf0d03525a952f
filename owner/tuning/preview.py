"""The voice page's preview: one question answered under the saved voice and under the edited one,
side by side, before anything is saved. With a model the real chain answers (chat/
pipeline.py, on an unsaved copy of the bot for the edited side); without one the chain can only
give the retrieval answer, so the preview also shows the canned texts, and says so."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from answers import pipeline, replies
from bots.models import Bot
from llm.providers import get_provider
from voice import effective

QUESTION_MAX: Final = 500
CANNED_SHOWN: Final = ("greeting", "handoff", "no_answer", "out_of_hours")


@dataclass(frozen=True)
class Side:
    answer: str
    links: list[dict[str, str]]
    route: str
    prompt: str  # what the voice adds to the system prompt
    canned: list[tuple[str, str]]  # (key, text)
    language: str  # the reply's: the answer, the prompt fragment and the canned texts are in it


def model_configured(bot: Bot) -> bool:
    return get_provider(bot).name != "none"


def _canned(bot: Bot, language: str) -> list[tuple[str, str]]:
    texts: list[tuple[str, str]] = []
    for key in CANNED_SHOWN:
        if key == "out_of_hours":
            texts.append((key, replies.out_of_hours(bot, "", language=language)))
        else:
            texts.append((key, replies.say(bot, key, language=language)))
    return texts


def side(bot: Bot, question: str) -> Side:
    language = replies.reply_language(bot, question) if question else replies.bot_language(bot)
    reply = pipeline.answer(bot=bot, text=question, history=[]) if question else None
    return Side(
        answer=reply.text if reply else "", links=reply.links if reply else [],
        route=str(reply.llm_meta.get("route", "")) if reply else "",
        prompt=effective.settings_for(bot).prompt(language), canned=_canned(bot, language), language=language,
    )


def compare(*, bot: Bot, edited: Bot, question: str) -> dict[str, Any]:
    question = " ".join(question.split())[:QUESTION_MAX]
    return {"question": question, "model": model_configured(bot), "current": side(bot, question),
            "edited": side(edited, question)}
