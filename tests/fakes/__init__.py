"""Local fakes of services at the network edge. `fake_llm` starts the fake Messages API (and
OpenAI-compatible endpoint) and points the settings at it; `fake_telegram` does the same for the
Telegram Bot API, `fake_vk` for the VK API, `fake_max` for the MAX Bot API; `fake_amocrm` and
`fake_bitrix24` start a fake CRM (its address is what the owner types), `fake_push` a Web Push
service (browsers' subscriptions point at it). Import them into a
conftest to use them: `from tests.fakes import fake_llm  # noqa: F401`."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.fakes.amocrm_api import FakeAmoCRM
from tests.fakes.bitrix24_api import FakeBitrix24
from tests.fakes.max_api import FakeMax
from tests.fakes.messages_api import FakeLLMServer
from tests.fakes.push_service import FakePushService
from tests.fakes.telegram_api import FakeTelegram
from tests.fakes.vk_api import GROUP_ID, FakeVK

FAKE_ANTHROPIC_KEY = "sk-ant-fake-test-key"
FAKE_OPENAI_KEY = "sk-fake-openai-key"
FAKE_TELEGRAM_TOKEN = "7000000001:AAFakeTelegramTokenForTests_spravka"
FAKE_VK_TOKEN = "vk1.a.FakeCommunityTokenForTests_spravka-0123456789abcdefABCDEF_0123456789"
FAKE_VK_GROUP_ID = GROUP_ID
FAKE_MAX_TOKEN = "f9LHodD0cOJf4_DkJGeq8BkDgc5vgSwZocVrn44oirfMzUQ4mv5k-FakeMaxTokenForTests"


@pytest.fixture
def fake_llm(settings: Any) -> Iterator[FakeLLMServer]:
    """The fake server, with Anthropic as the provider and short timeouts and backoff, so failure
    paths run in milliseconds. Set `settings.LLM_PROVIDER = "openai"` to use the other endpoint.

    The process is warmed up first, as a serving process is when it starts (assistant/startup.py):
    a chat turn's model deadline (CHAT_LLM_TIMEOUT) runs from the turn's start, and the first turn
    of a process would otherwise import the model SDK (and load the embedding model) inside it:
    ~1.5 s on an idle machine, several times that on a busy one (two workers, a browser, other runs
    on two cores), which can use up the deadline before the model is asked: the fake then gets no
    request and the test fails only when it happens to be its process's first model turn."""
    from assistant.startup import warm_up

    server = FakeLLMServer().start()
    settings.LLM_PROVIDER = "anthropic"
    settings.ANTHROPIC_API_KEY = FAKE_ANTHROPIC_KEY
    settings.ANTHROPIC_BASE_URL = server.url
    settings.LLM_OPENAI_BASE_URL = f"{server.url}/v1"
    settings.LLM_OPENAI_API_KEY = FAKE_OPENAI_KEY
    settings.LLM_FAST_MODEL = "claude-haiku-4-5"
    settings.LLM_STRONG_MODEL = "claude-sonnet-4-6"
    settings.LLM_TIMEOUT = 2.0
    settings.LLM_MAX_RETRIES = 2
    settings.LLM_RETRY_BACKOFF = 0.01
    settings.LLM_RETRY_MAX_WAIT = 0.5
    try:
        warm_up().join()  # after LLM_PROVIDER is set: not the speller, which only a bot without a model needs
        yield server
    finally:
        server.stop()


@pytest.fixture
def fake_telegram(settings: Any) -> Iterator[FakeTelegram]:
    """The fake Bot API, with `settings.TELEGRAM_API_BASE` pointing at it and one bot registered
    under `FAKE_TELEGRAM_TOKEN` (`add_bot` registers more)."""
    server = FakeTelegram().start()
    server.add_bot(FAKE_TELEGRAM_TOKEN)
    settings.TELEGRAM_API_BASE = server.url
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def fake_vk(settings: Any) -> Iterator[FakeVK]:
    """The fake VK API, with `settings.VK_API_BASE` pointing at it and one community registered
    under `FAKE_VK_TOKEN` (group FAKE_VK_GROUP_ID; `add_community` registers more)."""
    server = FakeVK().start()
    server.add_community(FAKE_VK_TOKEN, group_id=FAKE_VK_GROUP_ID)
    settings.VK_API_BASE = server.url
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def fake_max(settings: Any) -> Iterator[FakeMax]:
    """The fake MAX Bot API, with `settings.MAX_API_BASE` pointing at it and one bot registered
    under `FAKE_MAX_TOKEN` (`add_bot` registers more)."""
    server = FakeMax().start()
    server.add_bot(FAKE_MAX_TOKEN)
    settings.MAX_API_BASE = server.url
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def fake_amocrm() -> Iterator[FakeAmoCRM]:
    """The fake amoCRM account: its `url` is the account's address, its `token` the long-lived token."""
    server = FakeAmoCRM().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def fake_bitrix24() -> Iterator[FakeBitrix24]:
    """The fake Bitrix24 portal: its `webhook` is the inbound webhook's address."""
    server = FakeBitrix24().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def fake_push() -> Iterator[FakePushService]:
    """A fake Web Push service: `endpoint()` gives a subscription's address on it."""
    server = FakePushService().start()
    try:
        yield server
    finally:
        server.stop()
