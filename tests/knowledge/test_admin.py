"""The admin as an owner uses it: only their own bot's knowledge, versions they can roll back."""

import pytest
from django.urls import reverse

from knowledge.models import Entry, Page, Source

pytestmark = pytest.mark.django_db


@pytest.fixture
def entries(bot, other_bot):
    mine = Entry.objects.create(bot=bot, kind="qa", title="Сколько дней на возврат?", text="14 дней.")
    theirs = Entry.objects.create(bot=other_bot, kind="qa", title="Секрет соседа", text="Чужой ответ.")
    return mine, theirs


def test_an_owner_lists_only_their_own_entries(client, owner, entries):
    client.force_login(owner)
    page = client.get(reverse("admin:knowledge_entry_changelist"))
    assert page.status_code == 200
    assert "Сколько дней на возврат?" in page.content.decode()
    assert "Секрет соседа" not in page.content.decode()


@pytest.mark.parametrize("view", ["change", "history", "delete"])
def test_an_owner_cannot_open_another_bots_entry(client, owner, entries, view):
    _mine, theirs = entries
    client.force_login(owner)
    response = client.get(reverse(f"admin:knowledge_entry_{view}", args=[theirs.pk]))
    assert response.status_code in (302, 403, 404)
    assert "Чужой ответ" not in response.content.decode()


def test_an_owner_cannot_open_another_bots_old_version(client, owner, entries):
    _mine, theirs = entries
    version = theirs.history.latest()
    client.force_login(owner)
    url = reverse("admin:knowledge_entry_simple_history", args=[theirs.pk, version.history_id])
    response = client.get(url)
    assert response.status_code in (302, 403, 404)


def test_an_owner_rolls_an_entry_back_to_an_earlier_version(client, owner, entries):
    mine, _theirs = entries
    first = mine.history.latest()
    mine.text = "30 дней без вопросов."
    mine.save()
    client.force_login(owner)
    url = reverse("admin:knowledge_entry_simple_history", args=[mine.pk, first.history_id])
    form = client.get(url)
    assert form.status_code == 200
    data = {
        "bot": mine.bot_id, "kind": "qa", "title": mine.title, "heading_path": "", "text": "14 дней.",
        "url": "", "weight": "0.5", "active": "on", "source": "",
    }
    response = client.post(url, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    mine.refresh_from_db()
    assert mine.text == "14 дней."
    assert mine.history.count() == 3


def test_an_owner_cannot_move_an_entry_to_another_bot(client, owner, entries, other_bot):
    mine, _theirs = entries
    client.force_login(owner)
    data = {"bot": other_bot.pk, "kind": "qa", "title": "x", "heading_path": "", "text": "y", "url": "",
            "weight": "0.5", "active": "on", "source": ""}
    response = client.post(reverse("admin:knowledge_entry_change", args=[mine.pk]), data)
    assert response.status_code == 200  # the form comes back with an error
    mine.refresh_from_db()
    assert mine.bot_id != other_bot.pk


def test_a_skipped_page_shows_its_reason(client, owner, bot):
    source = Source.objects.create(bot=bot, kind="site", url="http://shop.example/")
    Page.objects.create(bot=bot, source=source, url="http://shop.example/big.pdf", status="skipped",
                        reason="не HTML (application/pdf)")
    client.force_login(owner)
    page = client.get(reverse("admin:knowledge_page_changelist"))
    assert "не HTML (application/pdf)" in page.content.decode()


def test_a_crawl_run_shows_a_progress_bar(client, owner, bot):
    from knowledge.models import CrawlRun

    source = Source.objects.create(bot=bot, kind="site", url="http://shop.example/")
    CrawlRun.objects.create(bot=bot, source=source, status="running", pages_total=10, pages_done=5)
    client.force_login(owner)
    page = client.get(reverse("admin:knowledge_crawlrun_changelist")).content.decode()
    assert '<progress max="100" value="25"' in page  # fetching is half of the bar, vectors the other half
    assert "5/10" in page


def test_a_crawl_run_shows_fetched_indexed_and_embedded_pages_and_polls_them(client, owner, bot):
    from knowledge.models import CrawlRun

    source = Source.objects.create(bot=bot, kind="site", url="http://shop.example/")
    run = CrawlRun.objects.create(bot=bot, source=source, status="running", pages_total=134, pages_done=60,
                                  fetched=57, unchanged=1, pages_embedded=31, embeddings_done=250,
                                  embeddings_total=500)
    client.force_login(owner)
    page = client.get(reverse("admin:knowledge_crawlrun_changelist")).content.decode()
    assert "Скачано" in page and "В поиске по словам" in page and "С векторами" in page
    assert '<meter min="0" max="134" value="58">' in page and '<meter min="0" max="134" value="31">' in page
    data = client.get(reverse("admin:knowledge_crawlrun_progress", args=[run.pk])).json()
    assert (data["pages_done"], data["pages_indexed"], data["pages_embedded"], data["pages_total"]) == (60, 58, 31, 134)
