"""Canned texts the chain says without any model, Russian first, English second.

They are data, not templates scattered in code: the review of wording happens here, and the tests
check that both languages have every key."""

from __future__ import annotations

from typing import Final

from assistant.bots.models import Bot

OPERATOR_BUTTON_ID: Final = "operator"

TEXTS: Final[dict[str, dict[str, str]]] = {
    "ru": {
        "whoami": (
            "Я — виртуальный помощник «{name}». Отвечаю на вопросы по информации с сайта, "
            "а если не знаю ответа, позову оператора."
        ),
        "whoami_no_handoff": "Я — виртуальный помощник «{name}». Отвечаю на вопросы по информации с сайта.",
        "greeting": "Здравствуйте! Чем могу помочь?",
        "thanks": "Пожалуйста! Если появятся ещё вопросы — пишите.",
        "order": "Подскажите, пожалуйста, номер заказа — так я смогу уточнить, что с ним.",
        "handoff": "Сейчас позову оператора.",
        "handoff_disabled": (
            "Оператора в этом чате сейчас нет. Связаться с компанией можно через контакты на сайте{site}."
        ),
        "handoff_system": "Оператор подключится в ближайшее время. Пока можете описать вопрос подробнее.",
        "no_answer": "К сожалению, точного ответа у меня нет.",
        "no_answer_handoff": " Пригласить оператора? Он во всём разберётся.",
        "operator_button": "Позвать оператора",
        "failure": "Извините, у меня не получилось ответить. Попробуйте спросить ещё раз чуть позже.",
    },
    "en": {
        "whoami": (
            "I am the virtual assistant of {name}. I answer questions from the information on this site, "
            "and call an operator when I do not know the answer."
        ),
        "whoami_no_handoff": (
            "I am the virtual assistant of {name}. I answer questions from the information on this site."
        ),
        "greeting": "Hello! How can I help?",
        "thanks": "You are welcome! Write any time you have another question.",
        "order": "Could you give me your order number, please? Then I can look into it.",
        "handoff": "I am calling an operator now.",
        "handoff_disabled": "There is no operator in this chat right now. Please use the contacts on the site{site}.",
        "handoff_system": "An operator will join shortly. Meanwhile you can describe your question in more detail.",
        "no_answer": "Sorry, I do not have an exact answer to that.",
        "no_answer_handoff": " Shall I invite an operator? They will sort it out.",
        "operator_button": "Call an operator",
        "failure": "Sorry, I could not answer right now. Please try again a little later.",
    },
}


def language(bot: Bot) -> str:
    return bot.language if bot.language in TEXTS else "ru"


def say(bot: Bot, key: str, **values: str) -> str:
    """The canned text `key` in the bot's language, with `{name}`-style values filled in."""
    text = TEXTS[language(bot)][key]
    return text.format(**values) if values else text


def operator_button(bot: Bot) -> dict[str, str]:
    return {"id": OPERATOR_BUTTON_ID, "label": say(bot, "operator_button")}


def whoami(bot: Bot) -> str:
    return say(bot, "whoami" if bot.handoff_enabled else "whoami_no_handoff", name=bot.name)


def handoff_disabled(bot: Bot) -> str:
    site = f": {bot.site_url}" if bot.site_url else ""
    return say(bot, "handoff_disabled", site=site)
