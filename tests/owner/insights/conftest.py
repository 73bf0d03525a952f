"""Insights fixtures: the chat tests' shop with its three embedded entries, and a signed-in owner."""

from __future__ import annotations

import pytest

from tests.chat.conftest import DELIVERY_QUESTION, KNOWLEDGE, UNKNOWN_QUESTION, knowledge, shop  # noqa: F401


@pytest.fixture
def owner_client(client, owner):
    client.force_login(owner)
    return client


@pytest.fixture
def other_client(client, other_owner, other_bot):
    client.force_login(other_owner)
    return client


@pytest.fixture(autouse=True)
def _language_reset(settings):
    """A request in English leaves English active in this thread (LocaleMiddleware activates the
    request's language and nothing deactivates it): reset it, so later tests start in Russian."""
    from django.utils import translation

    yield
    translation.activate(settings.LANGUAGE_CODE)
