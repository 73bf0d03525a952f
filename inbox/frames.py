"""The operator protocol on the wire (docs/operator-protocol.md): client frames parsed into typed
values. The JSON checks (text frame, size, object) are the widget's (`chat.frames.load_object`);
a malformed frame becomes a ChatError with a readable message, never a traceback."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from django.utils.translation import gettext_noop

from chat.exceptions import BadFrame
from chat.frames import field_id, field_int, field_str, load_object


@dataclass(frozen=True)
class Hello:
    pass


@dataclass(frozen=True)
class Ping:
    pass


@dataclass(frozen=True)
class Action:
    """open, take, release, close: an action on one conversation."""

    kind: str
    conversation_id: int


@dataclass(frozen=True)
class SendMessage:
    conversation_id: int
    client_msg_id: str
    text: str
    canned_id: int | None = None  # the canned reply the text was made from (its use is counted)


@dataclass(frozen=True)
class Typing:
    conversation_id: int
    on: bool


@dataclass(frozen=True)
class Suggest:
    """The copilot's passages for the visitor's last question (inbox/copilot.py)."""

    conversation_id: int


@dataclass(frozen=True)
class AddNote:
    """A note in the transcript for the bot's operators; the visitor never sees it."""

    conversation_id: int
    text: str


@dataclass(frozen=True)
class Transfer:
    """Hand a conversation one holds to another operator of its bot (`to`: their user id)."""

    conversation_id: int
    to: int


@dataclass(frozen=True)
class Draft:
    """A draft reply to the visitor's last question, checked like the bot's answers (inbox/copilot.py)."""

    conversation_id: int


@dataclass(frozen=True)
class SetPresence:
    """«Отошёл(ла)» (away=true) or «На месте» (away=false), said by the operator (inbox/presence.py)."""

    away: bool


OperatorFrame = Hello | Ping | Action | SendMessage | Typing | Suggest | AddNote | Transfer | Draft | SetPresence
ACTIONS: Final = frozenset({"open", "take", "release", "close"})


def _conversation_id(data: dict[str, Any]) -> int:
    value = field_int(data, "conversation_id")
    if value is None or not 0 < value < 2**63:
        raise BadFrame(
            gettext_noop("Не удалось разобрать сообщение: поле «conversation_id» должно быть номером разговора."))
    return value


def _message(data: dict[str, Any]) -> SendMessage:
    canned_id = field_int(data, "canned_id", nullable=True)
    return SendMessage(_conversation_id(data), field_id(data, "client_msg_id"), field_str(data, "text"), canned_id)


def _typing(data: dict[str, Any]) -> Typing:
    on = data.get("on")
    if not isinstance(on, bool):
        raise BadFrame(gettext_noop("Не удалось разобрать сообщение: поле «on» должно быть true или false."))
    return Typing(_conversation_id(data), on)


def _presence(data: dict[str, Any]) -> SetPresence:
    away = data.get("away")
    if not isinstance(away, bool):
        raise BadFrame(gettext_noop("Не удалось разобрать сообщение: поле «away» должно быть true или false."))
    return SetPresence(away)


def _transfer(data: dict[str, Any]) -> Transfer:
    to = field_int(data, "to")
    if to is None or not 0 < to < 2**63:
        raise BadFrame(gettext_noop("Не удалось разобрать сообщение: поле «to» должно быть номером оператора."))
    return Transfer(_conversation_id(data), to)


_PARSERS: Final[dict[str, Callable[[dict[str, Any]], OperatorFrame]]] = {
    "hello": lambda _data: Hello(),
    "ping": lambda _data: Ping(),
    "message": _message,
    "typing": _typing,
    "suggest": lambda data: Suggest(_conversation_id(data)),
    "note": lambda data: AddNote(_conversation_id(data), field_str(data, "text")),
    "transfer": _transfer,
    "draft": lambda data: Draft(_conversation_id(data)),
    "presence": _presence,
    **{kind: (lambda data, kind=kind: Action(kind, _conversation_id(data))) for kind in ACTIONS},  # type: ignore[misc]
}


def parse(text_data: str | None, bytes_data: bytes | None) -> OperatorFrame:
    data = load_object(text_data, bytes_data)
    kind = data.get("type")
    parser = _PARSERS.get(kind) if isinstance(kind, str) else None
    if parser is None:
        raise BadFrame(gettext_noop("Не удалось разобрать сообщение: неизвестный тип."))
    return parser(data)
