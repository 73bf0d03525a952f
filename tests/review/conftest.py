"""Review fixtures: the chat's shop with its three embedded entries, and a way to make real flagged
answers through the chat's own services (retrieval only, no model)."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from tests.chat.conftest import DELIVERY_QUESTION, UNKNOWN_QUESTION, knowledge, shop  # noqa: F401

__all__ = ["DELIVERY_QUESTION", "UNKNOWN_QUESTION"]


@pytest.fixture
def ask(django_capture_on_commit_callbacks: Any) -> Callable[..., Any]:
    """Ask `bot` as visitor `visitor` through chat.services; on-commit signals run as in production.
    Returns (visitor message, bot reply)."""
    from chat import services

    def _ask(bot: Any, text: str, visitor: str = "v1") -> tuple[Any, Any]:
        with django_capture_on_commit_callbacks(execute=True):
            conversation = services.conversation_open(bot=bot, visitor_id=visitor)
            message, reply, _created = services.message_receive(
                conversation=conversation, text=text, client_msg_id=uuid.uuid4().hex
            )
        return message, reply

    return _ask


@pytest.fixture
def operator(django_user_model: Any, shop: Any) -> Any:  # noqa: F811
    from bots.models import Membership

    user = django_user_model.objects.create_user(
        username="operator@shop.example", email="operator@shop.example", password="pw-operator-1", is_staff=True
    )
    Membership.objects.create(bot=shop, user=user, role=Membership.Role.OPERATOR)
    return user
