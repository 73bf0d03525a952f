"""A key sees only its bot: another bot's ids answer exactly like ids that do not exist, for every
resource and every method."""

import pytest

from tests.api.rows import rows_for

pytestmark = pytest.mark.django_db

RESOURCES = ["entries", "sources", "conversations", "leads", "gaps", "review-items"]
MISSING = 10**15


def _same_404(api, theirs: str, missing: str, method: str = "get", **kwargs):
    a = getattr(api, method)(theirs, **kwargs)
    b = getattr(api, method)(missing, **kwargs)
    assert a.status_code == b.status_code == 404, (a.content, b.content)
    assert a["Content-Type"] == b["Content-Type"] == "application/problem+json"
    body_a, body_b = a.json(), b.json()
    assert body_a.pop("instance") != body_b.pop("instance")
    assert body_a == body_b


@pytest.fixture
def theirs(other_bot):
    return rows_for(other_bot)


@pytest.fixture
def mine(bot):
    return rows_for(bot)


@pytest.mark.parametrize("resource", RESOURCES)
def test_another_bots_row_is_a_404_like_a_missing_one(api, theirs, mine, resource):
    _same_404(api, f"/api/v1/{resource}/{theirs[resource]}/", f"/api/v1/{resource}/{MISSING}/")
    assert api.get(f"/api/v1/{resource}/{mine[resource]}/").status_code == 200


@pytest.mark.parametrize("resource", RESOURCES)
def test_lists_hold_only_the_keys_bot(api, theirs, mine, resource):
    ids = {row["id"] for row in api.get(f"/api/v1/{resource}/").json()["results"]}
    assert mine[resource] in ids and theirs[resource] not in ids


@pytest.mark.parametrize(("method", "suffix", "body"), [
    ("patch", "", {"text": "чужое"}),
    ("put", "", {"kind": "qa", "title": "Чужой?", "text": "чужое"}),
    ("delete", "", None),
    ("get", "history/", None),
    ("post", "revert/", {"history_id": 1}),
])
def test_no_write_reaches_another_bots_entry(api, theirs, method, suffix, body):
    from knowledge.models import Entry

    before = Entry.objects.get(pk=theirs["entries"])
    kwargs = {"data": body, "format": "json"} if body is not None else {}
    _same_404(api, f"/api/v1/entries/{theirs['entries']}/{suffix}", f"/api/v1/entries/{MISSING}/{suffix}",
              method, **kwargs)
    after = Entry.objects.get(pk=theirs["entries"])
    assert (after.text, after.active, after.updated_at) == (before.text, before.active, before.updated_at)


def test_another_bots_version_cannot_be_restored_into_mine(api, theirs, mine):
    from knowledge.models import Entry

    their_version = Entry.objects.get(pk=theirs["entries"]).history.first().history_id
    response = api.post(f"/api/v1/entries/{mine['entries']}/revert/", {"history_id": their_version}, format="json")
    assert response.status_code == 404
    assert Entry.objects.get(pk=mine["entries"]).title == "Вопрос бота demo?"


def test_another_bots_source_is_not_crawled(api, theirs):
    from knowledge.models import CrawlRun

    _same_404(api, f"/api/v1/sources/{theirs['sources']}/crawl/", f"/api/v1/sources/{MISSING}/crawl/", "post")
    assert not CrawlRun.objects.exists()


@pytest.mark.parametrize("path", ["/api/v1/entries/abc/", "/api/v1/entries/99999999999999999999999/",
                                  "/api/v1/nothing-here/", "/api/v2/entries/"])
def test_addresses_that_name_nothing_are_the_same_404(api, path):
    response = api.get(path)
    assert response.status_code == 404 and response["Content-Type"] == "application/problem+json"
    assert response.json()["title"] == "Не найдено"
