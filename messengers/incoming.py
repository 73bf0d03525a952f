"""An update from any messenger as the turns read it (messengers/turns.py): who wrote, in which chat,
and what: a text, /start, a button, a shared contact, something that is not text, a change of
membership (the user blocked or restarted the bot, or forbade or allowed the community's messages),
or VK's handshake that confirms the webhook's address (answered, never stored)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

Kind = Literal["text", "start", "button", "contact", "not_text", "membership", "confirmation"]

OPERATOR: Final = "operator"  # a button's data for «Позвать оператора», whatever the messenger


@dataclass(frozen=True)
class Incoming:
    # The messenger's own id of the update as text, unique per connection (Telegram's update_id,
    # VK's event_id): updates are stored once under it, and the keys of what answers them use it.
    event_id: str
    chat_id: str
    kind: Kind
    update_id: int | None = None  # Telegram's number, kept on the stored update for reading
    name: str = ""
    username: str = ""
    text: str = ""
    payload: str = ""  # start: what follows /start (a deep link's parameter)
    reply_to: int | None = None  # text: the number of the message in this chat it replies to
    data: str = ""  # a button's data (OPERATOR for «Позвать оператора»)
    query_id: str = ""  # the button press to acknowledge
    phone: str = ""
    what: str = ""  # not_text: photo, voice, sticker, file, video, location…
    blocked: bool = False  # membership: the user blocked the bot
