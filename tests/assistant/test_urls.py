"""The app's icon: every page's template links it, and /favicon.ico (which browsers ask for anyway)
leads to it. Over HTTP from the real server: tests/e2e/test_review_live.py."""

from __future__ import annotations

import re

import pytest
from django.contrib.staticfiles import finders

pytestmark = pytest.mark.django_db

ICON = re.compile(r'<link rel="icon" href="/static/([^"]+)"')


def icons(html: str) -> list[str]:
    found = ICON.findall(html)
    assert found, "no icon linked"
    for path in found:
        assert finders.find(path), path
    return found


def test_favicon_ico_redirects_to_the_icon_file(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 301 and response["Location"] == "/static/assistant/favicon.ico"
    found = finders.find("assistant/favicon.ico")
    assert found
    with open(found, "rb") as icon:
        assert icon.read(4) == b"\x00\x00\x01\x00"  # an ICO file: browsers that ask for /favicon.ico take it


def test_every_base_template_links_the_icon(client, owner, bot):
    from bots.services import membership_add
    from knowledge.models import Entry

    anonymous = {path: client.get(path) for path in ("/accounts/login/", "/admin/login/")}
    entry = Entry.objects.create(bot=bot, kind=Entry.Kind.QA, key="fix-1", title="Доставка?", text="Да.")
    anonymous["answer page"] = client.get(f"/answers/{bot.public_key}/{entry.key}/")
    client.force_login(owner)
    signed_in = {path: client.get(path) for path in (
        "/b/demo/", "/admin/", "/admin/knowledge/entry/", f"/admin/review/reviewitem/?bot={bot.pk}", "/inbox/",
        "/accounts/password_change/",
    )}
    operator = membership_add(bot=bot, email="op@shop.example", role="operator", password="pw-op-12345").membership
    client.force_login(operator.user)
    signed_in["operator's inbox"] = client.get("/inbox/")
    for name, response in {**anonymous, **signed_in}.items():
        assert response.status_code == 200, name
        assert "assistant/favicon.svg" in icons(response.content.decode()), name
