"""Onboarding: a site's address is checked (robots.txt, sitemap, the page) through the crawler's
safe client and the result shown; then the bot is created with its crawl queued. Bad addresses
get a clear message, keep what was typed and create nothing. The setup page: crawl progress as
JSON, the snippet, the widget's sites edited as a list."""

from __future__ import annotations

import socket

import pytest

from bots.models import Bot, Membership
from knowledge.models import CrawlRun, Source

pytestmark = pytest.mark.django_db


@pytest.fixture
def newcomer_client(client, django_user_model):
    client.force_login(django_user_model.objects.create_user("new@shop.example", password="pw-new-12345"))
    return client


def test_checking_a_site_shows_its_robots_and_sitemap(newcomer_client, demo_site):
    page = newcomer_client.post("/start/", {"url": f"{demo_site}/", "action": "check"})
    html = page.content.decode()
    assert page.status_code == 200
    assert "robots.txt найден и разрешает обход." in html
    assert "Страниц в карте сайта: 36." in html
    assert 'id="create-bot"' in html and not Bot.objects.exists()


def test_creating_the_bot_queues_its_crawl_and_opens_setup(
    newcomer_client, demo_site, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as callbacks:
        response = newcomer_client.post("/start/", {"url": demo_site, "name": "Мой магазин", "action": "create"})
    bot = Bot.objects.get()
    assert response["Location"] == f"/b/{bot.slug}/setup/" and bot.slug == "127-0-0-1"
    assert bot.name == "Мой магазин" and bot.site_url == f"{demo_site}/" and bot.allowed_origins == [demo_site]
    assert Membership.objects.get(bot=bot).role == "owner"
    source = Source.objects.get(bot=bot)
    run = CrawlRun.objects.get(source=source)
    assert source.kind == "site" and run.status == "queued" and len(callbacks) == 1
    html = newcomer_client.get(response["Location"]).content.decode()
    assert f'data-url="/b/{bot.slug}/runs/{run.pk}/progress/"' in html
    assert f'data-bot="{bot.public_key}"' in html and "Скопировать" in html
    assert newcomer_client.get("/")["Location"] == f"/b/{bot.slug}/"


def test_a_second_bot_for_the_same_host_gets_its_own_code(newcomer_client, demo_site):
    newcomer_client.post("/start/", {"url": demo_site, "action": "create"})
    newcomer_client.post("/start/", {"url": demo_site, "action": "create"})
    assert sorted(Bot.objects.values_list("slug", flat=True)) == ["127-0-0-1", "127-0-0-1-2"]


@pytest.mark.parametrize(("typed", "message"), [
    ("", "Укажите адрес сайта"),
    ("это не адрес", "не адрес сайта"),
    ("ftp://shop.example/", "не адрес сайта"),
])
def test_an_address_that_is_not_a_web_address_is_refused(newcomer_client, typed, message):
    page = newcomer_client.post("/start/", {"url": typed, "name": "Мой магазин", "action": "create"})
    html = page.content.decode()
    assert page.status_code == 400 and message in html and 'value="Мой магазин"' in html
    assert not Bot.objects.exists()


def test_an_unreachable_site_is_named_and_nothing_is_created(newcomer_client):
    page = newcomer_client.post("/start/", {"url": "http://127.0.0.1:9/", "action": "create"})
    html = page.content.decode()
    assert page.status_code == 400 and "Сайт недоступен" in html and 'value="http://127.0.0.1:9/"' in html
    assert not Bot.objects.exists()


def test_a_private_address_is_refused(newcomer_client, demo_site, settings):
    settings.CRAWL_ALLOW_PRIVATE = False
    page = newcomer_client.post("/start/", {"url": demo_site, "action": "create"})
    assert page.status_code == 400 and "внутреннюю сеть" in page.content.decode()
    assert not Bot.objects.exists()


def test_an_address_that_is_not_a_site_but_a_file_is_refused(newcomer_client, demo_site):
    page = newcomer_client.post("/start/", {"url": f"{demo_site}/robots.txt", "action": "create"})
    html = page.content.decode()
    assert page.status_code == 400 and "не веб-страница" in html and "text/plain" in html
    assert not Bot.objects.exists()


def test_a_missing_page_is_refused(newcomer_client, demo_site):
    page = newcomer_client.post("/start/", {"url": f"{demo_site}/no-such-page/", "action": "check"})
    assert page.status_code == 400 and "HTTP 404" in page.content.decode()


# ----- the setup page of an existing bot -----------------------------------------------------


def test_adding_a_site_to_an_existing_bot_crawls_it(owner_client, bot, demo_site):
    response = owner_client.post("/b/demo/setup/site/", {"url": demo_site})
    assert response["Location"] == "/b/demo/setup/"
    run = CrawlRun.objects.get(bot=bot)
    assert run.source.url == f"{demo_site}/"
    again = owner_client.post("/b/demo/setup/site/", {"url": demo_site})  # still queued: refused, named
    assert again.status_code == 400 and "уже идёт" in again.content.decode()
    assert CrawlRun.objects.filter(bot=bot).count() == 1


def test_the_progress_json_of_a_run(owner_client, bot):
    source = Source.objects.create(bot=bot, kind="site", url="https://shop.example/")
    run = CrawlRun.objects.create(bot=bot, source=source, status="running", pages_total=10, pages_done=4, fetched=4,
                                  pages_embedded=1)
    data = owner_client.get(f"/b/demo/runs/{run.pk}/progress/").json()
    assert data["status"] == "running" and data["pages_done"] == 4 and data["pages_indexed"] == 4
    assert data["pages_embedded"] == 1 and data["percent"] == 20 and data["status_display"] == "идёт"


def test_another_tenants_run_is_404(owner_client, bot, other_bot):
    source = Source.objects.create(bot=other_bot, kind="site", url="https://other.example/")
    run = CrawlRun.objects.create(bot=other_bot, source=source)
    assert owner_client.get(f"/b/demo/runs/{run.pk}/progress/").status_code == 404
    assert owner_client.get(f"/b/other/runs/{run.pk}/progress/").status_code == 404
    assert owner_client.post("/b/other/setup/site/", {"url": "https://x.example/"}).status_code == 404
    assert owner_client.post("/b/other/setup/origins/", {"origins": "https://x.example"}).status_code == 404
    other_bot.refresh_from_db()
    assert other_bot.allowed_origins == []


def test_the_widgets_sites_are_saved_normalised(owner_client, bot):
    response = owner_client.post("/b/demo/setup/origins/", {"origins": "https://Shop.Example/\n\nhttp://shop.example:8080\n"})
    assert response.status_code == 302
    bot.refresh_from_db()
    assert bot.allowed_origins == ["https://shop.example", "http://shop.example:8080"]


def test_a_bad_line_is_named_and_the_saved_list_kept(owner_client, bot):
    bot.allowed_origins = ["https://shop.example"]
    bot.save(update_fields=["allowed_origins"])
    page = owner_client.post("/b/demo/setup/origins/", {"origins": "https://new.example\nне сайт"})
    html = page.content.decode()
    assert page.status_code == 400 and "«не сайт» не подходит" in html
    assert "https://new.example\nне сайт" in html  # what was typed stays in the box
    bot.refresh_from_db()
    assert bot.allowed_origins == ["https://shop.example"]


def test_the_setup_page_warns_when_the_site_is_not_among_the_widgets_sites(owner_client, bot):
    bot.site_url, bot.allowed_origins = "https://shop.example/", []
    bot.save(update_fields=["site_url", "allowed_origins"])
    assert "Сайта https://shop.example нет в списке" in owner_client.get("/b/demo/setup/").content.decode()


def test_site_checks_are_limited_per_person_and_the_refusal_says_when_to_retry(
    newcomer_client, demo_site, settings, django_user_model
):
    from django.test import Client

    settings.SITECHECK_RATE_USER, settings.SITECHECK_RATE_WINDOW = 2, 600
    for _ in range(2):
        assert newcomer_client.post("/start/", {"url": demo_site, "action": "check"}).status_code == 200
    refused = newcomer_client.post("/start/", {"url": demo_site, "name": "Мой магазин", "action": "create"})
    html = refused.content.decode()
    assert refused.status_code == 429
    assert "Слишком много проверок сайта подряд. Следующая — через" in html and "мин." in html
    assert f'value="{demo_site}"' in html  # what was typed stays
    assert "robots.txt найден" not in html and not Bot.objects.exists()  # nothing fetched, nothing created

    other = Client()
    other.force_login(django_user_model.objects.create_user("second@shop.example", password="pw-second-123"))
    assert other.post("/start/", {"url": demo_site, "action": "check"}).status_code == 200  # per person


def test_the_setup_pages_site_check_counts_against_the_same_limit_in_english(owner_client, bot, demo_site, settings):
    settings.SITECHECK_RATE_USER = 1
    owner_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    assert owner_client.post("/start/", {"url": demo_site, "action": "check"}).status_code == 200
    refused = owner_client.post("/b/demo/setup/site/", {"url": demo_site})
    assert refused.status_code == 429
    assert "Too many site checks in a row. The next one in" in refused.content.decode()
    assert not CrawlRun.objects.filter(bot=bot).exists()


@pytest.fixture
def redis_away(settings):
    """The rate limits' Redis at an address nothing listens on (a real connection refused), and the
    real one back afterwards."""
    from core import ratelimit

    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens on it
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client, url = ratelimit._sync_client, settings.REDIS_URL
    ratelimit._sync_client, settings.REDIS_URL = None, f"redis://127.0.0.1:{port}/0"
    yield
    ratelimit._sync_client, settings.REDIS_URL = client, url  # before the other fixtures' cleanup needs it


def test_with_redis_away_a_site_check_goes_ahead_and_says_so_in_the_log(newcomer_client, demo_site, settings,
                                                                         redis_away, caplog):
    settings.SITECHECK_RATE_USER = 1
    with caplog.at_level("WARNING", logger="spravka.chat"):
        for _ in range(2):  # past the limit, uncounted: the owner is not stopped by our outage
            checked = newcomer_client.post("/start/", {"url": demo_site, "action": "check"})
            assert checked.status_code == 200 and "robots.txt найден" in checked.content.decode()
    assert any("Redis unreachable" in r.getMessage() and "site checks" in r.getMessage() for r in caplog.records)
