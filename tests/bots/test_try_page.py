"""The owner's "try it" page: the widget live on our own page and the snippet to paste."""

import html

import pytest
from django.test import override_settings
from django.urls import reverse

pytestmark = pytest.mark.django_db


def try_url(bot):
    return reverse("bots:try", args=[bot.slug])


@override_settings(SPRAVKA_PUBLIC_URL="https://chat.example")
def test_an_owner_sees_their_bots_snippet_and_the_live_widget(client, owner, bot):
    client.force_login(owner)
    page = client.get(try_url(bot))
    assert page.status_code == 200
    text = page.content.decode()
    src = "https://chat.example/static/assistant/widget.js"
    snippet = f'<script src="{src}" data-bot="{bot.public_key}" async></script>'
    assert html.escape(snippet) in text  # shown as text to copy, not executed
    assert f'src="http://testserver/static/assistant/widget.js" data-bot="{bot.public_key}"' in text


def test_another_owners_bot_is_not_found(client, owner, other_bot):
    client.force_login(owner)
    assert client.get(try_url(other_bot)).status_code == 404


def test_a_missing_bot_is_not_found_either(client, owner, bot):
    client.force_login(owner)
    assert client.get(reverse("bots:try", args=["no-such-bot"])).status_code == 404


def test_an_anonymous_visitor_is_sent_to_the_login_page(client, bot):
    response = client.get(try_url(bot))
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('login')}?next={try_url(bot)}"


def test_an_owner_of_several_bots_can_switch_between_them(client, owner, bot, other_bot):
    from assistant.bots.models import Membership

    Membership.objects.create(bot=other_bot, user=owner, role=Membership.Role.OWNER)
    client.force_login(owner)
    text = client.get(try_url(bot)).content.decode()
    assert f'href="{try_url(other_bot)}"' in text


def test_the_bot_list_opens_the_first_bots_try_page(client, owner, bot):
    client.force_login(owner)
    response = client.get(reverse("bots:list"))
    assert response.status_code == 302
    assert response["Location"] == try_url(bot)


def test_the_try_page_works_whatever_the_allowed_origins_say(client, owner, bot):
    """A member's own page on this server may open the widget (tests/chat/test_consumer_handoff.py
    opens the socket); the page no longer warns about its own origin."""
    bot.allowed_origins = ["https://shop.example"]
    bot.save(update_fields=["allowed_origins"])
    client.force_login(owner)
    assert "не входит в разрешённые источники" not in client.get(try_url(bot)).content.decode()


def test_the_bot_name_cannot_inject_markup(client, owner, bot):
    bot.name = '"><script>alert(1)</script>'
    bot.save(update_fields=["name"])
    client.force_login(owner)
    text = client.get(try_url(bot)).content.decode()
    assert "<script>alert(1)</script>" not in text


def test_an_operator_has_no_try_page(client, bot, django_user_model):
    from assistant.bots.services import membership_add

    operator = membership_add(bot=bot, email="op@shop.example", role="operator", password="pw-operator-1")
    client.force_login(operator.membership.user)
    assert client.get(try_url(bot)).status_code == 404
    assert client.get(reverse("bots:list")).status_code == 404
