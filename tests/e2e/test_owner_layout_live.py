"""Owner pages in a real browser (Chromium, the real app under uvicorn): the shared snippet copy
button (static/owner/snippet-copy.js) copies through the Clipboard API and, where the page may not
use it, selects the code instead; the owner tabs (templates/owner/base.html) keep one line at
1280 px and their «Ещё» menu works from the keyboard.

Refresh docs/screenshots/owner-tabs-*.png with:
SPRAVKA_SCREENSHOTS=1 .venv/bin/pytest tests/e2e/test_owner_layout_live.py"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.conftest import owner_page

pytestmark = pytest.mark.django_db(transaction=True)

PASSWORD = "e2e-layout-pass-1"


@pytest.fixture
def owned(live_app: str, django_user_model) -> tuple[str, str]:
    """A bot and its owner (committed: the app's process reads them); yields (slug, username).
    Every test's rows are flushed after it (transaction=True)."""
    from bots.models import Bot, Membership

    bot = Bot.objects.create(name="Магазин вёрстки", slug="e2e-layout", allowed_origins=[live_app])
    user = django_user_model.objects.create_user(username="layout@shop.example", password=PASSWORD)
    Membership.objects.create(bot=bot, user=user, role=Membership.Role.OWNER)
    return bot.slug, user.username


def sign_in(page: Page, live_app: str, username: str, next_path: str) -> None:
    page.goto(f"{live_app}/accounts/login/?next={next_path}")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.press("#id_password", "Enter")
    expect(page).to_have_url(f"{live_app}{next_path}")
    # The URL changes before the page's stylesheet has loaded; a layout measured then is unstyled.
    page.wait_for_load_state("load")


@pytest.fixture
def owner_tab(browser: Browser, live_app: str) -> Iterator[Page]:
    with owner_page(browser, live_app) as tab:
        yield tab


def test_the_setup_snippet_is_copied_exactly(owner_tab: Page, live_app: str, owned: tuple[str, str]):
    slug, username = owned
    sign_in(owner_tab, live_app, username, f"/b/{slug}/setup/")
    owner_tab.locator("#copy-snippet").click()
    expect(owner_tab.locator("#copy-status")).to_have_text("Скопировано.")
    copied = owner_tab.evaluate("navigator.clipboard.readText()")
    assert copied == owner_tab.locator("#snippet-code").text_content()
    assert "/static/assistant/widget.js" in copied


def test_without_the_clipboard_api_the_snippet_is_selected(owner_tab: Page, live_app: str, owned: tuple[str, str]):
    slug, username = owned
    # As on a plain-http address: no navigator.clipboard before the page's scripts run.
    owner_tab.add_init_script("Object.defineProperty(navigator, 'clipboard', {value: undefined})")
    sign_in(owner_tab, live_app, username, f"/b/{slug}/setup/")
    owner_tab.locator("#copy-snippet").click()
    expect(owner_tab.locator("#copy-status")).to_have_text("Код выделен — нажмите Ctrl+C.")
    selected = owner_tab.evaluate("window.getSelection().toString()")
    assert selected == owner_tab.locator("#snippet-code").text_content()



TAB_TOPS = ("[...document.querySelectorAll('.tabs > a, .tabs > details > summary')]"
            ".map(e => Math.round(e.getBoundingClientRect().top))")
MORE = {"ru-RU": ("Ещё", "Расходы", "Администрирование"), "en-US": ("More", "Usage", "Administration")}


@pytest.mark.parametrize("locale", ["ru-RU", "en-US"])
def test_the_owner_tabs_keep_one_line_at_1280_and_more_opens_from_the_keyboard(
    browser: Browser, live_app: str, owned: tuple[str, str], django_user_model, shots, locale: str,
):
    """The widest header there is: a superuser (the admin link) owning two bots (the switcher, one
    with a long name), in Russian and in English."""
    from bots.models import Bot, Membership

    slug, username = owned
    django_user_model.objects.filter(username=username).update(is_superuser=True, is_staff=True)
    second = Bot.objects.create(name="Второй магазин с очень длинным названием для проверки", slug="e2e-layout-2")
    Membership.objects.create(bot=second, user=django_user_model.objects.get(username=username),
                              role=Membership.Role.OWNER)
    more, usage, admin = MORE[locale]
    with owner_page(browser, live_app, locale=locale) as tab:
        tab.set_viewport_size({"width": 1280, "height": 720})
        sign_in(tab, live_app, username, f"/b/{slug}/")
        tops = tab.evaluate(TAB_TOPS)
        assert len(tops) == 8 and len(set(tops)) == 1, tops  # seven tabs and «Ещё», on one line
        header = tab.locator("header.top").bounding_box()
        assert header is not None and header["height"] < 60  # the whole header is one row
        menu = tab.locator("details.more")
        assert not menu.locator(".more-menu").is_visible()

        # Keyboard only: Tab to «Ещё», Enter opens it, Tab reaches its links, Escape closes it.
        tab.locator("details.more summary").focus()
        tab.keyboard.press("Enter")
        expect(menu.get_by_role("link", name=usage)).to_be_visible()
        expect(menu.get_by_role("link", name=admin)).to_be_visible()
        tab.keyboard.press("Tab")
        assert tab.evaluate("document.activeElement.textContent.trim()") == usage
        if locale == "ru-RU":
            tab.screenshot(path=str(shots / "owner-tabs-1280.png"), clip={"x": 0, "y": 0, "width": 1280, "height": 260})
        tab.keyboard.press("Escape")
        expect(menu.locator(".more-menu")).to_be_hidden()
        assert tab.evaluate("document.activeElement.tagName") == "SUMMARY"
        assert tab.evaluate("document.activeElement.textContent.trim()") == more

        # Enter on a link in the menu opens its page, whose tab is then marked inside «Ещё».
        tab.keyboard.press("Enter")
        tab.keyboard.press("Tab")
        tab.keyboard.press("Enter")
        expect(tab).to_have_url(f"{live_app}/b/{slug}/usage/")
        expect(tab.locator("details.more.has-current summary")).to_have_text(more)
        # A click elsewhere closes an open menu.
        tab.locator("details.more summary").click()
        expect(menu.locator(".more-menu")).to_be_visible()
        tab.locator("main h1").click()
        expect(menu.locator(".more-menu")).to_be_hidden()

        # At 1024 the tabs take a row of their own, still one line.
        tab.set_viewport_size({"width": 1024, "height": 720})
        tops = tab.evaluate(TAB_TOPS)
        assert len(set(tops)) == 1, tops
        brand = tab.locator(".brand").bounding_box()
        assert brand is not None and tops[0] > brand["y"] + brand["height"]
        if locale == "ru-RU":
            tab.screenshot(path=str(shots / "owner-tabs-1024.png"), clip={"x": 0, "y": 0, "width": 1024, "height": 200})


def test_a_document_is_deleted_only_once_the_owner_confirms(owner_tab: Page, live_app: str, owned: tuple[str, str]):
    from bots.models import Bot
    from knowledge.importing import document_import
    from knowledge.models import Entry, Source

    slug, username = owned
    source = document_import(bot=Bot.objects.get(slug=slug), filename="Возврат.md",
                             data="# Возврат\n\nВернуть товар можно в течение 14 дней.\n".encode()).source
    sign_in(owner_tab, live_app, username, f"/b/{slug}/knowledge/")
    dialogs: list[str] = []

    def answer(dialog, accept: bool) -> None:
        dialogs.append(dialog.message)
        dialog.accept() if accept else dialog.dismiss()

    owner_tab.once("dialog", lambda dialog: answer(dialog, False))
    owner_tab.get_by_role("button", name="Удалить «Возврат.md»").click()
    expect(owner_tab.locator(f"#document-{source.pk}")).to_be_visible()
    assert Source.objects.filter(pk=source.pk).exists()  # dismissed: nothing deleted

    owner_tab.once("dialog", lambda dialog: answer(dialog, True))
    owner_tab.get_by_role("button", name="Удалить «Возврат.md»").click()
    expect(owner_tab.locator(".messages")).to_contain_text("Документ «Возврат.md» удалён")
    assert dialogs == ["Удалить документ «Возврат.md»? Бот перестанет отвечать по нему."] * 2
    assert not Source.objects.filter(pk=source.pk).exists()
    assert not Entry.objects.filter(title="Возврат.md", active=True).exists()
