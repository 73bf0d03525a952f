import pytest
from django.core.exceptions import ValidationError

from bots.models import Bot, Membership
from bots.selectors import bots_for_user
from bots.services import bot_create

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


def test_roles_limit_which_bots_a_member_sees(bot, other_bot, django_user_model):
    from bots.models import Membership
    from bots.selectors import inbox_bots, owned_bots

    operator = django_user_model.objects.create_user(username="op@shop.example", password="pw-op-1")
    Membership.objects.create(bot=bot, user=operator, role=Membership.Role.OPERATOR)
    assert list(bots_for_user(operator)) == [bot]
    assert list(inbox_bots(operator)) == [bot]
    assert list(owned_bots(operator)) == []
    assert list(owned_bots(bot.memberships.get(role="owner").user)) == [bot]
