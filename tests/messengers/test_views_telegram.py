"""The webhook Telegram posts to: a forged update gets 403 and stores nothing, a body that is not an
update gets 400, an update is stored once however often it is resent, and one for a disconnected
bot is acknowledged and ignored. No worker here: what is checked is what the view lets in."""

from __future__ import annotations

import pytest

from messengers import services
from messengers.models import InboundUpdate
from tests.fakes.telegram_api import text_update
from tests.messengers.conftest import CHAT

pytestmark = pytest.mark.django_db


def test_an_update_is_stored_once_however_often_it_comes(post_update):
    update = text_update(101, CHAT, "Сколько стоит доставка?")
    assert post_update(update).status_code == 200
    assert post_update(update).status_code == 200
    assert InboundUpdate.objects.filter(update_id=101).count() == 1


@pytest.mark.parametrize("secret", ["", "wrong-secret", "x" * 300])
def test_a_forged_update_is_refused_and_nothing_stored(post_update, secret):
    response = post_update(text_update(102, CHAT, "привет"), secret=secret)
    assert response.status_code == 403
    assert not InboundUpdate.objects.exists()


NOT_UPDATES = [
    b"", b"not json", b"[1, 2]", b'{"message": {}}', b'{"update_id": "7"}',
    b'{"update_id": 7, "message": {"chat": "nonsense"}}', "\ud800".encode("utf-8", "surrogatepass"),
]


@pytest.mark.parametrize("body", NOT_UPDATES)
def test_a_body_that_is_not_an_update_gets_400(post_update, body):
    response = post_update(body)
    assert response.status_code == 400
    assert "Telegram" in response.json()["error"]
    assert not InboundUpdate.objects.exists()


def test_a_huge_body_is_refused(post_update, settings):
    settings.MESSENGER_MAX_BODY = 1000
    response = post_update(text_update(103, CHAT, "а" * 2000))
    assert response.status_code == 413
    assert not InboundUpdate.objects.exists()


def test_an_unknown_address_is_404(post_update):
    assert post_update(text_update(104, CHAT, "привет"), key="no-such-key").status_code == 404


def test_an_update_for_a_disconnected_bot_is_acknowledged_and_ignored(post_update, connected):
    services.connection_disconnect(connection=connected)
    assert post_update(text_update(105, CHAT, "привет")).status_code == 200
    assert not InboundUpdate.objects.exists()


def test_only_post_is_accepted(post_update, connected, client):
    assert client.get(f"/messengers/telegram/{connected.webhook_key}/").status_code == 405
