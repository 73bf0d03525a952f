"""Sources and their crawl, documents, search and ask (the same JSON as the commands), and the
read-only resources: conversations with their messages, leads, gaps, review items."""

import json
import time
from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from knowledge.models import CrawlRun, Entry, Source
from tests.api.conftest import client_for
from tests.api.rows import rows_for
from tests.chat.conftest import DELIVERY_QUESTION, UNKNOWN_QUESTION

pytestmark = pytest.mark.django_db


def test_search_returns_what_the_search_command_prints(api, knowledge):
    out = StringIO()
    call_command("search", "demo", DELIVERY_QUESTION, "--json", "-k", "3", stdout=out)
    response = api.get("/api/v1/search/", {"q": DELIVERY_QUESTION, "k": 3})
    assert response.status_code == 200
    assert response.json() == json.loads(out.getvalue())
    assert response.json()["results"][0]["entry_id"] == knowledge["delivery"].pk


@pytest.mark.parametrize("params", [{}, {"q": ""}, {"q": "x" * 4001}, {"q": "доставка", "k": 0},
                                    {"q": "доставка", "k": "много"}, {"q": "до\x00ставка"}])
def test_search_refuses_bad_parameters_by_name(api, params):
    response = api.get("/api/v1/search/", params)
    assert response.status_code == 400 and response["Content-Type"] == "application/problem+json"
    assert response.json()["errors"][0]["parameter"] in {"q", "k"}


def test_ask_returns_what_the_ask_command_prints(api, knowledge):
    out = StringIO()
    call_command("ask", "demo", DELIVERY_QUESTION, "--json", stdout=out)
    expected = json.loads(out.getvalue())
    response = api.post("/api/v1/ask/", {"question": DELIVERY_QUESTION}, format="json")
    assert response.status_code == 200
    data = response.json()
    assert list(data) == list(expected)
    assert {k: v for k, v in data.items() if k != "timings"} == {k: v for k, v in expected.items() if k != "timings"}
    assert set(data["timings"]) == set(expected["timings"]) >= {"rules", "search", "llm", "total"}


def test_an_unrecorded_question_gets_the_same_answer_and_leaves_no_trace(api, bot, knowledge):
    recorded = api.post("/api/v1/ask/", {"question": DELIVERY_QUESTION}, format="json").json()
    conversations = bot.conversations.count()
    probe = api.post("/api/v1/ask/", {"question": DELIVERY_QUESTION, "record": False}, format="json").json()
    assert list(probe) == list(recorded)
    assert {k: v for k, v in probe.items() if k != "timings"} == {k: v for k, v in recorded.items() if k != "timings"}
    unknown = api.post("/api/v1/ask/", {"question": UNKNOWN_QUESTION, "record": False}, format="json").json()
    assert unknown["flags"]["unanswered"] is True and unknown["buttons"][0]["id"] == "operator"
    assert bot.conversations.count() == conversations


def test_an_unanswerable_question_is_an_honest_no_with_the_operator_button(api, knowledge):
    data = api.post("/api/v1/ask/", {"question": UNKNOWN_QUESTION}, format="json").json()
    assert data["source"] is None and data["flags"]["unanswered"] is True
    assert data["buttons"] == [{"id": "operator", "label": "Позвать оператора"}]


@pytest.mark.parametrize("body", [{}, {"question": ""}, {"question": 5}, {"question": "x" * 4001},
                                  {"question": "Доставка?", "visitor": "v1"},
                                  {"question": "Доставка?", "record": "no"}])
def test_ask_refuses_bad_bodies_and_starts_no_conversation(api, bot, body):
    response = api.post("/api/v1/ask/", body, format="json")
    assert response.status_code == 400 and response.json()["errors"]
    assert not bot.conversations.exists()


def test_a_conversation_comes_with_its_messages_in_order(api, bot):
    rows = rows_for(bot)
    data = api.get(f"/api/v1/conversations/{rows['conversations']}/").json()
    assert [m["role"] for m in data["messages"]] == ["visitor", "bot"]
    assert data["messages"][0]["text"] == "Здравствуйте" and data["state"] == "closed"
    assert "messages" not in api.get("/api/v1/conversations/").json()["results"][0]


def test_read_only_resources_refuse_writes(api, bot):
    rows = rows_for(bot)
    for resource in ("conversations", "leads", "gaps", "review-items"):
        assert api.post(f"/api/v1/{resource}/", {}, format="json").status_code == 405
        response = api.delete(f"/api/v1/{resource}/{rows[resource]}/")
        assert response.status_code == 405 and response["Content-Type"] == "application/problem+json"


def test_filters_filter_and_a_bad_value_names_its_parameter(api, bot):
    rows = rows_for(bot)
    assert [g["id"] for g in api.get("/api/v1/gaps/", {"status": "open"}).json()["results"]] == [rows["gaps"]]
    assert api.get("/api/v1/gaps/", {"status": "answered"}).json()["results"] == []
    items = api.get("/api/v1/review-items/", {"reason": "low_confidence"}).json()["results"]
    assert [i["id"] for i in items] == [rows["review-items"]]
    assert api.get("/api/v1/review-items/", {"reason": "friction"}).json()["results"] == []
    assert len(api.get("/api/v1/conversations/", {"state": "closed"}).json()["results"]) == 1
    for path, params in [("/api/v1/gaps/", {"status": "closed"}), ("/api/v1/entries/", {"active": "maybe"}),
                         ("/api/v1/leads/", {"created_after": "вчера"}), ("/api/v1/entries/", {"cursor": "zzz"}),
                         ("/api/v1/conversations/", {"visitor_id": "a\x00b"})]:
        response = api.get(path, params)
        assert response.status_code == 400, (path, params, response.content)
        assert response.json()["errors"][0]["parameter"] == next(iter(params))


def test_a_source_is_added_once_and_bad_ones_are_refused(api, bot):
    created = api.post("/api/v1/sources/", {"kind": "site", "url": "https://shop.example/"}, format="json")
    assert created.status_code == 201 and created.json()["last_run"] is None
    again = api.post("/api/v1/sources/", {"kind": "site", "url": "https://shop.example/"}, format="json")
    assert again.status_code == 400 and f"№{created.json()['id']}" in again.json()["detail"]
    for body in [{"kind": "site", "url": "javascript:alert(1)"}, {"kind": "site", "url": "ftp://shop.example/"},
                 {"kind": "document", "url": "https://shop.example/a.pdf"}, {"kind": "site"},
                 {"kind": "site", "url": "https://b.example/", "max_pages": 10**6},
                 {"kind": "site", "url": "https://b.example/", "recrawl_hours": 0}]:
        response = api.post("/api/v1/sources/", body, format="json")
        assert response.status_code == 400, (body, response.content)
    assert Source.objects.filter(bot=bot).count() == 1


@pytest.mark.django_db(transaction=True)
def test_crawl_starts_on_the_worker_after_commit_and_its_progress_is_on_the_source(
    celery_worker_thread, bot, crawl_site, settings
):
    from bots.apikeys import api_key_create

    settings.CRAWL_ALLOW_PRIVATE, settings.CRAWL_DELAY = True, 0.0
    api = client_for(api_key_create(bot=bot, name="CRM")[1])
    source = api.post("/api/v1/sources/", {"kind": "site", "url": crawl_site}, format="json").json()
    started = api.post(f"/api/v1/sources/{source['id']}/crawl/")
    assert started.status_code == 202 and started.json()["status"] == "queued"
    again = api.post(f"/api/v1/sources/{source['id']}/crawl/")
    assert again.status_code == 400 and "уже идёт" in again.json()["detail"]
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        run = api.get(f"/api/v1/sources/{source['id']}/").json()["last_run"]
        if run["status"] in ("done", "failed"):
            break
        time.sleep(0.3)
    assert run["status"] == "done" and run["percent"] == 100, run
    assert CrawlRun.objects.get(pk=started.json()["id"]).entries_created > 0
    assert api.get("/api/v1/search/", {"q": "доставка"}).json()["results"]


@pytest.fixture
def crawl_site(shop_site):
    from tests.knowledge.test_crawler import fill_shop

    fill_shop(shop_site)
    return shop_site.url("/")


@pytest.fixture
def shop_site():
    from tests.knowledge.sites import Site

    site = Site().start()
    yield site
    site.stop()


def _upload(api, name, data, **fields):
    return api.post("/api/v1/documents/", {"file": SimpleUploadedFile(name, data), **fields}, format="multipart")


def test_a_document_upload_becomes_entries_like_importdocs(api, bot):
    text = "# Доставка\n\nКурьер привезёт заказ за 1 день.\n\n# Возврат\n\nВернуть товар можно за 14 дней.\n"
    response = _upload(api, "Условия.md", text.encode(), url="https://shop.example/terms")
    assert response.status_code == 201, response.content
    data = response.json()
    assert data["created"] == 2 and data["source"]["kind"] == "document" and data["source"]["title"] == "Условия.md"
    assert Entry.objects.filter(bot=bot, source_id=data["source"]["id"]).count() == 2
    again = _upload(api, "Условия.md", text.encode(), url="https://shop.example/terms").json()
    assert (again["created"], again["unchanged"]) == (0, 2)


@pytest.mark.parametrize(("name", "data", "words"), [
    ("scan.pdf", b"%PDF-1.4 not really", "повреждён"),
    ("empty.txt", b"   \n", "нет текста"),
    ("photo.jpg", b"\xff\xd8\xff\xe0", "не поддерживается"),
    ("table.docx", b"PK\x03\x04broken", "повреждён"),
])
def test_a_bad_document_is_refused_with_the_importers_words_and_nothing_saved(api, bot, name, data, words):
    response = _upload(api, name, data)
    assert response.status_code == 400 and words in response.json()["detail"], response.json()
    assert not Entry.objects.filter(bot=bot).exists() and not Source.objects.filter(bot=bot).exists()


def test_an_oversized_document_is_a_413_and_a_missing_file_a_400(api, bot, settings):
    settings.UPLOAD_MAX_BYTES = 1000
    response = _upload(api, "big.txt", "доставка ".encode() * 200)
    assert response.status_code == 413 and "слишком большой" in response.json()["detail"]
    response = api.post("/api/v1/documents/", {"url": ""}, format="multipart")
    assert response.status_code == 400 and response.json()["errors"][0]["pointer"] == "#/file"
    response = api.post("/api/v1/documents/", {"file": "x"}, format="json")
    assert response.status_code == 415 and response["Content-Type"] == "application/problem+json"
    assert not Entry.objects.filter(bot=bot).exists()
