"""Which module talks to which messenger: `of(kind)` gives the transport of a `Connection.Kind`.

A transport is a module with the functions below (telegram.py, vk.py, max_bot.py); turns,
deliveries and services call them through here and never name a messenger. Adding one is a module
with these functions and a line in TRANSPORTS, plus its connect function in services.py and its
webhook view.
"""

from __future__ import annotations

from typing import Any, Final, Protocol

from messengers import max_bot, telegram, vk
from messengers.exceptions import NotConnected
from messengers.incoming import Incoming
from messengers.models import Connection
from messengers.outgoing import Outgoing


class Transport(Protocol):
    # The stored text (gettext_noop) the owner reads when the messenger no longer takes the token.
    @property
    def TOKEN_REFUSED(self) -> str: ...

    def incoming(self, payload: Any) -> Incoming | None:
        """What an update means, None for one that is ignored; BadUpdate for what is not one."""

    def secret_in(self, payload: Any) -> str:
        """The secret an update carries in its body ("" when the messenger sends it in a header)."""

    def account_in(self, payload: Any) -> str:
        """The bot or community an update says it is for ("" when it does not say)."""

    def calls(self, chat_id: str, shown: Outgoing) -> list[tuple[str, dict[str, Any]]]:
        """The calls (method, JSON-able params) that show `shown` in the chat, in order."""

    def call(self, token: str, method: str, params: dict[str, Any]) -> Any:
        """One call; its result, or Blocked / BadToken / SendFailed."""

    def call_many(self, token: str, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
        """Several calls at once where the messenger allows it: each one's result or our exception."""

    def typing(self, token: str, chat_id: str) -> None:
        """«печатает…», a courtesy whose failure is ignored."""

    def button_answered(self, token: str, read: Incoming) -> None:
        """Acknowledge a button press, a courtesy too."""

    def profile(self, token: str, chat_id: str) -> tuple[str, str]:
        """(name, username) of a chat whose updates do not name the user; ("", "") otherwise."""

    def forget(self, token: str, url: str) -> None:
        """Disconnecting: tell the messenger to stop posting updates (to `url`), where it can be told."""


TRANSPORTS: Final[dict[str, Transport]] = {
    Connection.Kind.TELEGRAM: telegram,
    Connection.Kind.VK: vk,
    Connection.Kind.MAX: max_bot,
}


def of(kind: str) -> Transport:
    try:
        return TRANSPORTS[kind]
    except KeyError:
        raise NotConnected(f"no transport for {kind}") from None
