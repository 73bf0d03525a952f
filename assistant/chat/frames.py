"""The widget protocol on the wire (docs/widget-protocol.md): parsing client frames into typed
values and building server frames. Nothing here touches the database; a malformed frame becomes a
ChatError with a message a person understands, never a traceback."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from django.conf import settings

from assistant.chat.exceptions import BadFrame, ChatError, FrameTooLarge, RateLimited
from assistant.chat.models import Message
from assistant.chat.replies import OPERATOR_BUTTON_ID

MAX_ID_CHARS: Final = 64
BUTTON_IDS: Final = frozenset({OPERATOR_BUTTON_ID})


@dataclass(frozen=True)
class Hello:
    visitor_id: str
    last_seen_id: int | None


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


ClientFrame = Hello | SendMessage | Rate | Button | Ping


def _str(data: dict[str, Any], name: str, *, max_chars: int | None = None) -> str:
    value = data.get(name)
    if not isinstance(value, str) or (max_chars is not None and not 0 < len(value) <= max_chars):
        raise BadFrame(field=name)
    return value


def _int(data: dict[str, Any], name: str, *, nullable: bool = False) -> int | None:
    value = data.get(name)
    if value is None and nullable:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadFrame(field=name)
    return value


def _hello(data: dict[str, Any]) -> Hello:
    return Hello(_str(data, "visitor_id", max_chars=MAX_ID_CHARS), _int(data, "last_seen_id", nullable=True))


def _message(data: dict[str, Any]) -> SendMessage:
    return SendMessage(_str(data, "client_msg_id", max_chars=MAX_ID_CHARS), _str(data, "text"))


def _rate(data: dict[str, Any]) -> Rate:
    message_id, rating = _int(data, "message_id"), _int(data, "rating")
    if message_id is None or rating not in (-1, 0, 1):
        raise BadFrame("Оценка может быть только 1 (полезно) или -1 (не помогло).")
    return Rate(message_id, rating)


def _button(data: dict[str, Any]) -> Button:
    button_id = _str(data, "id", max_chars=MAX_ID_CHARS)
    if button_id not in BUTTON_IDS:
        raise BadFrame("Эта кнопка больше не работает. Обновите страницу.")
    return Button(button_id)


_PARSERS: Final[dict[str, Callable[[dict[str, Any]], ClientFrame]]] = {
    "hello": _hello,
    "message": _message,
    "rate": _rate,
    "button": _button,
    "ping": lambda _data: Ping(),
}


def parse(text_data: str | None, bytes_data: bytes | None) -> ClientFrame:
    """One client frame: JSON text, at most CHAT_MAX_FRAME_BYTES, of a known type."""
    if text_data is None:
        raise BadFrame("Чат принимает только текстовые сообщения (JSON).")
    if len(text_data.encode("utf-8", "surrogatepass")) > settings.CHAT_MAX_FRAME_BYTES:
        raise FrameTooLarge(kb=settings.CHAT_MAX_FRAME_BYTES // 1024)
    try:
        data = json.loads(text_data)
    except ValueError as exc:
        raise BadFrame("Не удалось разобрать сообщение: это не JSON.") from exc
    if not isinstance(data, dict):
        raise BadFrame("Не удалось разобрать сообщение: ожидался объект JSON.")
    kind = data.get("type")
    parser = _PARSERS.get(kind) if isinstance(kind, str) else None
    if parser is None:
        raise BadFrame("Не удалось разобрать сообщение: неизвестный тип.")
    return parser(data)


def message_json(message: Message) -> dict[str, Any]:
    """A message as the widget sees it: plain text (the widget escapes it), no internal flags."""
    return {
        "id": message.pk,
        "role": message.role,
        "text": message.text,
        "links": [{"url": link.get("url", ""), "title": link.get("title", "")} for link in message.links or []],
        "buttons": [{"id": b.get("id", ""), "label": b.get("label", "")} for b in message.buttons or []],
        "rating": message.rating,
        "created_at": message.created_at.isoformat(),
        "client_msg_id": message.client_msg_id,
    }


def error_frame(error: ChatError, *, client_msg_id: str | None = None, language: str = "ru") -> dict[str, Any]:
    """An error frame, its message in `language` (the bot's); one caused by a `message` frame names
    its client_msg_id, so the widget knows which pending message to give back to the visitor."""
    frame: dict[str, Any] = {"type": "error", "code": error.code, "message": error.message_in(language)}
    if client_msg_id is not None:
        frame["client_msg_id"] = client_msg_id
    if isinstance(error, RateLimited):
        frame["retry_after"] = error.retry_after
    return frame
