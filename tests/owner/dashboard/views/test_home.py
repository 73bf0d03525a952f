"""`/` after signing in: one bot -> its overview, several -> the list, an operator -> the inbox,
nobody's bot -> onboarding; superusers see every bot and the admin link."""

from __future__ import annotations

import pytest

from bots.models import Bot, Membership
from bots.services import membership_add

pytestmark = pytest.mark.django_db


def test_anonymous_people_are_sent_to_the_login(client):
    assert client.get("/")["Location"] == "/accounts/login/?next=/"


def test_an_owner_of_one_bot_goes_straight_to_its_overview(client, owner, bot):
    client.force_login(owner)
    assert client.get("/")["Location"] == "/b/demo/"


def test_an_owner_of_several_bots_sees_them_listed_with_their_numbers(client, owner, bot):
    second = Bot.objects.create(name="Второй <магазин>", slug="second", site_url="https://second.example/")
    Membership.objects.create(bot=second, user=owner, role=Membership.Role.OWNER)
    client.force_login(owner)
    page = client.get("/")
    text = page.content.decode()
    assert page.status_code == 200
    assert 'href="/b/demo/"' in text and 'href="/b/second/"' in text
    assert "Второй &lt;магазин&gt;" in text and "Разговоров за 7 дн." in text


def test_the_list_shows_only_the_owners_bots(client, owner, bot, other_bot):
    second = Bot.objects.create(name="Второй", slug="second")
    Membership.objects.create(bot=second, user=owner, role=Membership.Role.OWNER)
    client.force_login(owner)
    text = client.get("/").content.decode()
    assert "Чужой магазин" not in text and "/b/other/" not in text


def test_an_operator_only_account_still_goes_to_the_inbox(client, bot):
    operator = membership_add(bot=bot, email="op@shop.example", role="operator", password="pw-op-12345!")
    client.force_login(operator.membership.user)
    assert client.get("/")["Location"] == "/inbox/"
    assert client.get("/b/demo/").status_code == 404  # an operator has no owner pages


def test_a_person_without_any_bot_is_offered_onboarding(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("new@shop.example", password="pw-new-12345"))
    assert client.get("/")["Location"] == "/start/"
    page = client.get("/start/")
    assert page.status_code == 200 and "Проверить сайт" in page.content.decode()


def test_a_superuser_sees_every_bot_and_the_admin_link(client, django_user_model, bot, other_bot):
    admin = django_user_model.objects.create_superuser("root@spravka.example", password="pw-root-12345")
    client.force_login(admin)
    text = client.get("/").content.decode()
    assert "/b/demo/" in text and "/b/other/" in text and 'href="/admin/"' in text


def test_the_start_page_needs_a_login(client):
    assert client.get("/start/")["Location"].startswith("/accounts/login/")


def test_the_home_page_in_english(client, owner, bot):
    second = Bot.objects.create(name="Second", slug="second")
    Membership.objects.create(bot=second, user=owner, role=Membership.Role.OWNER)
    client.force_login(owner)
    text = client.get("/", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "Your bots" in text and "New bot" in text
