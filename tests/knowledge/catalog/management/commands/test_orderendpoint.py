"""`manage.py orderendpoint`: the same settings and checks as the admin, from a script."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from knowledge.catalog import secrets
from knowledge.catalog.models import OrderEndpoint, OrderLookup

pytestmark = pytest.mark.django_db


def _run(*args, **options):
    out = io.StringIO()
    call_command("orderendpoint", *args, stdout=out, **options)
    return out.getvalue()


def test_it_connects_an_endpoint_and_checks_it(bot, shop_api):
    printed = _run(bot.slug, shop_api.template, header=["X-Api-Key: s3cret-key-123"], status="/status",
                   date="/delivery/date", tracking="/tracking_url", check="48213")
    assert "X-Api-Key" in printed and "s3cret" not in printed
    assert "Проверка 48213: found, код 200" in printed and "«Передан в службу доставки»" in printed
    assert "дата 2026-12-05" in printed and "https://track.example/RU48213" in printed
    endpoint = OrderEndpoint.objects.get(bot=bot)
    assert secrets.unseal(endpoint.headers_token) == {"X-Api-Key": "s3cret-key-123"}
    assert OrderLookup.objects.get().visitor_id == "cli"


def test_running_it_again_without_headers_keeps_them_and_clear_removes_them(bot, shop_api):
    _run(bot.slug, shop_api.template, header=["X-Api-Key: one"])
    _run(bot.slug, shop_api.template, status="/state")
    endpoint = OrderEndpoint.objects.get(bot=bot)
    assert endpoint.status_pointer == "/state" and endpoint.header_names == ["X-Api-Key"]
    _run(bot.slug, shop_api.template, clear_headers=True)
    endpoint.refresh_from_db()
    assert endpoint.header_names == [] and endpoint.headers_token == ""


def test_bad_arguments_get_a_clear_error_and_change_nothing(bot, shop_api):
    _run(bot.slug, shop_api.template)
    with pytest.raises(CommandError, match="ровно одно место для номера"):
        _run(bot.slug, "https://shop.example/orders")
    with pytest.raises(CommandError, match="Имя: значение"):
        _run(bot.slug, shop_api.template, header=["no colon here"])
    with pytest.raises(CommandError, match="не найден"):
        _run("no-such-bot", shop_api.template)
    assert OrderEndpoint.objects.get(bot=bot).url_template == shop_api.template


def test_a_check_that_fails_is_an_error_with_the_reason(bot, shop_api):
    with pytest.raises(CommandError, match="вместо JSON пришла HTML-страница"):
        _run(bot.slug, shop_api.template, check="html")
