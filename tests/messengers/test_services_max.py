"""Connecting a bot to MAX in one step: the token checked with GET /me before anything is saved,
stored sealed, the webhook subscribed under SPRAVKA_PUBLIC_URL with a secret of the connection's
own; a token MAX does not know gets a clear message; disconnecting removes the subscription and
forgets the token. The same from `manage.py channel SLUG max`."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from messengers import services
from messengers.models import Connection
from tests.fakes import FAKE_MAX_TOKEN

pytestmark = pytest.mark.django_db


def test_a_token_is_checked_sealed_and_the_webhook_subscribed_with_a_secret(shop, fake_max, fast_retries):
    connection = services.max_connect(bot=shop, token=f"  {FAKE_MAX_TOKEN}\n")

    assert [call.name for call in fake_max.calls] == ["GET /me", "POST /subscriptions"]
    url = f"https://spravka.example/messengers/max/{connection.webhook_key}/"
    subscription = fake_max.subscriptions(FAKE_MAX_TOKEN)[url]
    assert subscription["secret"] == connection.secret and len(connection.secret) >= 32
    assert set(subscription["update_types"]) == {"message_created", "message_callback", "bot_started", "bot_stopped"}
    stored = Connection.objects.get(pk=connection.pk)
    assert stored.kind == Connection.Kind.MAX and stored.status == Connection.Status.ACTIVE
    assert (stored.account_id, stored.account_name, stored.webhook_url) == ("229000001", "spravka_shop_bot", url)
    assert FAKE_MAX_TOKEN not in stored.token_sealed  # sealed, never in clear
    assert stored.token_hint == "…" + FAKE_MAX_TOKEN[-4:]
    assert services.token_of(stored) == FAKE_MAX_TOKEN


@pytest.mark.parametrize("token", ["", "short", "has spaces in the middle of it", "<script>alert(1)</script>xxxxxxxx"])
def test_what_is_not_a_token_is_refused_before_max_is_asked(shop, fake_max, fast_retries, token):
    with pytest.raises(services.ConnectFailed, match="не похоже на токен MAX"):
        services.max_connect(bot=shop, token=token)
    assert fake_max.calls == []
    assert not Connection.objects.exists()


def test_a_token_max_does_not_know_saves_nothing(shop, fake_max, fast_retries):
    with pytest.raises(services.ConnectFailed, match="MAX не знает этот токен"):
        services.max_connect(bot=shop, token="UnknownMaxTokenUnknownMaxToken")
    assert not Connection.objects.exists()


def test_max_away_is_said_and_nothing_saved(shop, fake_max, fast_retries):
    fake_max.down(503)
    with pytest.raises(services.ConnectFailed, match="MAX не ответил"):
        services.max_connect(bot=shop, token=FAKE_MAX_TOKEN)
    assert not Connection.objects.exists()


def test_a_refused_subscription_leaves_the_connection_marked_with_the_error(shop, fake_max, fast_retries):
    fake_max.refuse_subscription("Webhook url is unreachable")
    with pytest.raises(services.ConnectFailed, match="MAX не принял адрес"):
        services.max_connect(bot=shop, token=FAKE_MAX_TOKEN)
    connection = Connection.objects.get(bot=shop, kind=Connection.Kind.MAX)
    assert connection.status == Connection.Status.FAILING
    assert "https://spravka.example/messengers/max/" in connection.error_shown
    assert "unreachable" in connection.error_shown


def test_connecting_again_keeps_the_address_and_makes_a_new_secret(max_connected, fake_max):
    again = services.max_connect(bot=max_connected.bot, token=FAKE_MAX_TOKEN)
    assert again.pk == max_connected.pk and again.webhook_url == max_connected.webhook_url
    assert again.secret != max_connected.secret  # updates signed with the old secret are refused from now
    assert fake_max.subscriptions(FAKE_MAX_TOKEN)[again.webhook_url]["secret"] == again.secret


def test_disconnect_removes_the_subscription_and_forgets_the_token(max_connected, fake_max):
    services.connection_disconnect(connection=max_connected)

    assert fake_max.calls_of("DELETE /subscriptions")[0].query == {"url": max_connected.webhook_url}
    assert fake_max.subscriptions(FAKE_MAX_TOKEN) == {}
    stored = Connection.objects.get(pk=max_connected.pk)
    assert stored.status == Connection.Status.DISCONNECTED and stored.token_sealed == ""


def test_disconnect_forgets_the_token_even_when_max_refuses_it(max_connected, fake_max):
    fake_max.fail_next("DELETE /subscriptions", status=401, code="verify.token")  # the token was revoked
    services.connection_disconnect(connection=max_connected)
    assert Connection.objects.get(pk=max_connected.pk).status == Connection.Status.DISCONNECTED


def test_all_three_messengers_live_side_by_side(max_connected, fake_telegram, fake_vk):
    from tests.fakes import FAKE_TELEGRAM_TOKEN, FAKE_VK_TOKEN

    telegram = services.telegram_connect(bot=max_connected.bot, token=FAKE_TELEGRAM_TOKEN)
    vk = services.vk_connect(bot=max_connected.bot, token=FAKE_VK_TOKEN, confirmation="1a2b3c4d",
                             secret="Sekret_VK_2026")
    assert {connection.kind for connection in (telegram, vk, max_connected)} == {"telegram", "vk", "max"}
    assert len({connection.webhook_key for connection in (telegram, vk, max_connected)}) == 3
    assert "/messengers/max/" in max_connected.webhook_url


def test_the_command_connects_and_prints_the_webhook_address(shop, fake_max, fast_retries):
    out = io.StringIO()
    call_command("channel", shop.slug, "max", "--token", FAKE_MAX_TOKEN, stdout=out)
    connection = Connection.objects.get(bot=shop, kind="max")
    assert connection.webhook_url in out.getvalue() and "spravka_shop_bot" in out.getvalue()
    assert FAKE_MAX_TOKEN not in out.getvalue()

    call_command("channel", shop.slug, "max", "--disconnect", stdout=out)
    assert Connection.objects.get(bot=shop, kind="max").status == Connection.Status.DISCONNECTED
    assert fake_max.subscriptions(FAKE_MAX_TOKEN) == {}


def test_the_command_says_what_is_wrong(shop, fake_max, fast_retries):
    with pytest.raises(CommandError, match="Нужен токен бота MAX"):
        call_command("channel", shop.slug, "max")
    with pytest.raises(CommandError, match="MAX не знает этот токен"):
        call_command("channel", shop.slug, "max", "--token", "UnknownMaxTokenUnknownMaxToken")
    with pytest.raises(CommandError, match="не подключён"):
        call_command("channel", shop.slug, "max", "--disconnect")

