"""An update from any messenger as the turns read it (messengers/turns.py): who wrote, in which chat,
and what: a text, /start, a button, a shared contact, something that is not text, or a change of
membership (the user blocked or restarted the bot)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Kind = Literal["text", "start", "button", "contact", "not_text", "membership"]


@dataclass(frozen=True)
class Incoming:
    update_id: int
    chat_id: str
    kind: Kind
    name: str = ""
    username: str = ""
    text: str = ""
    data: str = ""  # a button's callback data
    query_id: str = ""  # the button press to acknowledge
    phone: str = ""
    what: str = ""  # not_text: photo, voice, sticker, file, video, location…
    blocked: bool = False  # membership: the user blocked the bot
