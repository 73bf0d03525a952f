"""What a stored message becomes in a messenger, before any messenger's own format: the text (an
operator's name before theirs, a system note apart), its source pages as link buttons, the way to a
person as a button, product cards as a short list with links. Each transport (telegram.py, vk.py)
turns an `Outgoing` into its calls; nothing here knows a messenger's API.

The text stays plain here: a transport escapes it for its own markup, so nothing a visitor, an
operator or a page wrote can become markup.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from answers import replies
from answers.products import card_json
from answers.replies import LEAD_BUTTON_ID, OPERATOR_BUTTON_ID
from bots.models import Bot
from chat.models import Message

MAX_LINKS: Final = 3  # source pages under one reply: the widget shows as many
MAX_CARDS: Final = 5
MAX_LABEL: Final = 60  # a button's text; longer titles are cut with «…»


@dataclass(frozen=True)
class Link:
    url: str
    title: str


@dataclass(frozen=True)
class Outgoing:
    text: str
    author: str = ""  # an operator's name, shown before their text
    note: bool = False  # a system note (joined, closed, waiting): shown apart from what people say
    links: list[Link] = field(default_factory=list)
    cards: list[Link] = field(default_factory=list)  # «name — price» with the product's page
    operator_button: str = ""  # the label of «Позвать оператора», when offered
    contact_button: str = ""  # «Поделиться номером», when a contact is asked instead of an operator
    contact_prompt: str = ""  # the same asked in words, where no button shares a phone (VK): type it
    consent: str = ""  # shown with that button: the consent (152-FZ) sharing the number gives
    actions: list[tuple[str, str]] = field(default_factory=list)  # (label, data) buttons: an operator's


def _label(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= MAX_LABEL else text[: MAX_LABEL - 1].rstrip() + "…"


def _web(url: str) -> bool:
    return url.startswith(("http://", "https://"))


def _card(card: dict[str, object]) -> Link | None:
    shown = card_json(card)
    if not shown["url"]:
        return None
    title = str(shown["name"])
    if shown["price_text"]:
        title = f"{title} — {shown['price_text']}"
    return Link(url=str(shown["url"]), title=title)


def contact_offer(bot: Bot) -> tuple[str, str, str]:
    """The button that shares the visitor's phone, the words that ask for it where there is no such
    button, and the consent sharing it gives, with the policy's address."""
    consent = replies.say(bot, "lead_consent")
    if bot.privacy_policy_url:
        consent = f"{consent} {bot.privacy_policy_url}"
    return replies.say(bot, "contact_share_button"), replies.say(bot, "contact_type_phone"), consent


def outgoing(message: Message, bot: Bot) -> Outgoing:
    """What the visitor should see of `message` (a bot's, an operator's or a system message)."""
    links = [
        Link(url=str(link.get("url", "")), title=_label(str(link.get("title") or link.get("url") or "")))
        for link in (message.links or []) if _web(str(link.get("url", "")))
    ][:MAX_LINKS]
    cards = [made for made in (_card(card) for card in (message.cards or [])[:MAX_CARDS]) if made is not None]
    buttons = {str(button.get("id")): _label(str(button.get("label", ""))) for button in message.buttons or []}
    share, prompt, consent = contact_offer(bot) if LEAD_BUTTON_ID in buttons else ("", "", "")
    return Outgoing(
        text=message.text,
        author=message.author_name if message.role == Message.Role.OPERATOR else "",
        note=message.role == Message.Role.SYSTEM,
        links=links, cards=cards,
        operator_button=buttons.get(OPERATOR_BUTTON_ID, ""),
        contact_button=share, contact_prompt=prompt, consent=consent,
    )


def split(text: str, limit: int) -> list[str]:
    """`text` in parts of at most `limit` characters, cut at a paragraph, a line, a sentence or a
    space where one is near the end (never inside a word when a space is within the last fifth)."""
    parts: list[str] = []
    rest = text
    while len(rest) > limit:
        window = rest[:limit]
        cut = max(window.rfind("\n\n"), window.rfind("\n"), window.rfind(". "), window.rfind(" "))
        if cut < limit * 4 // 5:
            cut = limit
        else:
            cut += 1
        parts.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    parts.append(rest)
    return [part for part in parts if part]
