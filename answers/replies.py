"""Canned texts the chain says without any model, Russian first, English second.

They are data, not templates scattered in code: the review of wording happens here, and the tests
check that both languages have every key. A reply is in the visitor's language when the bot allows
it (`reply_language`), else in the bot's; errors shown in the widget come from here too ("error_*"
keys, one per error code of docs/widget-protocol.md, and "error_frame_*" / "error_lead_*" for the
particular cases of bad_frame and invalid_field)."""

from __future__ import annotations

from typing import Final

from bots.models import Bot
from knowledge import languages
from voice import effective as voice

OPERATOR_BUTTON_ID: Final = "operator"
# Opens the contact form in the widget itself (never sent to the server as a button frame).
LEAD_BUTTON_ID: Final = "lead"

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
        "no_answer_lead": " Оставьте контакт, и мы ответим, как только сможем.",
        "operator_button": "Позвать оператора",
        "failure": "Извините, у меня не получилось ответить. Попробуйте спросить ещё раз чуть позже.",
        "excerpt_lead": "",
        "understood": "Вы имели в виду: {text}\n",
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
        "error_rate_limited_leads": "Слишком много заявок подряд. Подождите {seconds} с и попробуйте снова.",
        "error_rate_limited_conversations": (
            "Слишком много новых разговоров подряд. Подождите {seconds} с и попробуйте снова."
        ),
        "error_rate_limited_handoffs": (
            "Слишком много вызовов оператора подряд. Подождите {seconds} с и попробуйте снова."
        ),
        "error_rate_limited_ratings": "Слишком много оценок подряд. Подождите {seconds} с и попробуйте снова.",
        "error_too_many_sockets": (
            "С этого адреса открыто слишком много окон чата. Закройте лишние вкладки и обновите страницу."
        ),
        "error_unavailable": "Связь с сервером ненадолго прервалась. Повторим через {seconds} с, ничего не потеряется.",
        "error_already_taken": "Разговор уже ведёт {holder}.",
        "error_invalid_field": "Проверьте, пожалуйста, поле «{field}».",
        "error_lead_unavailable": (
            "Оставить контакт здесь сейчас нельзя. Свяжитесь с нами через контакты на сайте."
        ),
        "error_frame_not_text": "Чат принимает только текстовые сообщения (JSON).",
        "error_frame_not_json": "Не удалось разобрать сообщение: это не JSON.",
        "error_frame_too_deep": "Не удалось разобрать сообщение: слишком глубокая вложенность.",
        "error_frame_not_object": "Не удалось разобрать сообщение: ожидался объект JSON.",
        "error_frame_unknown_type": "Не удалось разобрать сообщение: неизвестный тип.",
        "error_frame_rating": "Оценка может быть только 1 (полезно) или -1 (не помогло).",
        "error_frame_button": "Эта кнопка больше не работает. Обновите страницу.",
        "error_frame_message_id": "Неверный идентификатор сообщения.",
        "error_csat_stars": "Оценка — от 1 до 5 звёзд.",
        "error_csat_comment": "Комментарий слишком длинный: не больше {limit} знаков.",
        "error_csat_not_found": "Этот разговор не найден.",
        "error_csat_not_closed": "Оценить разговор можно, когда он завершён.",
        "error_csat_already": "Спасибо, этот разговор уже оценён.",
        "error_lead_consent": "Без согласия на обработку персональных данных мы не можем сохранить контакт.",
        "error_lead_name": "Как к вам обращаться? Укажите имя.",
        "error_lead_name_too_long": "Имя слишком длинное: не больше {limit} знаков.",
        "error_lead_contact": "Укажите телефон или e-mail, чтобы мы могли связаться с вами.",
        "error_lead_phone_unreadable": "Не получилось разобрать номер телефона. Пример: +7 916 123-45-67.",
        "error_lead_phone_invalid": "Такого номера телефона не бывает. Проверьте цифры, пример: +7 916 123-45-67.",
        "error_lead_email": "Проверьте адрес почты: похоже, в нём ошибка.",
        "operator_joined": "Оператор {name} на связи.",
        "operator_released": "Оператор вернул разговор виртуальному помощнику. Я снова отвечаю на ваши вопросы.",
        "operator_closed": "Оператор завершил разговор. Если появятся вопросы, напишите нам снова.",
        "still_waiting": "Оператор уже приглашён и ответит здесь, как только освободится.",
        "operators_busy": "Операторы пока заняты. Оставьте контакт, и мы свяжемся с вами.",
        "operators_away": (
            "Сейчас никого из операторов нет на месте. Оставьте контакт, и мы свяжемся с вами. "
            "Если оператор появится раньше, он ответит здесь."
        ),
        "operators_away_no_form": (
            "Сейчас никого из операторов нет на месте. Оператор ответит здесь, как только появится."
        ),
        "out_of_hours": (
            "Сейчас операторы не работают{hours}. Оставьте контакт, и мы свяжемся с вами в рабочее время."
        ),
        "out_of_hours_no_form": (
            "Сейчас операторы не работают{hours}. Связаться с компанией можно через контакты на сайте{site}."
        ),
        "hours": " (часы работы: {schedule})",
        "lead_button": "Оставить контакт",
        "lead_consent": (
            "Я даю согласие на обработку моих персональных данных в соответствии "
            "с политикой обработки персональных данных."
        ),
        "lead_saved": "Спасибо, {name}! Мы свяжемся с вами: {contact}.",
        # Messengers (messengers/): what a visitor sent that is not text, and the bot's answer to it.
        "text_only": "Я понимаю только текст. Напишите, пожалуйста, вопрос словами.",
        "attachment_photo": "[фото]",
        "attachment_video": "[видео]",
        "attachment_voice": "[голосовое сообщение]",
        "attachment_audio": "[аудио]",
        "attachment_sticker": "[стикер]",
        "attachment_file": "[файл]",
        "attachment_location": "[место на карте]",
        "contact_share_button": "Поделиться номером",
        # A messenger without a button that shares the phone (VK): the visitor types it.
        "contact_type_phone": (
            "Чтобы оставить контакт, напишите в ответ номер телефона. Отправляя его, вы подтверждаете:"
        ),
        "escalation_offer": "Похоже, я не смог помочь. Позвать оператора? Он ответит здесь же.",
        "order_status": "Заказ {number}: {status}.",
        "order_date": "\nОжидаемая дата доставки: {date}.",
        "order_tracking": "\nОтследить посылку можно по ссылке ниже.",
        "order_tracking_link": "Отследить посылку",
        "order_not_found": (
            "Я не нашёл заказ с таким номером ({number}). Проверьте, пожалуйста, номер — "
            "или позовите оператора, он поможет."
        ),
        "order_not_found_factor": (
            "Я не нашёл заказ {number} с такими данными. Проверьте номер и телефон или e-mail — "
            "или позовите оператора, он поможет."
        ),
        "order_unavailable": (
            "Не могу проверить заказ сейчас: система заказов не отвечает. Попробуйте чуть позже "
            "или позовите оператора."
        ),
        "order_factor_ask": (
            "Чтобы показать заказ {number}, напишите, пожалуйста, последние 4 цифры телефона "
            "или e-mail, указанные в заказе."
        ),
        "order_bad_number": (
            "Это не похоже на номер заказа: он слишком длинный. Проверьте номер, пожалуйста, "
            "или позовите оператора."
        ),
        "order_limited": (
            "Слишком много проверок заказов подряд. Подождите {seconds} с и попробуйте снова "
            "или позовите оператора."
        ),
        "order_no_endpoint": (
            "Проверить заказ в этом чате я пока не могу. Оператор подскажет, что с ним: "
            "назовите ему номер заказа."
        ),
        "error_rate_limited_orders": "Слишком много проверок заказов подряд. Подождите {seconds} с и попробуйте снова.",
        "error_rate_limited_pages": "Слишком много переходов подряд. Подождите {seconds} с.",
        "products_found": "Вот что нашлось в каталоге{filters}:",
        "products_none": (
            "В каталоге не нашлось подходящего товара{filters}. Уточните, что ищете, или спросите оператора."
        ),
        "products_none_category": (
            "В каталоге не нашлось подходящего товара{filters}. Посмотрите раздел «{category}» — ссылка ниже."
        ),
        "products_under": "до {high}",
        "products_over": "от {low}",
        "products_between": "от {low} до {high}",
        "products_in_stock": "в наличии",
        "products_out": "нет в наличии",
        # An operator's own Telegram chat (messengers/operators.py).
        "tg_operator_linked": (
            "Готово: сюда будут приходить разговоры бота «{name}», ждущие оператора. Чтобы ответить "
            "посетителю, ответьте на сообщение о его разговоре."
        ),
        "tg_operator_code_bad": (
            "Код не подошёл: он неверный, устарел или уже использован. Получите новый на странице "
            "«Telegram» во «Входящих»."
        ),
        "tg_operator_waiting": "Ждёт оператора: {name} ({channel})",
        "tg_operator_take": "Взять",
        "tg_operator_taken": "Разговор у вас. Отвечайте на это сообщение — ответ уйдёт посетителю.",
        "tg_operator_release": "Вернуть боту",
        "tg_operator_close": "Завершить",
        "tg_operator_released": "Разговор вернулся боту.",
        "tg_operator_closed": "Разговор завершён.",
        "tg_operator_already_taken": "Уже взял(а) {holder}.",
        "tg_operator_notice_taken": "Взял(а) {holder}.",
        "tg_operator_conversation_closed": "Разговор уже завершён.",
        "tg_operator_not_found": "Разговор не найден или недоступен вам.",
        "tg_operator_hint": "Чтобы ответить посетителю, ответьте на сообщение о его разговоре («Ответить»).",
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
        "no_answer_lead": " Leave your contact and we will answer as soon as we can.",
        "operator_button": "Call an operator",
        "failure": "Sorry, I could not answer right now. Please try again a little later.",
        "excerpt_lead": "Here is what our site says (in Russian):\n",
        "understood": "Did you mean: {text}\n",
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
        "error_rate_limited_leads": "Too many requests in a row. Please wait {seconds} s and try again.",
        "error_rate_limited_conversations": (
            "Too many new conversations in a row. Please wait {seconds} s and try again."
        ),
        "error_rate_limited_handoffs": "Too many operator requests in a row. Please wait {seconds} s and try again.",
        "error_rate_limited_ratings": "Too many ratings in a row. Please wait {seconds} s and try again.",
        "error_too_many_sockets": "Too many chat windows are open from this address. Close some tabs and reload.",
        "error_unavailable": "The server was unreachable for a moment. Retrying in {seconds} s; nothing is lost.",
        "error_already_taken": "{holder} is already handling this conversation.",
        "error_invalid_field": "Please check the field «{field}».",
        "error_lead_unavailable": "A contact cannot be left here right now. Please use the contacts on the site.",
        "error_frame_not_text": "The chat accepts text messages (JSON) only.",
        "error_frame_not_json": "Could not read the message: it is not JSON.",
        "error_frame_too_deep": "Could not read the message: it is nested too deeply.",
        "error_frame_not_object": "Could not read the message: a JSON object was expected.",
        "error_frame_unknown_type": "Could not read the message: unknown type.",
        "error_frame_rating": "A rating can only be 1 (helpful) or -1 (not helpful).",
        "error_frame_button": "This button no longer works. Please reload the page.",
        "error_frame_message_id": "Invalid message id.",
        "error_csat_stars": "A rating is 1 to 5 stars.",
        "error_csat_comment": "The comment is too long: at most {limit} characters.",
        "error_csat_not_found": "This conversation was not found.",
        "error_csat_not_closed": "A conversation can be rated once it has ended.",
        "error_csat_already": "Thank you, this conversation has been rated already.",
        "error_lead_consent": "Without your consent to the processing of personal data we cannot keep your contact.",
        "error_lead_name": "How should we address you? Please give your name.",
        "error_lead_name_too_long": "The name is too long: {limit} characters at most.",
        "error_lead_contact": "Please give a phone number or an e-mail so that we can reach you.",
        "error_lead_phone_unreadable": "Could not read the phone number. Example: +7 916 123-45-67.",
        "error_lead_phone_invalid": "There is no such phone number. Please check the digits, e.g. +7 916 123-45-67.",
        "error_lead_email": "Please check the e-mail address: it seems to have a mistake.",
        "operator_joined": "{name} from our team has joined the chat.",
        "operator_released": "The operator handed the conversation back to me, the virtual assistant. Ask away.",
        "operator_closed": "The operator closed the conversation. Write again any time you have a question.",
        "still_waiting": "An operator has been called and will reply here as soon as they are free.",
        "operators_busy": "All operators are busy. Leave your contact and we will get back to you.",
        "operators_away": (
            "None of our operators is available right now. Leave your contact and we will get back to you. "
            "If one comes back sooner, they will reply here."
        ),
        "operators_away_no_form": (
            "None of our operators is available right now. One will reply here as soon as they are back."
        ),
        "out_of_hours": (
            "Our operators are not working right now{hours}. "
            "Leave your contact and we will get back to you during working hours."
        ),
        "out_of_hours_no_form": (
            "Our operators are not working right now{hours}. Please use the contacts on the site{site}."
        ),
        "hours": " (working hours: {schedule})",
        "lead_button": "Leave a contact",
        "lead_consent": "I consent to the processing of my personal data under the personal data policy.",
        "lead_saved": "Thank you, {name}! We will contact you: {contact}.",
        "text_only": "I only understand text. Please type your question.",
        "attachment_photo": "[photo]",
        "attachment_video": "[video]",
        "attachment_voice": "[voice message]",
        "attachment_audio": "[audio]",
        "attachment_sticker": "[sticker]",
        "attachment_file": "[file]",
        "attachment_location": "[location]",
        "contact_share_button": "Share my phone number",
        "contact_type_phone": "To leave your contact, reply with your phone number. By sending it you confirm:",
        "escalation_offer": "It looks like I could not help. Shall I call an operator? They will reply right here.",
        "order_status": "Order {number}: {status}.",
        "order_date": "\nExpected delivery date: {date}.",
        "order_tracking": "\nYou can track the parcel with the link below.",
        "order_tracking_link": "Track the parcel",
        "order_not_found": (
            "I could not find an order with this number ({number}). Please check the number, "
            "or call an operator: they will help."
        ),
        "order_not_found_factor": (
            "I could not find order {number} with these details. Please check the number and the phone "
            "or e-mail, or call an operator: they will help."
        ),
        "order_unavailable": (
            "I cannot check the order right now: the order system does not answer. Please try again "
            "a little later, or call an operator."
        ),
        "order_factor_ask": (
            "To show order {number}, please write the last 4 digits of the phone number "
            "or the e-mail given in the order."
        ),
        "order_bad_number": (
            "This does not look like an order number: it is too long. Please check it, or call an operator."
        ),
        "order_limited": (
            "Too many order checks in a row. Please wait {seconds} s and try again, or call an operator."
        ),
        "order_no_endpoint": (
            "I cannot check orders in this chat yet. An operator will tell you how your order is doing: "
            "give them the order number."
        ),
        "error_rate_limited_orders": "Too many order checks in a row. Please wait {seconds} s and try again.",
        "error_rate_limited_pages": "Too many page views in a row. Please wait {seconds} s.",
        "products_found": "Here is what the catalogue has{filters}:",
        "products_none": (
            "The catalogue has nothing that fits{filters}. Tell me more about what you are looking for, "
            "or ask an operator."
        ),
        "products_none_category": (
            "The catalogue has nothing that fits{filters}. Have a look at the «{category}» section: the link is below."
        ),
        "products_under": "up to {high}",
        "products_over": "from {low}",
        "products_between": "from {low} to {high}",
        "products_in_stock": "in stock",
        "products_out": "out of stock",
        "tg_operator_linked": (
            "Done: conversations of the bot «{name}» waiting for an operator will come here. To answer a "
            "visitor, reply to the message about their conversation."
        ),
        "tg_operator_code_bad": (
            "This code does not work: it is wrong, expired or already used. Get a new one on the "
            "«Telegram» page of the inbox."
        ),
        "tg_operator_waiting": "Waiting for an operator: {name} ({channel})",
        "tg_operator_take": "Take",
        "tg_operator_taken": "The conversation is yours. Reply to this message and the visitor gets your answer.",
        "tg_operator_release": "Back to the bot",
        "tg_operator_close": "Close",
        "tg_operator_released": "The conversation is back with the bot.",
        "tg_operator_closed": "The conversation is closed.",
        "tg_operator_already_taken": "{holder} has taken it already.",
        "tg_operator_notice_taken": "Taken by {holder}.",
        "tg_operator_conversation_closed": "The conversation is closed already.",
        "tg_operator_not_found": "The conversation is not found or not yours to answer.",
        "tg_operator_hint": "To answer a visitor, reply to the message about their conversation («Reply»).",
    },
}


def bot_language(bot: Bot) -> str:
    return bot.language if bot.language in TEXTS else "ru"


language = bot_language  # the name callers used before replies had languages per message


text_language = languages.text_language  # "en", "ru" or None (too few letters, or mixed ones)


def reply_language(bot: Bot, text: str) -> str:
    """The language to answer `text` in: the visitor's when the bot allows it, else the bot's."""
    if bot.answers_in_visitor_language:
        found = text_language(text)
        if found in TEXTS:
            return found
    return bot_language(bot)


def say(bot: Bot, key: str, *, language: str | None = None, **values: str) -> str:
    """The canned text `key` in `language` (default: the bot's), with `{name}`-style values filled in.
    The owner's own wording of it wins when there is one (assistant/voice: greeting, handoff, no
    answer, out of hours), and the bot's dictionary applies to every canned text."""
    language = language if language in TEXTS else bot_language(bot)
    own = voice.base_of(bot.voice).canned(language, key) if bot.voice else ""
    if own:  # the owner's text is not a format string: only the known placeholders are filled
        for name, value in values.items():
            own = own.replace("{" + name + "}", value)
        return voice.dictionary_of(bot).canned(own)
    text = TEXTS[language][key]
    text = text.format(**values) if values else text
    return voice.dictionary_of(bot).canned(text) if bot.voice else text


def operator_button(bot: Bot, *, language: str | None = None) -> dict[str, str]:
    return {"id": OPERATOR_BUTTON_ID, "label": say(bot, "operator_button", language=language)}


def lead_button(bot: Bot, *, language: str | None = None) -> dict[str, str]:
    return {"id": LEAD_BUTTON_ID, "label": say(bot, "lead_button", language=language)}


def lead_form_available(bot: Bot) -> bool:
    """A contact may be taken only with consent to a policy the visitor can open (152-FZ)."""
    return bool(bot.privacy_policy_url)


def handoff_buttons(bot: Bot, *, operators_available: bool, language: str | None = None) -> list[dict[str, str]]:
    """The way to a person under a reply: call an operator while one works; otherwise leave a
    contact (when the bot has a privacy policy to consent to); otherwise nothing."""
    if not bot.handoff_enabled:
        return []
    if operators_available:
        return [operator_button(bot, language=language)]
    return [lead_button(bot, language=language)] if lead_form_available(bot) else []


def out_of_hours(bot: Bot, schedule: str, *, language: str | None = None) -> str:
    hours = say(bot, "hours", language=language, schedule=schedule) if schedule else ""
    if lead_form_available(bot):
        return say(bot, "out_of_hours", language=language, hours=hours)
    site = f": {bot.site_url}" if bot.site_url else ""
    return say(bot, "out_of_hours_no_form", language=language, hours=hours, site=site)


def whoami(bot: Bot, *, language: str | None = None) -> str:
    return say(bot, "whoami" if bot.handoff_enabled else "whoami_no_handoff", language=language, name=bot.name)


def handoff_disabled(bot: Bot, *, language: str | None = None) -> str:
    site = f": {bot.site_url}" if bot.site_url else ""
    return say(bot, "handoff_disabled", language=language, site=site)
