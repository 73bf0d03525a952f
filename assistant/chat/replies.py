"""Canned texts the chain says without any model, Russian first, English second.

They are data, not templates scattered in code: the review of wording happens here, and the tests
check that both languages have every key. A reply is in the visitor's language when the bot allows
it (`reply_language`), else in the bot's; errors shown in the widget come from here too ("error_*"
keys, one per error code of docs/widget-protocol.md)."""

from __future__ import annotations

import re
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
        "excerpt_lead": "",
        "error_error": "Что-то пошло не так. Попробуйте ещё раз.",
        "error_bad_frame": "Не удалось разобрать сообщение. Обновите страницу и попробуйте ещё раз.",
        "error_bad_field": "Не удалось разобрать сообщение: поле «{field}» отсутствует или неверное.",
        "error_too_large": "Сообщение слишком большое: не больше {kb} КБ.",
        "error_hello_required": "Чат ещё не готов: сначала нужно представиться (hello).",
        "error_empty": "Напишите, пожалуйста, вопрос: сообщение пустое.",
        "error_too_long": "Сообщение слишком длинное: не больше {limit} знаков. Сократите его, пожалуйста.",
        "error_closed": "Этот разговор завершён. Начните новый, чтобы задать вопрос.",
        "error_not_found": "Сообщение не найдено.",
        "error_handoff_unavailable": (
            "Передать разговор оператору сейчас нельзя. Свяжитесь с нами через контакты на сайте."
        ),
        "error_server_error": "Что-то пошло не так на нашей стороне. Попробуйте ещё раз через минуту.",
        "error_rate_limited": "Слишком много сообщений подряд. Подождите {seconds} с и попробуйте снова.",
        "error_unknown_bot": "Чат не настроен: ключ виджета не найден.",
        "error_origin_refused": "Чат не разрешён на этом сайте.",
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
        "excerpt_lead": "Here is what our site says (in Russian):\n",
        "error_error": "Something went wrong. Please try again.",
        "error_bad_frame": "The message could not be read. Please reload the page and try again.",
        "error_bad_field": "The message could not be read: the field «{field}» is missing or wrong.",
        "error_too_large": "The message is too large: at most {kb} KB.",
        "error_hello_required": "The chat is not ready yet: it has to say hello first.",
        "error_empty": "Please write your question: the message is empty.",
        "error_too_long": "The message is too long: at most {limit} characters. Please shorten it.",
        "error_closed": "This conversation has ended. Start a new one to ask a question.",
        "error_not_found": "Message not found.",
        "error_handoff_unavailable": (
            "The conversation cannot be passed to an operator right now. Please use the contacts on the site."
        ),
        "error_server_error": "Something went wrong on our side. Please try again in a minute.",
        "error_rate_limited": "Too many messages in a row. Please wait {seconds} s and try again.",
        "error_unknown_bot": "The chat is not set up: the widget key was not found.",
        "error_origin_refused": "The chat is not allowed on this site.",
    },
}


_CYRILLIC: Final = re.compile(r"[а-яё]", re.IGNORECASE)
_LATIN: Final = re.compile(r"[a-z]", re.IGNORECASE)


def bot_language(bot: Bot) -> str:
    return bot.language if bot.language in TEXTS else "ru"


language = bot_language  # the name callers used before replies had languages per message


def text_language(text: str) -> str | None:
    """"en" or "ru" when the letters of `text` are clearly one or the other, else None («ok», «5»)."""
    latin, cyrillic = len(_LATIN.findall(text)), len(_CYRILLIC.findall(text))
    if latin >= 3 and latin > 2 * cyrillic:
        return "en"
    if cyrillic >= 3 and cyrillic > 2 * latin:
        return "ru"
    return None


def reply_language(bot: Bot, text: str) -> str:
    """The language to answer `text` in: the visitor's when the bot allows it, else the bot's."""
    if bot.answers_in_visitor_language:
        found = text_language(text)
        if found in TEXTS:
            return found
    return bot_language(bot)


def say(bot: Bot, key: str, *, language: str | None = None, **values: str) -> str:
    """The canned text `key` in `language` (default: the bot's), with `{name}`-style values filled in."""
    text = TEXTS[language if language in TEXTS else bot_language(bot)][key]
    return text.format(**values) if values else text


def operator_button(bot: Bot, *, language: str | None = None) -> dict[str, str]:
    return {"id": OPERATOR_BUTTON_ID, "label": say(bot, "operator_button", language=language)}


def whoami(bot: Bot, *, language: str | None = None) -> str:
    return say(bot, "whoami" if bot.handoff_enabled else "whoami_no_handoff", language=language, name=bot.name)


def handoff_disabled(bot: Bot, *, language: str | None = None) -> str:
    site = f": {bot.site_url}" if bot.site_url else ""
    return say(bot, "handoff_disabled", language=language, site=site)
