"""API fixtures: a key for the demo bot and one for another tenant, and clients that send them."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests.chat.conftest import knowledge, shop  # noqa: F401  (fixtures shared with the chat tests)


@pytest.fixture
def api_key(bot):
    from bots.apikeys import api_key_create

    _row, key = api_key_create(bot=bot, name="CRM")
    return key


@pytest.fixture
def other_key(other_bot):
    from bots.apikeys import api_key_create

    _row, key = api_key_create(bot=other_bot, name="Чужая CRM")
    return key


def client_for(key: str | None) -> APIClient:
    client = APIClient()
    if key:
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    return client


@pytest.fixture
def api(api_key) -> APIClient:
    return client_for(api_key)


@pytest.fixture
def other_api(other_key) -> APIClient:
    return client_for(other_key)
