import pytest
from django.core.exceptions import ValidationError

from assistant.bots.models import Bot, Membership
from assistant.bots.selectors import bots_for_user
from assistant.bots.services import bot_create

pytestmark = pytest.mark.django_db


def test_creating_a_bot_allows_its_own_site_as_widget_origin():
    bot, password = bot_create(slug="shop", site_url="https://shop.example/ru/", owner_email="o@shop.example")
    assert bot.allowed_origins == ["https://shop.example"]
    assert password
    assert Membership.objects.get(bot=bot).role == Membership.Role.OWNER


def test_a_duplicate_slug_is_refused_with_a_clear_message(bot):
    with pytest.raises(ValidationError, match="уже существует"):
        bot_create(slug="demo", site_url="https://x.example/")


@pytest.mark.parametrize("url", ["not a url", "ftp://files.example/", "javascript:alert(1)"])
def test_a_bad_site_url_is_refused(url):
    with pytest.raises(ValidationError):
        bot_create(slug="bad", site_url=url)
    assert not Bot.objects.filter(slug="bad").exists()


def test_an_owner_sees_only_their_own_bots(bot, other_bot, owner):
    assert list(bots_for_user(owner)) == [bot]
