"""Owner-page fixtures: the chat's shop bot and its knowledge (tests/chat/conftest.py)."""

from tests.chat.conftest import knowledge, shop  # noqa: F401  (fixtures shared with the chat tests)
from tests.fakes import fake_llm  # noqa: F401
