"""The widget's side of invitations and page reports, against the real app (uvicorn on the test
database) and the owner's invitation rules: a `page` frame on load and on a single-page navigation
(before any hello), an `invite` shown after its seconds or only when the pointer leaves the window,
`invite_shown` sent once it is shown (and recorded by the server), never while the panel is open,
the text escaped, and the chat opening from it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from django.core.cache import cache
from django.db import connections
from playwright.sync_api import Page, expect
from pytest_django import DjangoDbBlocker

from behavior.models import InvitationRule, InvitationShow
from bots.models import Bot
from tests.e2e.conftest import ShopFactory, snippet
from tests.e2e.widget import Frames, Widget, wait_for

pytestmark = pytest.mark.django_db

EVIL = '<img src=x onerror="window.pwned=1">Нужна помощь с выбором?'
EVIL_AGAIN = "<script>window.pwned=2</script>Всё ещё выбираете?"
WAIT = 30  # s: the app's first page reports (its first database work) while the other test worker shares the cores


@dataclass
class Rules:
    shop: str
    bot: Bot
    waiting: InvitationRule  # /catalog/, after a second
    again: InvitationRule  # /catalog/ too: the next one, once `waiting` was shown to the visitor
    leaving: InvitationRule  # /catalog/kitchen/, when the pointer leaves at the top
    panel: InvitationRule  # /payment/, after a second


@pytest.fixture(scope="module")
def rules(live_app: str, shop_factory: ShopFactory, django_db_blocker: DjangoDbBlocker) -> Iterator[Rules]:
    """A shop's bot with four invitation rules, committed so that the app sees them."""
    with django_db_blocker.unblock():
        bot = Bot.objects.create(name="ТехноДом", slug="e2e-invitations")
        shop = shop_factory(snippet(live_app, bot.public_key))
        bot.site_url, bot.allowed_origins = f"{shop}/", [shop]
        bot.save(update_fields=["site_url", "allowed_origins"])

        def rule(name: str, pattern: str, text: str, seconds: int = 0, on_leave: bool = False) -> InvitationRule:
            return InvitationRule.objects.create(bot=bot, name=name, url_pattern=pattern, text=text,
                                                 seconds_on_page=seconds, on_leave=on_leave)

        found = Rules(
            shop=shop, bot=bot,
            waiting=rule("Каталог", "/catalog/", EVIL, seconds=1),
            again=rule("Каталог, снова", "/catalog/", EVIL_AGAIN, seconds=1),
            leaving=rule("Уходит с кухни", "/catalog/kitchen/", "Уже уходите? Спросите нас.", on_leave=True),
            panel=rule("Оплата", "/payment/", "Помочь?", seconds=1),
        )
    yield found
    with django_db_blocker.unblock():
        bot.delete()
        connections.close_all()  # see wait_for_app_sessions_to_end in conftest.py


def shows(rules: Rules, frames: Frames) -> list[int]:
    """The rules the server recorded as shown to this visitor, in order."""
    visitor = frames.sent("page")[0]["visitor_id"]
    return list(InvitationShow.objects.filter(bot=rules.bot, visitor_id=visitor).order_by("pk")
                .values_list("rule_id", flat=True))


def test_pages_are_reported_on_load_and_on_navigation_without_a_hello(page: Page, frames: Frames, rules: Rules):
    shop = rules.shop
    page.goto(f"{shop}/delivery/")
    frames.wait(lambda: frames.sent("page"))
    first = frames.sent("page")[0]
    assert first["url"] == f"{shop}/delivery/" and first["visitor_id"].startswith("v_")
    assert "Доставка" in first["title"] and first["referrer"] == ""
    assert frames.sent("hello") == []  # a page view opens no conversation
    page.evaluate("history.pushState({}, '', '/delivery/moscow/')")
    frames.wait(lambda: len(frames.sent("page")) == 2, timeout=5)
    assert frames.sent("page")[1]["url"] == f"{shop}/delivery/moscow/"
    # The app took both (a bad one gets `bad_frame`) and now knows the visitor (behavior/invitations.py).
    assert frames.received("error") == []
    wait_for(lambda: isinstance(cache.get(f"behavior:seen:{rules.bot.pk}:{first['visitor_id']}"), int), WAIT)


def test_an_invitation_waits_its_seconds_is_escaped_and_opens_the_chat(page: Page, frames: Frames, rules: Rules):
    page.goto(f"{rules.shop}/catalog/")
    invite = page.locator("spravka-widget .invite")
    expect(invite).to_have_count(0)
    expect(invite).to_be_visible(timeout=WAIT * 1000)
    expect(invite.locator(".invite-text")).to_have_text(EVIL)
    assert page.evaluate("window.pwned") is None
    frames.wait(lambda: frames.sent("invite_shown") == [{"type": "invite_shown", "rule": rules.waiting.pk}])
    invite.get_by_role("button", name="Закрыть приглашение").click()
    expect(invite).to_have_count(0)
    wait_for(lambda: shows(rules, frames) == [rules.waiting.pk])
    # The server decides what shows on the next page view: not the same rule to the same visitor
    # within its days, so here the next rule for this page.
    page.reload()
    expect(invite).to_be_visible(timeout=WAIT * 1000)
    expect(invite.locator(".invite-text")).to_have_text(EVIL_AGAIN)
    invite.locator(".invite-text").click()
    widget = Widget(page)
    expect(widget.panel).to_be_visible()
    expect(page.locator("spravka-widget .empty")).to_have_text(EVIL_AGAIN)
    assert page.evaluate("window.pwned") is None
    frames.wait(lambda: len(frames.received("welcome")) == 1)
    assert len(frames.sent("hello")) == 1
    assert [f["rule"] for f in frames.sent("invite_shown")] == [rules.waiting.pk, rules.again.pk]
    wait_for(lambda: shows(rules, frames) == [rules.waiting.pk, rules.again.pk])


def test_a_leaving_invitation_waits_for_the_pointer_to_leave_at_the_top(page: Page, frames: Frames, rules: Rules):
    page.goto(f"{rules.shop}/catalog/kitchen/")
    frames.wait(lambda: frames.received("invite"), WAIT)
    assert frames.received("invite")[0]["on_leave"] is True
    page.evaluate("() => new Promise((done) => setTimeout(done, 50))")  # the widget's wait (0 s) is over
    invite = page.locator("spravka-widget .invite")
    expect(invite).to_have_count(0)
    page.evaluate("document.dispatchEvent(new MouseEvent('mouseout', {clientY: 300, bubbles: true}))")
    expect(invite).to_have_count(0)  # leaving through the side of an element is no leaving
    page.evaluate("document.dispatchEvent(new MouseEvent('mouseout', {clientY: -2, bubbles: true}))")
    expect(invite).to_be_visible()
    frames.wait(lambda: frames.sent("invite_shown"))
    assert frames.sent("invite_shown") == [{"type": "invite_shown", "rule": rules.leaving.pk}]
    wait_for(lambda: shows(rules, frames) == [rules.leaving.pk])


def test_no_invitation_while_the_panel_is_open(page: Page, frames: Frames, rules: Rules):
    page.goto(f"{rules.shop}/payment/")
    Widget(page).open()
    frames.wait(lambda: frames.received("invite"), WAIT)  # the server did invite this visitor
    assert frames.received("invite")[0]["rule"] == rules.panel.pk
    page.wait_for_timeout(2000)  # the invitation's second, and then some
    expect(page.locator("spravka-widget .invite")).to_have_count(0)
    assert frames.sent("invite_shown") == []
    assert shows(rules, frames) == []
