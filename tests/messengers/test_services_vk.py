"""Connecting a bot to a VK community in one step: the community's token checked with groups.getById
before anything is saved, stored sealed with the Callback API's confirmation string and the owner's
secret; what is not a community's token gets a clear message; disconnecting forgets the token. The
same from `manage.py channel SLUG vk`, which prints the address to paste into the community."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from messengers import services
from messengers.models import Connection
from tests.fakes import FAKE_VK_GROUP_ID, FAKE_VK_TOKEN
from tests.messengers.conftest import VK_CONFIRMATION, VK_SECRET

pytestmark = pytest.mark.django_db


def connect(shop, *, token=FAKE_VK_TOKEN, confirmation=VK_CONFIRMATION, secret=VK_SECRET) -> Connection:
    return services.vk_connect(bot=shop, token=token, confirmation=confirmation, secret=secret)


def test_a_community_token_is_checked_and_sealed_with_the_callback_settings(shop, fake_vk, fast_retries):
    connection = connect(shop, token=f"  {FAKE_VK_TOKEN}\n", confirmation=f" {VK_CONFIRMATION} ")

    assert [call.method for call in fake_vk.calls] == ["groups.getById"]
    stored = Connection.objects.get(pk=connection.pk)
    assert stored.kind == Connection.Kind.VK and stored.status == Connection.Status.ACTIVE
    assert (stored.account_id, stored.account_name) == (str(FAKE_VK_GROUP_ID), "Магазин «Справка»")
    assert (stored.secret, stored.confirmation) == (VK_SECRET, VK_CONFIRMATION)
    assert stored.webhook_url == f"https://spravka.example/messengers/vk/{stored.webhook_key}/"
    assert FAKE_VK_TOKEN not in stored.token_sealed  # sealed, never in clear
    assert stored.token_hint == "…" + FAKE_VK_TOKEN[-4:]
    assert services.token_of(stored) == FAKE_VK_TOKEN
    assert stored.connected_at is not None and stored.error_shown == ""


@pytest.mark.parametrize(("fields", "says"), [
    ({"token": ""}, "не похоже на ключ доступа сообщества"),
    ({"token": "123456789:AAFakeTelegramTokenForTests_spravka"}, "не похоже на ключ доступа сообщества"),
    ({"confirmation": ""}, "строка, которую должен вернуть сервер"),
    ({"confirmation": "<script>"}, "строка, которую должен вернуть сервер"),
    ({"secret": ""}, "Секретный ключ"),
    ({"secret": "short"}, "Секретный ключ"),
    ({"secret": "пробел и кириллица"}, "Секретный ключ"),
])
def test_what_is_not_right_is_refused_before_vk_is_asked(shop, fake_vk, fast_retries, fields, says):
    with pytest.raises(services.ConnectFailed, match=says):
        connect(shop, **fields)
    assert fake_vk.calls == []
    assert not Connection.objects.exists()


def test_a_token_vk_does_not_know_saves_nothing(shop, fake_vk, fast_retries):
    with pytest.raises(services.ConnectFailed, match="ВКонтакте не знает этот ключ доступа"):
        connect(shop, token="vk1.a.UnknownUnknownUnknownUnknownUnknownUnknownUnknown")
    assert not Connection.objects.exists()


def test_a_user_s_token_is_not_a_community_s(shop, fake_vk, fast_retries):
    user_token = "vk1.a.UserTokenUserTokenUserTokenUserTokenUserTokenUserToken"
    fake_vk.add_user_token(user_token)
    with pytest.raises(services.ConnectFailed, match="Это не ключ сообщества"):
        connect(shop, token=user_token)
    assert not Connection.objects.exists()


def test_vk_away_is_said_and_nothing_saved(shop, fake_vk, fast_retries):
    fake_vk.down(502)
    with pytest.raises(services.ConnectFailed, match="ВКонтакте не ответил"):
        connect(shop)
    assert not Connection.objects.exists()


def test_connecting_again_keeps_the_address_and_takes_the_new_settings(vk_connected, fake_vk):
    again = connect(vk_connected.bot, confirmation="9f8e7d6c", secret="Another_secret_42")
    assert again.pk == vk_connected.pk and again.webhook_key == vk_connected.webhook_key
    assert (again.secret, again.confirmation) == ("Another_secret_42", "9f8e7d6c")


def test_both_messengers_live_side_by_side(vk_connected, fake_telegram):
    from tests.fakes import FAKE_TELEGRAM_TOKEN

    telegram = services.telegram_connect(bot=vk_connected.bot, token=FAKE_TELEGRAM_TOKEN)
    assert {telegram.kind, vk_connected.kind} == {"telegram", "vk"}
    assert "/messengers/telegram/" in telegram.webhook_url and "/messengers/vk/" in vk_connected.webhook_url


def test_disconnect_forgets_the_token_without_calling_vk(vk_connected, fake_vk):
    fake_vk.clear()
    services.connection_disconnect(connection=vk_connected)

    assert fake_vk.calls == []  # the Callback API server stays in the community's settings: its events are ignored
    stored = Connection.objects.get(pk=vk_connected.pk)
    assert stored.status == Connection.Status.DISCONNECTED and stored.token_sealed == ""


def test_the_command_connects_and_prints_the_address_for_the_community(shop, fake_vk, fast_retries):
    out = io.StringIO()
    call_command("channel", shop.slug, "vk", "--token", FAKE_VK_TOKEN, "--confirmation", VK_CONFIRMATION,
                 "--secret", VK_SECRET, stdout=out)
    connection = Connection.objects.get(bot=shop, kind="vk")
    assert connection.webhook_url in out.getvalue()
    assert "Магазин «Справка»" in out.getvalue() and "Callback API" in out.getvalue()

    call_command("channel", shop.slug, "vk", "--disconnect", stdout=out)
    assert Connection.objects.get(bot=shop, kind="vk").status == Connection.Status.DISCONNECTED


def test_the_command_says_what_is_wrong(shop, fake_vk, fast_retries):
    with pytest.raises(CommandError, match="Нужны ключ доступа сообщества, строка подтверждения и секретный ключ"):
        call_command("channel", shop.slug, "vk", "--token", FAKE_VK_TOKEN)
    with pytest.raises(CommandError, match="не похоже на ключ доступа"):
        call_command("channel", shop.slug, "vk", "--token", "nonsense", "--confirmation", VK_CONFIRMATION,
                     "--secret", VK_SECRET)
    with pytest.raises(CommandError, match="не подключён"):
        call_command("channel", shop.slug, "vk", "--disconnect")
