"""A crawl's and an import's words (the run's summary, why a page was skipped or failed, why a crawl
stopped) are stored untranslated and read in the reader's language: the admin, the owner's setup
page and the API show them in English to an English reader and in Russian to a Russian one, and
rows written before stored texts still show what they said.

Cross-cutting: knowledge/runs.py and knowledge/importing.py's stored words as the admin, the owner's setup
page and the API show them."""

from __future__ import annotations

import pytest
from django.utils import translation

from knowledge.importing import document_import, qa_import_csv
from knowledge.models import CrawlRun, Page, Source
from tests.api.conftest import client_for
from tests.knowledge.sites import Resource, fill_shop

pytestmark = pytest.mark.django_db


def english(client):
    client.cookies["django_language"] = "en"
    return client


def test_a_crawl_s_page_reasons_and_summary_read_in_english_and_in_russian(run_crawl, shop_site, site_source,
                                                                            settings):
    settings.CRAWL_MAX_PAGE_BYTES = 4096
    fill_shop(shop_site)
    shop_site.html("/", "Магазин", "<h1>Магазин</h1><p>Всё для дома.</p>",
                   links=["/delivery/", "/private/", "/big/", "/gone/"])
    shop_site.html("/big/", "Большая", "<p>" + "очень длинный текст " * 400 + "</p>")
    shop_site.routes["/gone/"] = Resource(b"", status=404)

    run = run_crawl()

    private = Page.objects.get(source=site_source, url=shop_site.url("/private/"))
    big = Page.objects.get(source=site_source, url=shop_site.url("/big/"))
    gone = Page.objects.get(source=site_source, url=shop_site.url("/gone/"))
    assert private.reason == "запрещено robots.txt"  # the Russian column keeps its words for search
    with translation.override("en"):
        assert (private.reason_shown, big.reason_shown, gone.reason_shown) == (
            "forbidden by robots.txt", "the page is larger than 4 KB", "HTTP 404")
        lines = run.message_shown.splitlines()  # reasons of one count come in the order they were met
        skipped = ["  forbidden by robots.txt: 1", "  the page is larger than 4 KB: 1"]
        assert (lines[0], sorted(lines[1:3]), lines[3:]) == ("Skipped:", skipped, ["Failed:", "  HTTP 404: 1"])
    with translation.override("ru"):
        assert (private.reason_shown, big.reason_shown) == ("запрещено robots.txt", "страница больше 4 КБ")
        assert "  запрещено robots.txt — 1" in run.message_shown.splitlines()


def test_the_admin_and_the_setup_progress_show_the_reader_s_language(run_crawl, shop_site, site_source, client,
                                                                     owner):
    fill_shop(shop_site)
    run = run_crawl()
    client.force_login(owner)

    pages = english(client).get("/admin/knowledge/page/").content.decode()
    assert "forbidden by robots.txt" in pages and "запрещено robots.txt" not in pages
    detail = client.get(f"/admin/knowledge/crawlrun/{run.pk}/change/").content.decode()
    assert "Skipped:" in detail and "Пропущено" not in detail
    progress = client.get(f"/admin/knowledge/crawlrun/{run.pk}/progress/").json()
    assert progress["message"] == "Skipped:\n  forbidden by robots.txt: 1"

    client.cookies["django_language"] = "ru"
    assert "запрещено robots.txt" in client.get("/admin/knowledge/page/").content.decode()


def test_a_crawl_that_cannot_start_says_why_in_the_api_reader_s_language(run_crawl, shop_site, site_source, bot):
    shop_site.routes["/robots.txt"] = Resource(b"", status=503, content_type="text/plain")
    run = run_crawl()
    assert run.status == CrawlRun.Status.FAILED

    from bots.apikeys import api_key_create

    _key, secret = api_key_create(bot=bot, name="тест")
    api = client_for(secret)
    listed = api.get("/api/v1/sources/", HTTP_ACCEPT_LANGUAGE="en").json()["results"]
    (source,) = [row for row in listed if row["id"] == site_source.pk]
    assert source["last_run"]["message"] == "robots.txt answers HTTP 503: the site asks not to be crawled for now"
    listed = api.get("/api/v1/sources/", HTTP_ACCEPT_LANGUAGE="ru").json()["results"]
    (source,) = [row for row in listed if row["id"] == site_source.pk]
    assert source["last_run"]["message"] == "robots.txt отвечает HTTP 503 — сайт просит пока его не обходить"


def test_an_import_s_run_names_the_file_in_the_reader_s_language(bot):
    pairs = qa_import_csv(bot=bot, data="вопрос;ответ\nСколько стоит доставка?;300 рублей\n".encode(),
                          filename="faq.csv")
    document = document_import(bot=bot, filename="Условия.txt", data="Доставка по Москве — 300 рублей.".encode())

    qa_run = CrawlRun.objects.get(source=pairs.source)
    document_run = CrawlRun.objects.get(source=document.source)
    with translation.override("en"):
        assert qa_run.message_shown == "Questions and answers from “faq.csv”"
        assert document_run.message_shown == "Document “Условия.txt”"
    with translation.override("ru"):
        assert qa_run.message_shown == "Вопросы и ответы из «faq.csv»"
        assert document_run.message_shown == "Документ «Условия.txt»"


def test_a_run_and_a_page_written_before_stored_texts_show_what_they_said(bot, client, owner):
    source = Source.objects.create(bot=bot, kind=Source.Kind.SITE, url="https://shop.example/")
    run = CrawlRun.objects.create(bot=bot, source=source, status=CrawlRun.Status.DONE,
                                  message="Пропущено:\n  запрещено robots.txt — 2")
    Page.objects.create(bot=bot, source=source, url="https://shop.example/old/", status=Page.Status.SKIPPED,
                        reason="старая причина", active=False)

    with translation.override("en"):
        assert run.message_shown == "Пропущено:\n  запрещено robots.txt — 2"
    client.force_login(owner)
    assert "старая причина" in english(client).get("/admin/knowledge/page/").content.decode()
