"""The widget protocol on the wire (docs/widget-protocol.md): parsing client frames into typed
values and building server frames. Nothing here touches the database; a malformed frame becomes a
ChatError with a message a person understands, never a traceback."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from django.conf import settings
from django.utils import translation
from django.utils.dateparse import parse_datetime

from answers import replies
from answers.products import card_json
from answers.replies import OPERATOR_BUTTON_ID
from bots.models import Bot
from chat.exceptions import BadFrame, ChatError, CsatRefused, FrameTooLarge, InvalidField, RateLimited, Unavailable
from chat.models import Conversation, Message
from core.labels import visitor_label

MAX_ID_CHARS: Final = 64
NOT_AN_ID: Final = re.compile("[\x00-\x20\x7f-\xa0\ud800-\udfff]")
MAX_URL_CHARS: Final = 2000
MAX_FORM_CHARS: Final = 300
MAX_QUESTION_CHARS: Final = 4000
BUTTON_IDS: Final = frozenset({OPERATOR_BUTTON_ID})
MAX_CSAT_COMMENT: Final = 1000  # a visitor's words with their stars (chat/csat.py)


@dataclass(frozen=True)
class Hello:
    visitor_id: str
    last_seen_id: int | None
    page_url: str | None = None


@dataclass(frozen=True)
class SendMessage:
    client_msg_id: str
    text: str


@dataclass(frozen=True)
class Rate:
    message_id: int
    rating: int


@dataclass(frozen=True)
class Button:
    id: str


@dataclass(frozen=True)
class Ping:
    pass


@dataclass(frozen=True)
class LeadForm:
    """What the widget's contact form sent (checked by `leads.lead_submit`)."""

    name: str
    phone: str
    email: str
    question: str
    consent: bool


@dataclass(frozen=True)
class LeadFrame:
    form: LeadForm


@dataclass(frozen=True)
class Page:
    """Where the visitor is (on load and on every navigation): an http(s) address, the page's
    title and where they came from. `visitor_id` is needed only before `hello`."""

    visitor_id: str | None
    url: str
    title: str
    referrer: str


@dataclass(frozen=True)
class InviteShown:
    rule: int


@dataclass(frozen=True)
class Csat:
    """A visitor's stars for a finished conversation, with optional words (chat/csat.py checks them)."""

    conversation_id: int
    stars: int
    comment: str


ClientFrame = Hello | SendMessage | Rate | Button | Ping | LeadFrame | Page | InviteShown | Csat
MAX_TITLE_CHARS: Final = 300


def field_str(data: dict[str, Any], name: str, *, max_chars: int | None = None) -> str:
    value = data.get(name)
    if not isinstance(value, str) or (max_chars is not None and not 0 < len(value) <= max_chars):
        raise BadFrame(field=name)
    return value


def field_id(data: dict[str, Any], name: str) -> str:
    """An identifier the client made (client_msg_id): 1–64 visible characters, no spaces, no
    control characters or lone surrogates (which PostgreSQL cannot store)."""
    value = field_str(data, name, max_chars=MAX_ID_CHARS)
    if NOT_AN_ID.search(value):
        raise BadFrame(field=name)
    return value


def field_int(data: dict[str, Any], name: str, *, nullable: bool = False) -> int | None:
    """A whole number that fits the database's 64-bit ids (a bigger one could never match a row)."""
    value = data.get(name)
    if value is None and nullable:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not -(2**63) <= value < 2**63:
        raise BadFrame(field=name)
    return value


def _optional_str(data: dict[str, Any], name: str, *, max_chars: int) -> str:
    value = data.get(name)
    if value is None:
        return ""
    if not isinstance(value, str) or len(value) > max_chars:
        raise BadFrame(field=name)
    return value


def _hello(data: dict[str, Any]) -> Hello:
    return Hello(
        field_str(data, "visitor_id", max_chars=MAX_ID_CHARS), field_int(data, "last_seen_id", nullable=True),
        _optional_str(data, "page_url", max_chars=MAX_URL_CHARS) or None,
    )


def _http_url(data: dict[str, Any], name: str, *, required: bool) -> str:
    """An http(s) address of at most MAX_URL_CHARS, no spaces or control characters ("" when optional
    and absent or empty)."""
    value = data.get(name)
    if not required and value in (None, ""):
        return ""
    if (not isinstance(value, str) or not 0 < len(value) <= MAX_URL_CHARS or NOT_AN_ID.search(value)
            or not value.lower().startswith(("http://", "https://"))):
        raise BadFrame(field=name)
    return value


def _page(data: dict[str, Any]) -> Page:
    visitor_id = data.get("visitor_id")
    if visitor_id is not None:
        visitor_id = field_str(data, "visitor_id", max_chars=MAX_ID_CHARS)
    title = _optional_str(data, "title", max_chars=MAX_TITLE_CHARS)
    return Page(visitor_id, _http_url(data, "url", required=True), " ".join(title.split()),
                _http_url(data, "referrer", required=False))


def _invite_shown(data: dict[str, Any]) -> InviteShown:
    rule = field_int(data, "rule")
    assert rule is not None
    return InviteShown(rule)


def _lead(data: dict[str, Any]) -> LeadFrame:
    consent = data.get("consent")
    if not isinstance(consent, bool):
        raise InvalidField("consent", key="lead_consent")
    return LeadFrame(LeadForm(
        name=_optional_str(data, "name", max_chars=MAX_FORM_CHARS),
        phone=_optional_str(data, "phone", max_chars=MAX_FORM_CHARS),
        email=_optional_str(data, "email", max_chars=MAX_FORM_CHARS),
        question=_optional_str(data, "question", max_chars=MAX_QUESTION_CHARS),
        consent=consent,
    ))


def _message(data: dict[str, Any]) -> SendMessage:
    return SendMessage(field_id(data, "client_msg_id"), field_str(data, "text"))


def _rate(data: dict[str, Any]) -> Rate:
    message_id, rating = field_int(data, "message_id"), field_int(data, "rating")
    if message_id is None or rating not in (-1, 0, 1):
        raise BadFrame(key="frame_rating")
    return Rate(message_id, rating)


def _csat(data: dict[str, Any]) -> Csat:
    """Whole stars 1–5 only («4», 4.5, true are refused), the comment text of at most MAX_CSAT_COMMENT."""
    conversation_id = field_int(data, "conversation_id")
    stars = data.get("stars")
    if isinstance(stars, bool) or not isinstance(stars, int) or not 1 <= stars <= 5:
        raise CsatRefused(key="csat_stars", field="stars")
    comment = data.get("comment")
    if comment is None:
        comment = ""
    if not isinstance(comment, str):
        raise CsatRefused(key="csat_comment", field="comment", limit=MAX_CSAT_COMMENT)
    if len(comment) > MAX_CSAT_COMMENT:
        raise CsatRefused(key="csat_comment", field="comment", limit=MAX_CSAT_COMMENT)
    assert conversation_id is not None
    return Csat(conversation_id, stars, comment)


def _button(data: dict[str, Any]) -> Button:
    button_id = field_str(data, "id", max_chars=MAX_ID_CHARS)
    if button_id not in BUTTON_IDS:
        raise BadFrame(key="frame_button")
    return Button(button_id)


_PARSERS: Final[dict[str, Callable[[dict[str, Any]], ClientFrame]]] = {
    "hello": _hello,
    "message": _message,
    "rate": _rate,
    "button": _button,
    "lead": _lead,
    "ping": lambda _data: Ping(),
    "page": _page,
    "invite_shown": _invite_shown,
    "csat": _csat,
}


def load_object(text_data: str | None, bytes_data: bytes | None) -> dict[str, Any]:
    """A client frame's JSON object (any socket of ours): text, at most CHAT_MAX_FRAME_BYTES."""
    if text_data is None:
        raise BadFrame(key="frame_not_text")
    if len(text_data.encode("utf-8", "surrogatepass")) > settings.CHAT_MAX_FRAME_BYTES:
        raise FrameTooLarge(kb=settings.CHAT_MAX_FRAME_BYTES // 1024)
    try:
        data = json.loads(text_data)
    except ValueError as exc:
        raise BadFrame(key="frame_not_json") from exc
    except RecursionError as exc:
        raise BadFrame(key="frame_too_deep") from exc
    if not isinstance(data, dict):
        raise BadFrame(key="frame_not_object")
    return data


def parse(text_data: str | None, bytes_data: bytes | None) -> ClientFrame:
    """One client frame: JSON text, at most CHAT_MAX_FRAME_BYTES, of a known type."""
    data = load_object(text_data, bytes_data)
    kind = data.get("type")
    parser = _PARSERS.get(kind) if isinstance(kind, str) else None
    if parser is None:
        raise BadFrame(key="frame_unknown_type")
    return parser(data)


def message_json(message: Message) -> dict[str, Any]:
    """A message as the widget sees it: plain text (the widget escapes it), no internal flags.
    `author` is the operator's display name on operator messages, otherwise null."""
    return {
        "id": message.pk,
        "role": message.role,
        "text": message.text,
        "links": [{"url": link.get("url", ""), "title": link.get("title", "")} for link in message.links or []],
        "buttons": [{"id": b.get("id", ""), "label": b.get("label", "")} for b in message.buttons or []],
        "cards": [card_json(card) for card in message.cards or []],
        "rating": message.rating,
        "created_at": message.created_at.isoformat(),
        "client_msg_id": message.client_msg_id,
        "author": message.author_name or None,
    }


def lead_form_json(bot: Bot) -> dict[str, str] | None:
    """What the widget's contact form shows (and the lead keeps): the consent text and the policy
    it links; null when the bot takes no contacts (no policy to consent to, or handoff is off)."""
    if not bot.handoff_enabled or not replies.lead_form_available(bot):
        return None
    return {"consent": replies.say(bot, "lead_consent"), "policy_url": bot.privacy_policy_url}


def languages_json(bot: Bot) -> dict[str, str]:
    """Whose language the widget's labels speak, so they agree with the bot's replies: `follow` the
    visitor's when the bot answers in it («Отвечать на языке посетителя»), else `fixed` to the
    bot's `language` (the one every reply is in)."""
    return {"languages": "follow" if bot.answers_in_visitor_language else "fixed",
            "language": replies.bot_language(bot)}


def display_name(user: Any) -> str:
    """How an operator is named to visitors and colleagues: the full name, else the login's
    part before «@» (an e-mail is never shown to a visitor)."""
    full = (user.get_full_name() or "").strip()
    return full or str(user.get_username()).split("@", 1)[0]


def conversation_json(conversation: Conversation, *, last_message: Message | None = None) -> dict[str, Any]:
    """A conversation as the operator protocol shows it (docs/operator-protocol.md). Reads no rows:
    the caller has the bot and the assigned operator loaded."""
    operator = conversation.assigned_to if conversation.assigned_to_id else None
    return {
        "id": conversation.pk,
        # sla_minutes: the bot's promised first reply (0: none); the inbox marks a longer wait.
        "bot": {"slug": conversation.bot.slug, "name": conversation.bot.name,
                "sla_minutes": conversation.bot.operator_sla_minutes},
        "state": conversation.state,
        "channel": conversation.channel,
        "visitor": {
            "id": conversation.visitor_id, "name": conversation.visitor_name, "contact": conversation.visitor_contact,
            "label": conversation.visitor_label,
        },
        "created_at": conversation.created_at.isoformat() if conversation.created_at else None,
        "page_url": conversation.page_url,
        "page_title": conversation.page_title,
        "waiting_since": conversation.waiting_since.isoformat() if conversation.waiting_since else None,
        "assigned_to": {"id": operator.pk, "name": display_name(operator)} if operator is not None else None,
        "last_message": message_json(last_message) if last_message is not None else None,
        "unread": conversation.unread,
    }


def conversation_labelled(frame: dict[str, Any], *, language: str) -> dict[str, Any]:
    """A conversation frame with its visitor's label in `language`: a frame is built once and
    broadcast to operators who may read another language than the one it was built in."""
    visitor = frame.get("visitor") or {}
    started = parse_datetime(frame["created_at"]) if frame.get("created_at") else None
    with translation.override(language):
        label = visitor_label(name=visitor.get("name") or "", started=started,
                              channel_name=Conversation.channel_name(frame.get("channel") or ""))
    return {**frame, "visitor": {**visitor, "label": label}}


FRAME_TYPES: Final = {Hello: "hello", SendMessage: "message", Rate: "rate", Button: "button", Ping: "ping",
                       LeadFrame: "lead", Page: "page", InviteShown: "invite_shown", Csat: "csat"}


def error_frame(
    error: ChatError, *, client_msg_id: str | None = None, cause: ClientFrame | None = None, language: str = "ru"
) -> dict[str, Any]:
    """An error frame, its message in `language` (the bot's); one caused by a `message` frame names
    its client_msg_id, so the widget knows which pending message to give back to the visitor, and
    `frame` names the type of the frame that was refused (when it could be read)."""
    frame: dict[str, Any] = {"type": "error", "code": error.code, "message": error.message_in(language)}
    if cause is not None:
        frame["frame"] = FRAME_TYPES[type(cause)]
    if client_msg_id is not None:
        frame["client_msg_id"] = client_msg_id
    if isinstance(error, (RateLimited, Unavailable)):
        frame["retry_after"] = error.retry_after
    if isinstance(error, InvalidField) or (isinstance(error, CsatRefused) and error.field):
        frame["field"] = error.field
    if isinstance(error, CsatRefused):  # why, for the widget: «already rated» reads as thanks
        frame["reason"] = error.key
    return frame
