"""The old "try it" page (`/bots/<slug>/try/`) now sends its owner to the dashboard's setup page,
which carries what it had: the widget live on our own page and the snippet to paste. `/bots/`
sends everyone to the dashboard home."""

import html

import pytest
from django.test import override_settings
from django.urls import reverse

pytestmark = pytest.mark.django_db


def try_url(bot):
    return reverse("bots:try", args=[bot.slug])


def setup_url(bot):
    return reverse("dashboard:setup", args=[bot.slug])


def test_the_try_page_redirects_its_owner_to_the_setup_page(client, owner, bot):
    client.force_login(owner)
    response = client.get(try_url(bot))
    assert response.status_code == 302
    assert response["Location"] == setup_url(bot)
    assert client.get(response["Location"]).status_code == 200


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


def test_an_operator_has_no_try_page(client, bot):
    from bots.services import membership_add

    operator = membership_add(bot=bot, email="op@shop.example", role="operator", password="pw-operator-1")
    client.force_login(operator.membership.user)
    assert client.get(try_url(bot)).status_code == 404
    assert client.get(setup_url(bot)).status_code == 404


def test_the_bot_list_is_the_dashboard_home(client, owner, bot):
    client.force_login(owner)
    response = client.get(reverse("bots:list"))
    assert response.status_code == 302
    assert response["Location"] == reverse("home")
    assert client.get(reverse("home"))["Location"] == reverse("dashboard:overview", args=[bot.slug])


def test_nothing_in_the_templates_links_to_the_old_page():
    from pathlib import Path

    from django.conf import settings

    base = Path(settings.BASE_DIR)
    roots = [base / "templates", *base.glob("*/templates"), *base.glob("assistant/*/templates")]
    templates = [p for root in roots for p in root.glob("**/*.html")]
    assert templates
    assert [str(p) for p in templates if "bots:try" in p.read_text() or "/try/" in p.read_text()] == []


@override_settings(SPRAVKA_PUBLIC_URL="https://chat.example")
def test_the_setup_page_shows_the_snippet_as_text_and_the_live_widget(client, owner, bot):
    client.force_login(owner)
    text = client.get(setup_url(bot)).content.decode()
    src = "https://chat.example/static/assistant/widget.js"
    snippet = f'<script src="{src}" data-bot="{bot.public_key}" async></script>'
    assert html.escape(snippet) in text  # shown as text to copy, not executed
    assert f'src="http://testserver/static/assistant/widget.js" data-bot="{bot.public_key}"' in text
    assert 'src="/static/owner/snippet-copy.js"' in text


def test_the_bot_name_cannot_inject_markup_on_the_setup_page(client, owner, bot):
    bot.name = '"><script>alert(1)</script>'
    bot.save(update_fields=["name"])
    client.force_login(owner)
    text = client.get(setup_url(bot)).content.decode()
    assert "<script>alert(1)</script>" not in text


def test_the_setup_pages_widget_speaks_the_bots_language_whatever_the_owners_ui(client, owner, bot, settings):
    from django.utils import translation

    client.force_login(owner)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    try:
        text = client.get(setup_url(bot)).content.decode()
    finally:
        translation.activate(settings.LANGUAGE_CODE)  # the request left English active in this thread
    assert 'lang="en"' in text
    assert f'data-bot="{bot.public_key}" data-title="{bot.name}" data-lang="{bot.language}"' in text
