"""The answer chain's tests use the chat's shop and demo bots (tests/chat/conftest.py)."""

from tests.chat.conftest import connect, demo_shop, demo_shop_id, knowledge, shop  # noqa: F401  (fixtures)
