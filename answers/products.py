"""The product route of the answer chain: «есть пылесос до 15 000?» answered with cards from the
shop's own catalog feed (commerce.products), never from a model's memory.

What must stay true:
- Every card's price, old price and availability is the catalog row's own, copied by code; the
  price texts under the cards are formatted from those numbers, nothing else.
- The filters (a price range, «в наличии») are read from the visitor's text; the model's
  `product_query` may add words, a vendor or a category to look for, never a price.
- A model may introduce the cards, and its text is checked like any other answer: it may state
  only facts of the cards (names, prices, «в наличии»), the entry it cited and the bot's own name
  and site; an introduction that states anything else is replaced by the canned one.
- No match is said honestly, with the link of the category the words point to, when there is one.
- Without a model, code reads what a plain question names of the catalog (catalog_words.py): a
  request to be shown goods («покажите чайники Bosch») that names the feed's vendor or category
  goes to the catalog; a question about something («как выбрать чайник?») stays a question.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Final

from answers import catalog_words, checks, facts, prompt, replies
from behavior import hours, intents
from bots.models import Bot
from knowledge.catalog import products

CARDS: Final = 3  # cards under one answer: more would not fit the widget's column
_SYMBOLS: Final = {"RUB": "₽", "RUR": "₽", "USD": "$", "EUR": "€"}
_NBSP: Final = "\u00a0"


@dataclass(frozen=True)
class ModelView:
    """What the chain's model said that this route may use (an introduction, a search query)."""

    intent: str = ""
    answer: str = ""
    product_query: str = ""
    cited: prompt.Source | None = None  # the entry the model cited, when its number was valid


@dataclass
class ProductAnswer:
    text: str
    cards: list[dict[str, Any]]
    links: list[dict[str, str]] = field(default_factory=list)
    buttons: list[dict[str, str]] = field(default_factory=list)
    unanswered: bool = False
    meta: dict[str, Any] = field(default_factory=dict)
    blocked: checks.Verdict | None = None  # the model's introduction that did not pass the check


def price_text(amount: Decimal | str | None, currency: str) -> str:
    """«12 990 ₽», «1 299,50 ₽», «15 USD»: digits grouped by a no-break space, kopecks only when there are any."""
    if amount is None:
        return ""
    value = Decimal(str(amount))
    whole = f"{int(value):,}".replace(",", _NBSP)
    cents = abs(value - int(value))
    number = f"{whole},{int(cents * 100):02d}" if cents else whole
    return f"{number}{_NBSP}{_SYMBOLS.get(currency.upper(), currency.upper() or '₽')}"


def _say(language: str, key: str, **values: str) -> str:
    texts = replies.TEXTS[language if language in replies.TEXTS else "ru"]
    return texts[key].format(**values) if values else texts[key]


def card_json(card: dict[str, Any]) -> dict[str, Any]:
    """A stored card as the widget, the inbox and `ask --json` show it: the row's values and their
    price texts; a link or a picture only when it is an http(s) address."""
    currency = str(card.get("currency") or "RUB")
    price, old_price = card.get("price"), card.get("old_price")
    url, picture = str(card.get("url") or ""), str(card.get("picture") or "")
    return {
        "id": str(card.get("id", "")), "name": str(card.get("name", "")),
        "price": price, "old_price": old_price, "currency": currency,
        "price_text": price_text(price, currency), "old_price_text": price_text(old_price, currency),
        "available": bool(card.get("available")),
        "url": url if url.startswith(("http://", "https://")) else "",
        "picture": picture if picture.startswith(("http://", "https://")) else "",
    }


def product_answer(
    *, bot: Bot, text: str, intent: str, model: ModelView | None, language: str
) -> ProductAnswer | None:
    """The reply of the product route, or None when this message is not for it: not a product
    question (by the rules, or by the model over a plain question without a source), or a bot
    without a catalog, or no match while the model answered from a page (that answer goes on).
    `model` None: no model at all, so code reads whether a plain question asks for goods."""
    # No model to read a plain question: code reads it, when it asks to be shown goods (the text
    # alone first, so most questions cost nothing here).
    unread = model is None and intent == "question" and catalog_words.asks_to_show(text)
    model = model or ModelView()
    # The rules guard against a false product: a request for a manual stays a question.
    raised = (intent == "question" and model.intent == "product" and model.cited is None
              and not intents.is_document_request(text))
    if intent != "product" and not raised and not unread:
        return None
    if not products.has_catalog(bot):
        return None
    vendors, categories = products.facets(bot)
    named = catalog_words.named(text, vendors=vendors, categories=categories)
    if unread and not (named.catalog and not intents.is_document_request(text)):
        return None
    found = products.product_search(bot=bot, text=text, k=CARDS, query=model.product_query, vendors=named.vendors,
                                    categories=named.categories, names=named.strangers)
    meta: dict[str, Any] = {"filters": found.filters.applied(), "product_query": bool(model.product_query.strip())}
    if not found.offers:
        if model.cited is not None and model.answer:
            return None
        return _no_match(bot, found, language, meta)
    cards = [products.card(offer) for offer in found.offers]
    shown = [card_json(card) for card in cards]
    answer = ProductAnswer(text="", cards=cards, meta={**meta, "cards": [card["id"] for card in cards]})
    if model.answer:
        verdict = checks.check(model.answer, _known(bot, shown, model.cited, language), prompt.secret())
        if verdict.ok:
            answer.text = model.answer
            answer.meta["introduced_by"] = "model"
            cited = model.cited.result if model.cited is not None else None
            if cited is not None and cited.url:
                answer.links = [{"url": cited.url, "title": cited.title or cited.url}]
            return answer
        answer.blocked = verdict
    answer.text = replies.say(bot, "products_found", language=language, filters=_filters_text(found.filters, language))
    return answer


def card_lines(shown: list[dict[str, Any]], language: str) -> list[str]:
    """The cards as sentences the fact check reads: what a card states, and nothing more."""
    stock = {True: _say(language, "products_in_stock"), False: _say(language, "products_out")}
    lines = []
    for card in shown:
        old = f" ({card['old_price_text']})" if card["old_price_text"] else ""
        lines.append(f"{card['name']} — {card['price_text']}{old}, {stock[card['available']]}. {card['url']}")
    return lines


def _known(bot: Bot, shown: list[dict[str, Any]], cited: prompt.Source | None, language: str) -> facts.Known:
    texts = [*prompt.own_texts(bot), *card_lines(shown, language)]
    if cited is not None:
        texts.append(cited.shown)
    return facts.Known.of(texts)


def _filters_text(filters: products.Filters, language: str) -> str:
    """« до 15 000 ₽, в наличии»: what the search went by, in the visitor's words (or "")."""
    said: list[str] = []
    low, high = filters.price_min, filters.price_max
    if low is not None and high is not None:
        said.append(_say(language, "products_between", low=price_text(low, "RUB"), high=price_text(high, "RUB")))
    elif high is not None:
        said.append(_say(language, "products_under", high=price_text(high, "RUB")))
    elif low is not None:
        said.append(_say(language, "products_over", low=price_text(low, "RUB")))
    if filters.in_stock:
        said.append(_say(language, "products_in_stock"))
    return f" ({', '.join(said)})" if said else ""


def _no_match(bot: Bot, found: products.Found, language: str, meta: dict[str, Any]) -> ProductAnswer:
    buttons = replies.handoff_buttons(bot, operators_available=hours.operators_available(bot), language=language)
    filters = _filters_text(found.filters, language)
    category = found.nearest_category or (found.filters.categories[0] if found.filters.categories else "")
    link = products.category_link(bot=bot, category=category) if category else ""
    link = link or (bot.site_url if category and bot.site_url.startswith(("http://", "https://")) else "")
    meta = {**meta, "no_match": True, "nearest_category": category}
    if category and link:
        name = category.rsplit("/", 1)[-1].strip()
        text = replies.say(bot, "products_none_category", language=language, filters=filters, category=name)
        return ProductAnswer(text=text, cards=[], links=[{"url": link, "title": name}], buttons=buttons,
                             unanswered=True, meta=meta)
    text = replies.say(bot, "products_none", language=language, filters=filters)
    return ProductAnswer(text=text, cards=[], buttons=buttons, unanswered=True, meta=meta)
