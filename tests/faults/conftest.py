"""Fault tests: the chat fixtures (a shop bot with a little real knowledge) and the fake Messages API."""

from __future__ import annotations

from tests.chat.conftest import knowledge, shop  # noqa: F401 - fixtures
from tests.fakes import fake_llm  # noqa: F401 - fixture
