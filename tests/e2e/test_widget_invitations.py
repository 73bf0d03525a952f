"""The widget's side of invitations and page reports, against the protocol fake: a `page` frame on
load and on a single-page navigation (before any hello), an `invite` shown after its seconds or
only when the pointer leaves the window, `invite_shown` sent once it is shown, never while the
panel is open, the text escaped, and the chat opening from it."""

from __future__ import annotations

import time

from playwright.sync_api import Page, expect

from tests.e2e.fake_chat import FakeChat
from tests.e2e.widget import Widget, wait_for

EVIL = '<img src=x onerror="window.pwned=1">Нужна помощь с выбором?'


def test_pages_are_reported_on_load_and_on_navigation_without_a_hello(page: Page, fake_shop: str, fake_chat: FakeChat):
    page.goto(f"{fake_shop}/delivery/")
    wait_for(lambda: fake_chat.sent("page"))
    first = fake_chat.sent("page")[0]
    assert first["url"] == f"{fake_shop}/delivery/" and first["visitor_id"].startswith("v_")
    assert "Доставка" in first["title"] and first["referrer"] == ""
    assert fake_chat.sent("hello") == []  # a page view opens no conversation
    page.evaluate("history.pushState({}, '', '/delivery/moscow/')")
    wait_for(lambda: len(fake_chat.sent("page")) == 2, timeout=5)
    assert fake_chat.sent("page")[1]["url"] == f"{fake_shop}/delivery/moscow/"


def test_an_invitation_waits_its_seconds_is_escaped_and_opens_the_chat(page: Page, fake_shop: str, fake_chat: FakeChat):
    fake_chat.invite = {"rule": 7, "text": EVIL, "after_seconds": 1, "on_leave": False}
    page.goto(f"{fake_shop}/catalog/")
    invite = page.locator("spravka-widget .invite")
    expect(invite).to_have_count(0)
    expect(invite).to_be_visible(timeout=5000)
    expect(invite.locator(".invite-text")).to_have_text(EVIL)
    assert page.evaluate("window.pwned") is None
    wait_for(lambda: fake_chat.sent("invite_shown") == [{"type": "invite_shown", "rule": 7}])
    invite.get_by_role("button", name="Закрыть приглашение").click()
    expect(invite).to_have_count(0)
    page.reload()  # the server decides whether it shows again; here it does
    expect(invite).to_be_visible(timeout=5000)
    invite.locator(".invite-text").click()
    widget = Widget(page)
    expect(widget.panel).to_be_visible()
    expect(page.locator("spravka-widget .empty")).to_have_text(EVIL)
    wait_for(lambda: len(fake_chat.sent("hello")) == 1)


def test_a_leaving_invitation_waits_for_the_pointer_to_leave_at_the_top(
    page: Page, fake_shop: str, fake_chat: FakeChat
):
    fake_chat.invite = {"rule": 8, "text": "Уже уходите? Спросите нас.", "after_seconds": 0, "on_leave": True}
    page.goto(f"{fake_shop}/catalog/")
    wait_for(lambda: fake_chat.sent("page"))
    time.sleep(1)
    invite = page.locator("spravka-widget .invite")
    expect(invite).to_have_count(0)
    page.evaluate("document.dispatchEvent(new MouseEvent('mouseout', {clientY: 300, bubbles: true}))")
    expect(invite).to_have_count(0)  # leaving through the side of an element is no leaving
    page.evaluate("document.dispatchEvent(new MouseEvent('mouseout', {clientY: -2, bubbles: true}))")
    expect(invite).to_be_visible()
    assert fake_chat.sent("invite_shown")[-1] == {"type": "invite_shown", "rule": 8}


def test_no_invitation_while_the_panel_is_open(page: Page, fake_shop: str, fake_chat: FakeChat):
    fake_chat.invite = {"rule": 9, "text": "Помочь?", "after_seconds": 1, "on_leave": False}
    page.goto(f"{fake_shop}/catalog/")
    Widget(page).open()
    time.sleep(2)
    expect(page.locator("spravka-widget .invite")).to_have_count(0)
    assert fake_chat.sent("invite_shown") == []
