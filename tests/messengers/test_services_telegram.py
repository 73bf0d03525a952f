"""Connecting a bot to Telegram: the token checked with getMe before anything is saved, stored
sealed, the webhook set under SPRAVKA_PUBLIC_URL with a secret; bad tokens get a clear message;
disconnecting forgets the token. The same from `manage.py channel`."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from messengers import services
from messengers.models import Connection
from tests.fakes import FAKE_TELEGRAM_TOKEN

pytestmark = pytest.mark.django_db


def test_a_token_is_checked_sealed_and_the_webhook_set(shop, fake_telegram, fast_retries):
    connection = services.telegram_connect(bot=shop, token=f"  {FAKE_TELEGRAM_TOKEN}\n")

    assert [call.method for call in fake_telegram.calls] == ["getMe", "setWebhook"]
    webhook = fake_telegram.calls_of("setWebhook")[0].params
    assert webhook["url"] == f"https://spravka.example/messengers/telegram/{connection.webhook_key}/"
    assert webhook["secret_token"] == connection.secret and len(connection.secret) >= 32
    assert set(webhook["allowed_updates"]) == {"message", "callback_query", "my_chat_member"}
    stored = Connection.objects.get(pk=connection.pk)
    assert stored.status == Connection.Status.ACTIVE
    assert stored.account_name == "spravka_test_bot"
    assert FAKE_TELEGRAM_TOKEN not in stored.token_sealed  # sealed, never in clear
    assert stored.token_hint == "…" + FAKE_TELEGRAM_TOKEN[-4:]
    assert services.token_of(stored) == FAKE_TELEGRAM_TOKEN


@pytest.mark.parametrize("token", ["", "hello", "123:short", "<script>:AAAAAAAAAAAAAAAAAAAAAAAAAAAA"])
def test_what_is_not_a_token_is_refused_before_telegram_is_asked(shop, fake_telegram, fast_retries, token):
    with pytest.raises(services.ConnectFailed, match="не похоже на токен Telegram"):
        services.telegram_connect(bot=shop, token=token)
    assert fake_telegram.calls == []
    assert not Connection.objects.exists()


def test_a_token_telegram_does_not_know_saves_nothing(shop, fake_telegram, fast_retries):
    with pytest.raises(services.ConnectFailed, match="Telegram не знает этот токен"):
        services.telegram_connect(bot=shop, token="7000000999:AAUnknownTokenUnknownTokenUnknown")
    assert not Connection.objects.exists()


def test_a_refused_webhook_leaves_the_connection_marked_with_the_error(shop, fake_telegram, fast_retries):
    fake_telegram.fail_next("setWebhook", status=400,
                            description="Bad Request: bad webhook: HTTPS url must be provided")

    with pytest.raises(services.ConnectFailed, match="Telegram не принял адрес"):
        services.telegram_connect(bot=shop, token=FAKE_TELEGRAM_TOKEN)

    connection = Connection.objects.get(bot=shop)
    assert connection.status == Connection.Status.FAILING
    assert "https://spravka.example/messengers/telegram/" in connection.error_shown


def test_connecting_again_replaces_the_secret(connected, fake_telegram):
    first_secret = connected.secret
    again = services.telegram_connect(bot=connected.bot, token=FAKE_TELEGRAM_TOKEN)
    assert again.pk == connected.pk and again.secret != first_secret
    assert fake_telegram.calls_of("setWebhook")[-1].params["secret_token"] == again.secret


def test_disconnect_deletes_the_webhook_and_forgets_the_token(connected, fake_telegram):
    services.connection_disconnect(connection=connected)

    assert fake_telegram.calls_of("deleteWebhook")
    stored = Connection.objects.get(pk=connected.pk)
    assert stored.status == Connection.Status.DISCONNECTED and stored.token_sealed == ""


def test_disconnect_works_when_telegram_is_away(connected, fake_telegram):
    fake_telegram.down(500)
    services.connection_disconnect(connection=connected)
    assert Connection.objects.get(pk=connected.pk).status == Connection.Status.DISCONNECTED


def test_the_command_connects_and_prints_the_webhook_address(shop, fake_telegram, fast_retries):
    out = io.StringIO()
    call_command("channel", shop.slug, "telegram", "--token", FAKE_TELEGRAM_TOKEN, stdout=out)
    connection = Connection.objects.get(bot=shop)
    assert connection.webhook_url in out.getvalue()
    assert "@spravka_test_bot" in out.getvalue()

    call_command("channel", shop.slug, "telegram", "--disconnect", stdout=out)
    assert Connection.objects.get(bot=shop).status == Connection.Status.DISCONNECTED


def test_the_command_says_what_is_wrong(shop, fake_telegram, fast_retries):
    with pytest.raises(CommandError, match="Нужен токен"):
        call_command("channel", shop.slug, "telegram")
    with pytest.raises(CommandError, match="не похоже на токен"):
        call_command("channel", shop.slug, "telegram", "--token", "nonsense")
    with pytest.raises(CommandError, match="не подключён"):
        call_command("channel", shop.slug, "telegram", "--disconnect")
    with pytest.raises(CommandError):
        call_command("channel", "no-such-bot", "telegram", "--token", FAKE_TELEGRAM_TOKEN)
