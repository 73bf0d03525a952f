"""The owner layout's tabs (templates/owner/base.html): every link leads to a page the owner can
open — no 404 and no redirect to a login — in Russian and in English, and each owner page marks
its own tab as the current one.

Cross-cutting: every owner page's tabs (templates/owner/base.html, owner/urls.py)."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.django_db

NAV = re.compile(r'<nav class="tabs"[^>]*>(.*?)</nav>', re.S)
LINK = re.compile(r'<a href="([^"]+)"( aria-current="page")?>([^<]+)</a>')

# Every section the layout highlights, with the page that highlights it.
SECTIONS = {
    "overview": "/b/demo/", "knowledge": "/b/demo/knowledge/", "testing": "/b/demo/testing/",
    "voice": "/b/demo/voice/", "experiments": "/b/demo/experiments/", "usage": "/b/demo/usage/",
    "members": "/b/demo/members/", "setup": "/b/demo/setup/", "channels": "/b/demo/channels/",
}
LABELS = {
    "ru": {"members": "Участники", "review": "Очередь проверки"},
    "en": {"members": "Members", "review": "Review queue"},
}


def tabs(html: str) -> list[tuple[str, bool, str]]:
    (nav,) = NAV.findall(html)
    return [(href.replace("&amp;", "&"), bool(current), label.strip()) for href, current, label in LINK.findall(nav)]


@pytest.mark.parametrize("language", ["ru", "en"])
def test_every_tab_of_the_owner_layout_opens_a_page(owner_client, bot, settings, language):
    owner_client.cookies[settings.LANGUAGE_COOKIE_NAME] = language
    links: dict[str, str] = {}
    for section, path in SECTIONS.items():
        response = owner_client.get(path)
        assert response.status_code == 200, path
        page = tabs(response.content.decode())
        current = [href for href, is_current, _label in page if is_current]
        assert current == [path], (section, current)  # the page's own tab, and only it, is marked
        links |= {href: label for href, _current, label in page}
        assert f'<html lang="{language}">' in response.content.decode()

    assert set(SECTIONS.values()) <= set(links)
    assert "/answers/" not in links  # there is no index of answers: the tab led to a 404
    labels = set(links.values())
    assert {LABELS[language]["members"], LABELS[language]["review"]} <= labels
    for href, label in links.items():
        response = owner_client.get(href)
        assert response.status_code == 200, (href, label, response.status_code)
        assert f'lang="{language}"' in response.content.decode(), href


def test_the_review_tab_opens_the_queue_of_this_bot(owner_client, owner, bot):
    """The owner of two bots gets, from one bot's tab, that bot's review queue: the other's items
    stay out of it."""
    from bots.models import Bot, Membership
    from review.models import ReviewItem
    from tests.owner.dashboard.conftest import seed_activity

    second = Bot.objects.create(name="Второй магазин", slug="second", site_url="http://127.0.0.3/")
    Membership.objects.create(bot=second, user=owner, role=Membership.Role.OWNER)
    seed_activity(bot, conversations=2)  # one pending review item, one decided
    seed_activity(second, conversations=2)
    ReviewItem.objects.filter(bot=bot, status="pending").update(question="Можно вернуть открытый товар?")
    (href,) = [href for href, _current, label in tabs(owner_client.get("/b/demo/").content.decode())
               if label == "Очередь проверки"]
    assert href == f"/admin/review/reviewitem/?bot={bot.pk}"
    response = owner_client.get(href)
    assert response.status_code == 200
    state = response.context["state"]
    assert state["total"] == 1  # this bot's pending item; the second bot's is not in the queue
    assert state["current"]["bot"]["id"] == bot.pk
    assert state["current"]["question"] == "Можно вернуть открытый товар?"


def test_the_members_page_is_its_own_section(owner_client, bot):
    page = tabs(owner_client.get("/b/demo/members/").content.decode())
    assert [label for _href, current, label in page if current] == ["Участники"]


TOP_TABS = re.compile(r'<nav class="tabs"[^>]*>(.*?)<details', re.S)


def test_seven_tabs_stay_in_the_row_and_the_rest_is_behind_more(owner_client):
    """Seven tabs and «Ещё» keep one line at 1280 px even in the widest header (tests/e2e/
    test_owner_layout_live.py); a page behind «Ещё» marks «Ещё» as holding the current one."""
    html = owner_client.get("/b/demo/experiments/").content.decode()
    (row,) = TOP_TABS.findall(html)
    assert [label.strip() for _href, _current, label in LINK.findall(row)] == [
        "Обзор", "Знания", "Проверка", "Голос", "Установка", "Мессенджеры", "Очередь проверки"]
    assert '<details class="more has-current">' in html
    assert '<details class="more">' in owner_client.get("/b/demo/channels/").content.decode()


# The admin pages an owner works in, with the tab each marks (Gaps' is behind «Ещё»).
FRAMED = {"review": "/admin/review/reviewitem/?bot={pk}", "gaps": "/admin/feedback/gap/?bot={pk}"}
FRAMED_LABELS = {"ru": {"review": "Очередь проверки", "gaps": "Пробелы в знаниях"},
                 "en": {"review": "Review queue", "gaps": "Knowledge gaps"}}


@pytest.mark.parametrize("language", ["ru", "en"])
@pytest.mark.parametrize("section", list(FRAMED))
def test_the_review_queue_and_gaps_wear_the_owner_header_with_their_tab_marked(
    owner_client, bot, settings, language, section
):
    owner_client.cookies[settings.LANGUAGE_COOKIE_NAME] = language
    path = FRAMED[section].format(pk=bot.pk)
    html = owner_client.get(path).content.decode()
    page = tabs(html)
    assert [(href, label) for href, current, label in page if current] == [(path, FRAMED_LABELS[language][section])]
    assert ("/b/demo/", False) in [(href, current) for href, current, _label in page]  # the way back to the overview
    assert ('<details class="more has-current">' in html) == (section == "gaps")
    # The admin's own header, breadcrumbs and sidebar are gone; its content stays.
    assert 'id="site-name"' not in html and 'class="breadcrumbs"' not in html and 'id="nav-sidebar"' not in html
    assert 'id="review-app"' in html if section == "review" else 'class="gaps"' in html
    assert f'<html lang="{language}"' in html


def test_the_header_of_the_queue_names_the_bot_it_is_filtered_to(owner_client, owner, bot):
    """An owner of two bots: the queue of each wears that bot's tabs; unfiltered, the first's by name.
    A bot they do not own (another tenant's id in the URL) does not change the tabs."""
    from bots.models import Bot, Membership

    second = Bot.objects.create(name="Второй магазин", slug="second", site_url="http://127.0.0.3/")
    Membership.objects.create(bot=second, user=owner, role=Membership.Role.OWNER)
    stranger = Bot.objects.create(name="Чужой", slug="stranger", site_url="http://127.0.0.4/")

    def header(query: str) -> tuple[str, str]:
        """The overview tab's link and the bot the switcher shows."""
        html = owner_client.get(f"/admin/review/reviewitem/{query}").content.decode()
        (selected,) = re.findall(r'<option value="([^"]+)" selected>', html.split('<nav class="tabs"')[0])
        return next(href for href, _current, label in tabs(html) if label == "Обзор"), selected

    assert header(f"?bot={bot.pk}") == ("/b/demo/", "demo")
    assert header(f"?bot={second.pk}") == ("/b/second/", "second")
    assert header("") == ("/b/second/", "second")  # «Второй магазин» comes first by name
    assert header(f"?bot={stranger.pk}") == ("/b/second/", "second")
