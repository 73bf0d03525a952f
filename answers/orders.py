"""The order route of the answer chain: «где мой заказ 48213?» answered from the shop's own system.

The rules decide that a message is about an order (behavior/intents.py); this module decides what
to say, and the reply is a template (replies.py) filled only from the endpoint's response: no
model ever writes an order status, a date or a link.

What must stay true:
- The number comes from the visitor's text by the bot's pattern. Without one the bot asks once, and
  the next message is read as the number (`Caller.awaiting`, kept in the asking message's llm_meta);
  a next message without a number goes back to the normal chain, it is never asked for again.
- With a second factor required, the bot asks for it before any call, and "not found" and "wrong
  factor" read the same: the reply never tells whether an order exists before the factor matched.
- Every lookup is counted against the "order" rate limits before the call, and logged (number,
  result, visitor) through commerce.services; the response body never is.
- Whatever the endpoint does (down, slow, HTML, garbage, a redirect elsewhere), the visitor gets an
  honest «не могу проверить сейчас» with the way to a person, never a guess.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from django.utils import dateformat, translation
from django.utils.translation import gettext_noop

from answers import replies
from behavior import hours
from bots.models import Bot
from core import ratelimit
from core.texts import Text, stored
from knowledge.catalog import endpoint as order_http
from knowledge.catalog import numbers, selectors, services
from knowledge.catalog.models import DEFAULT_NUMBER_PATTERN, OrderEndpoint, OrderLookup

AWAIT_NUMBER: Final = "order_number"
AWAIT_FACTOR: Final = "order_factor"
NO_FACTOR: Final = gettext_noop("в ответе нет телефона и e-mail для проверки")
# A stored text has one form (core/texts.py), so the length follows a colon: «номер длиной 41 знаков» would
# need a count's form. The older wording stays marked: rows written with it are still shown in English.
TOO_LONG: Final = gettext_noop("номер слишком длинный, знаков: %(n)s")
TOO_LONG_BEFORE: Final = gettext_noop("номер из %(n)s знаков")
Result = OrderLookup.Result


@dataclass(frozen=True)
class Caller:
    """Who asks, for the rate limits and the log, and what the bot's last message waits for
    ({"awaiting": AWAIT_NUMBER} or {"awaiting": AWAIT_FACTOR, "order_number": "48213"})."""

    visitor_id: str = ""
    ip: str | None = None
    awaiting: dict[str, str] = field(default_factory=dict)


@dataclass
class OrderAnswer:
    text: str
    links: list[dict[str, str]] = field(default_factory=list)
    buttons: list[dict[str, str]] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)  # "order_result", "awaiting", "order_number"


def awaiting_from(llm_meta: dict[str, Any] | None) -> dict[str, str]:
    """What a stored bot message waits for (services read it from the last bot message), and the
    language it asked in: «48213» or «ivan@example.ru» says nothing about the visitor's language."""
    meta = llm_meta or {}
    wanted, language = meta.get("awaiting"), meta.get("order_language")
    kept = {"language": language} if isinstance(language, str) and language else {}
    if wanted == AWAIT_NUMBER:
        return {"awaiting": AWAIT_NUMBER, **kept}
    if wanted == AWAIT_FACTOR and isinstance(meta.get("order_number"), str):
        return {"awaiting": AWAIT_FACTOR, "order_number": meta["order_number"], **kept}
    return {}


def order_answer(
    *, bot: Bot, text: str, intent: str, caller: Caller, language: str, conversation_id: int | None = None
) -> OrderAnswer | None:
    """The reply of the order route, or None when this message is not for it (the chain goes on)."""
    waiting = caller.awaiting.get("awaiting", "")
    if intent != "order" and not waiting:
        return None
    endpoint = selectors.order_endpoint_for(bot)
    if endpoint is None:
        if intent != "order":
            return None
        return _with_person(bot, replies.say(bot, "order_no_endpoint", language=language), language, "no_endpoint")
    call = _Call(bot, endpoint, caller, language, conversation_id)
    if waiting == AWAIT_FACTOR and intent != "order":  # «где заказ 55555?» is a new number, not a factor
        factor = numbers.factor_in(text)
        if factor is not None:
            return call.lookup(caller.awaiting["order_number"], factor=factor)
    long_token = numbers.too_long_token(text)
    number = None if long_token else numbers.number_in(text, endpoint.number_pattern or DEFAULT_NUMBER_PATTERN)
    if number is not None:
        if endpoint.second_factor:
            asked = replies.say(bot, "order_factor_ask", language=language, number=number)
            return OrderAnswer(asked, meta={"order_result": "factor_asked", "awaiting": AWAIT_FACTOR,
                                            "order_number": number, "order_language": language})
        return call.lookup(number)
    if intent != "order":  # the awaited number did not come: back to the normal chain
        return None
    if long_token is not None:
        services.order_lookup_record(bot=bot, number=long_token, result=Result.BAD_NUMBER,
                                     visitor_id=caller.visitor_id, ip=caller.ip, conversation_id=conversation_id,
                                     reason=stored(TOO_LONG, n=len(long_token)))
        return _with_person(bot, replies.say(bot, "order_bad_number", language=language), language, "bad_number")
    return OrderAnswer(replies.say(bot, "order", language=language),
                       meta={"order_result": "number_asked", "awaiting": AWAIT_NUMBER, "order_language": language})


@dataclass
class _Call:
    bot: Bot
    endpoint: OrderEndpoint
    caller: Caller
    language: str
    conversation_id: int | None

    def lookup(self, number: str, *, factor: str | None = None) -> OrderAnswer:
        bot, language = self.bot, self.language
        try:
            ratelimit.check("order", bot_id=bot.pk, visitor_id=self.caller.visitor_id or "-", ip=self.caller.ip)
        except ratelimit.OverLimit as exc:
            self.log(number, Result.LIMITED, reason=stored(gettext_noop("лимит, ждать %(seconds)s с"),
                                                             seconds=exc.retry_after))
            text = replies.say(bot, "order_limited", language=language, seconds=str(exc.retry_after))
            return _with_person(bot, text, language, Result.LIMITED)
        fetched = order_http.order_fetch(endpoint=self.endpoint, number=number)
        if fetched.outcome == "unavailable":
            self.log(number, Result.UNAVAILABLE, fetched)
            return _with_person(bot, replies.say(bot, "order_unavailable", language=language), language,
                                Result.UNAVAILABLE)
        order = fetched.order
        if factor is not None and order is not None:
            if not (order.phone or order.email):
                self.log(number, Result.UNAVAILABLE, fetched, reason=stored(NO_FACTOR))
                return _with_person(bot, replies.say(bot, "order_unavailable", language=language), language,
                                    Result.UNAVAILABLE)
            if not numbers.factor_matches(factor, phone=order.phone, email=order.email):
                self.log(number, Result.FACTOR_MISMATCH, fetched)
                return self.not_found(number)
        if order is None:
            self.log(number, Result.NOT_FOUND, fetched)
            return self.not_found(number)
        self.log(number, Result.FOUND, fetched)
        return _status_answer(bot, number, order, language)

    def not_found(self, number: str) -> OrderAnswer:
        key = "order_not_found_factor" if self.endpoint.second_factor else "order_not_found"
        return _with_person(self.bot, replies.say(self.bot, key, language=self.language, number=number),
                            self.language, Result.NOT_FOUND)

    def log(self, number: str, result: str, fetched: order_http.Fetched | None = None, *, reason: Text = "") -> None:
        services.order_lookup_record(
            bot=self.bot, number=number, result=result, visitor_id=self.caller.visitor_id, ip=self.caller.ip,
            conversation_id=self.conversation_id, fetched=fetched, reason=reason,
        )


def _status_answer(bot: Bot, number: str, order: order_http.Order, language: str) -> OrderAnswer:
    """The template, filled from the response only: status, date, tracking link."""
    text = replies.say(bot, "order_status", language=language, number=number, status=order.status)
    shown_date = _date_text(order, language)
    if shown_date:
        text += replies.say(bot, "order_date", language=language, date=shown_date)
    links = []
    if order.tracking_url:
        text += replies.say(bot, "order_tracking", language=language)
        links = [{"url": order.tracking_url, "title": replies.say(bot, "order_tracking_link", language=language)}]
    return OrderAnswer(text, links=links, meta={"order_result": Result.FOUND.value})


def _date_text(order: order_http.Order, language: str) -> str:
    if order.delivery_date is None:
        return order.date_text
    with translation.override(language):
        return str(dateformat.format(order.delivery_date, "j E Y"))


def _with_person(bot: Bot, text: str, language: str, result: str) -> OrderAnswer:
    buttons = replies.handoff_buttons(bot, operators_available=hours.operators_available(bot), language=language)
    return OrderAnswer(text, buttons=buttons, meta={"order_result": str(result)})
