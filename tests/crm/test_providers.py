"""The CRMs' answers, over real HTTP to the fakes, become reasons an owner reads: slow is a timeout
worth retrying, 5xx is worth retrying, 401 is a refused key not worth it; a private address is refused
before any connection."""

from __future__ import annotations

from typing import Any

import pytest

from crm import providers
from crm.exceptions import CrmError
from tests.fakes.amocrm_api import FakeAmoCRM
from tests.fakes.bitrix24_api import FakeBitrix24


def test_a_slow_crm_is_a_timeout_worth_retrying(fake_amocrm: FakeAmoCRM, settings: Any) -> None:
    settings.CRM_TIMEOUT = 0.3
    fake_amocrm.delay(1.0)
    with pytest.raises(CrmError) as caught:
        providers.amocrm_check(fake_amocrm.url, fake_amocrm.token)
    assert caught.value.retryable and not caught.value.refused
    assert "amoCRM не ответила вовремя" in str(caught.value)


def test_a_5xx_is_worth_retrying_and_a_401_is_not(fake_bitrix24: FakeBitrix24) -> None:
    fake_bitrix24.fail_next(502)
    with pytest.raises(CrmError) as caught:
        providers.bitrix24_check(fake_bitrix24.webhook)
    assert caught.value.retryable and caught.value.status == 502 and "Битрикс24 отвечает ошибкой 502" in str(
        caught.value)
    with pytest.raises(CrmError) as caught:
        providers.bitrix24_check(fake_bitrix24.webhook.replace("/1/", "/2/"))
    assert caught.value.refused and not caught.value.retryable and "ответ 401" in str(caught.value)
    assert providers.bitrix24_check(fake_bitrix24.webhook) == ""


def test_a_private_address_is_refused_before_any_connection(fake_amocrm: FakeAmoCRM, settings: Any) -> None:
    settings.CRAWL_ALLOW_PRIVATE = False
    with pytest.raises(CrmError) as caught:
        providers.amocrm_check(fake_amocrm.url, fake_amocrm.token)
    assert not caught.value.retryable and "во внутренней сети" in str(caught.value)
    assert fake_amocrm.requests == []
