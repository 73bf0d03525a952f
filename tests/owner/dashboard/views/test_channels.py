"""`/b/<slug>/channels/`: the owner connects Telegram by pasting the token (checked with the fake
Bot API through the real client), a VK community with its key, string and secret, a MAX bot with its
token (checked with the fake MAX Bot API), sees the status, the token's last characters only, the
last error and the conversations; bad tokens are named; another owner's bot is a 404, its connection
untouched."""

from __future__ import annotations

import pytest

from messengers import services
from messengers.models import Connection
from tests.fakes import FAKE_MAX_TOKEN, FAKE_TELEGRAM_TOKEN, fake_max, fake_telegram, fake_vk  # noqa: F401

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _public(settings):
    settings.SPRAVKA_PUBLIC_URL = "https://spravka.example"


def test_a_bot_without_channels_is_shown_how_to_connect(owner_client, bot):
    html = owner_client.get("/b/demo/channels/").content.decode()
    assert "не подключён" in html and "/newbot" in html and "Проверить и подключить" in html
    assert 'aria-current="page">Мессенджеры<' in html


def test_pasting_the_token_connects_and_shows_only_its_end(owner_client, bot, fake_telegram):  # noqa: F811
    response = owner_client.post("/b/demo/channels/telegram/", {"token": FAKE_TELEGRAM_TOKEN}, follow=True)
    html = response.content.decode()
    assert response.status_code == 200
    assert "Telegram подключён: @spravka_test_bot" in html and "подключён" in html
    assert FAKE_TELEGRAM_TOKEN not in html and "…" + FAKE_TELEGRAM_TOKEN[-4:] in html
    connection = Connection.objects.get(bot=bot)
    assert connection.webhook_url in html
    assert fake_telegram.calls_of("setWebhook")[0].params["url"] == connection.webhook_url


@pytest.mark.parametrize(("token", "says"), [
    ("", "Обязательное поле"),
    ("not a token", "не похоже на токен Telegram"),
    ("7000000999:AAUnknownTokenUnknownTokenUnknown", "Telegram не знает этот токен"),
])
def test_a_bad_token_is_named_and_nothing_saved(owner_client, bot, fake_telegram, token, says):  # noqa: F811
    response = owner_client.post("/b/demo/channels/telegram/", {"token": token})
    assert response.status_code == 400
    assert says in response.content.decode()
    assert not Connection.objects.exists()


def test_the_page_warns_when_telegram_could_not_reach_this_server(owner_client, bot, settings):
    settings.SPRAVKA_PUBLIC_URL = "http://127.0.0.1:8000"
    assert 'id="public-url"' in owner_client.get("/b/demo/channels/").content.decode()


def test_the_last_delivery_error_is_shown(owner_client, bot, fake_telegram):  # noqa: F811
    connection = services.telegram_connect(bot=bot, token=FAKE_TELEGRAM_TOKEN)
    services.connection_failing(connection, {"msgid": "сообщение не доставлено: %(error)s",
                                             "params": {"error": "Timed out"}})
    html = owner_client.get("/b/demo/channels/").content.decode()
    assert "ошибка доставки" in html and "сообщение не доставлено: Timed out" in html


def test_disconnect(owner_client, bot, fake_telegram):  # noqa: F811
    services.telegram_connect(bot=bot, token=FAKE_TELEGRAM_TOKEN)
    response = owner_client.post("/b/demo/channels/telegram/disconnect/", follow=True)
    assert "токен забыт" in response.content.decode()
    assert Connection.objects.get(bot=bot).status == Connection.Status.DISCONNECTED
    assert fake_telegram.calls_of("deleteWebhook")


def test_another_owners_bot_is_a_404_and_its_connection_untouched(owner_client, other_bot, fake_telegram):  # noqa: F811
    connection = services.telegram_connect(bot=other_bot, token=FAKE_TELEGRAM_TOKEN)
    assert owner_client.get("/b/other/channels/").status_code == 404
    assert owner_client.post("/b/other/channels/telegram/", {"token": FAKE_TELEGRAM_TOKEN}).status_code == 404
    assert owner_client.post("/b/other/channels/telegram/disconnect/").status_code == 404
    assert Connection.objects.get(pk=connection.pk).status == Connection.Status.ACTIVE


def test_the_page_needs_a_sign_in(client, bot):
    response = client.get("/b/demo/channels/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_a_vk_community_is_connected_with_its_key_string_and_secret(owner_client, bot, fake_vk):  # noqa: F811
    from tests.fakes import FAKE_VK_TOKEN
    from tests.messengers.conftest import VK_CONFIRMATION, VK_SECRET

    form = {"token": FAKE_VK_TOKEN, "confirmation": VK_CONFIRMATION, "secret": VK_SECRET}
    html = owner_client.post("/b/demo/channels/vk/", form, follow=True).content.decode()
    connection = Connection.objects.get(bot=bot, kind=Connection.Kind.VK)
    assert "подключено" in html and connection.webhook_url in html
    assert FAKE_VK_TOKEN not in html and connection.token_hint in html
    assert "5.199" in html  # how to finish in the community's Callback API settings


def test_a_bad_vk_key_is_named_and_nothing_saved(owner_client, bot, fake_vk):  # noqa: F811
    from tests.messengers.conftest import VK_CONFIRMATION, VK_SECRET

    form = {"token": "vk1.a.not-a-known-key-not-a-known-key-not-a-known-key-0000", "confirmation": VK_CONFIRMATION,
            "secret": VK_SECRET}
    response = owner_client.post("/b/demo/channels/vk/", form)
    assert response.status_code == 400 and 'id="vk-errors"' in response.content.decode()
    assert not Connection.objects.filter(kind=Connection.Kind.VK).exists()
    assert owner_client.post("/b/demo/channels/vk/", {"token": "", "confirmation": "", "secret": ""}).status_code == 400


def test_a_max_bot_is_connected_with_its_token_and_shows_only_its_end(owner_client, bot, fake_max):  # noqa: F811
    html = owner_client.get("/b/demo/channels/").content.decode()
    assert 'id="max"' in html and "business.max.ru" in html and 'name="max-token"' in html
    response = owner_client.post("/b/demo/channels/max/", {"max-token": FAKE_MAX_TOKEN}, follow=True)
    html = response.content.decode()
    assert response.status_code == 200
    assert "MAX подключён: бот «spravka_shop_bot» отвечает посетителям." in html
    connection = Connection.objects.get(bot=bot, kind=Connection.Kind.MAX)
    assert connection.webhook_url in html and connection.token_hint in html
    assert FAKE_MAX_TOKEN not in html and connection.secret not in html
    assert fake_max.subscriptions(FAKE_MAX_TOKEN)[connection.webhook_url]["secret"] == connection.secret


@pytest.mark.parametrize(("token", "says"), [
    ("", "Обязательное поле"),
    ("not a token", "не похоже на токен MAX"),
    ("UnknownMaxTokenUnknownMaxToken", "MAX не знает этот токен"),
])
def test_a_bad_max_token_is_named_under_its_field_and_nothing_saved(owner_client, bot, fake_max, token, says):  # noqa: F811
    response = owner_client.post("/b/demo/channels/max/", {"max-token": token})
    html = response.content.decode()
    assert response.status_code == 400 and 'id="max-errors"' in html and says in html
    assert not Connection.objects.filter(kind=Connection.Kind.MAX).exists()


def test_max_s_conversations_and_last_error_are_shown_and_it_disconnects(owner_client, bot, fake_max):  # noqa: F811
    from chat.models import Conversation

    connection = services.max_connect(bot=bot, token=FAKE_MAX_TOKEN)
    for chat in ("max:1", "max:2"):
        Conversation.objects.create(bot=bot, visitor_id=chat, channel=Conversation.Channel.MAX)
    services.connection_failing(connection, {"msgid": "сообщение не доставлено: %(error)s",
                                             "params": {"error": "messages: MAX 503"}})
    html = owner_client.get("/b/demo/channels/").content.decode()
    card = html[html.index('id="max"'):html.index('id="widget-count"')]
    assert "ошибка доставки" in card and "сообщение не доставлено: messages: MAX 503" in card
    assert "<dd>2</dd>" in card  # the conversations of the last 30 days

    response = owner_client.post("/b/demo/channels/max/disconnect/", follow=True)
    assert "MAX отключён: токен забыт" in response.content.decode()
    assert Connection.objects.get(pk=connection.pk).status == Connection.Status.DISCONNECTED
    assert fake_max.subscriptions(FAKE_MAX_TOKEN) == {}


def test_another_owners_max_bot_is_a_404(owner_client, other_bot, fake_max):  # noqa: F811
    connection = services.max_connect(bot=other_bot, token=FAKE_MAX_TOKEN)
    assert owner_client.post("/b/other/channels/max/", {"max-token": FAKE_MAX_TOKEN}).status_code == 404
    assert owner_client.post("/b/other/channels/max/disconnect/").status_code == 404
    assert Connection.objects.get(pk=connection.pk).status == Connection.Status.ACTIVE
