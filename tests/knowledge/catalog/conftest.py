from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.knowledge.catalog.shop_api import ShopAPI


@pytest.fixture
def shop_api(settings) -> Iterator[ShopAPI]:
    """The shop's order system on a free local port; a short timeout keeps the slow cases quick."""
    settings.ORDER_TIMEOUT = 0.5
    api = ShopAPI().start()
    try:
        yield api
    finally:
        api.stop()


@pytest.fixture
def trap(settings) -> Iterator[ShopAPI]:
    """A server on another private address that no lookup may ever reach."""
    api = ShopAPI(host="127.0.0.2").start()
    try:
        yield api
    finally:
        api.stop()


@pytest.fixture
def endpoint(bot, shop_api):
    from knowledge.catalog.services import order_endpoint_configure

    return order_endpoint_configure(
        bot=bot, url_template=shop_api.template, headers={"X-Api-Key": "s3cret-key-123"},
        status_pointer="/status", date_pointer="/delivery/date", tracking_pointer="/tracking_url",
        phone_pointer="/customer/phone", email_pointer="/customer/email", sample_number="48213",
    )
