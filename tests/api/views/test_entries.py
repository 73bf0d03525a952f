import json

import pytest

from knowledge.models import Entry

pytestmark = pytest.mark.django_db

URL = "/api/v1/entries/"
PAIR = {"kind": "qa", "title": "Можно ли забрать заказ самому?", "text": "Да, из пункта выдачи на Тверской, 1.",
        "url": "https://shop.example/pickup"}


def _create(api, **fields):
    response = api.post(URL, {**PAIR, **fields}, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def test_a_created_pair_has_exactly_the_contract_fields_and_is_found_at_once(api, bot):
    data = _create(api)
    assert {"id", "kind", "title", "text", "url", "weight", "active"} <= set(data)
    assert (data["kind"], data["title"], data["weight"], data["active"]) == ("qa", PAIR["title"], 0.8, True)
    entry = Entry.objects.get(pk=data["id"])
    assert entry.bot == bot and entry.embedding_model  # its vector is stored with it
    found = api.get("/api/v1/search/", {"q": "забрать заказ самостоятельно"}).json()
    assert found["results"][0]["entry_id"] == data["id"]


def test_list_is_cursor_paged_newest_first_and_filters(api, bot):
    ids = [_create(api, title=f"Вопрос номер {n}?", kind="qa")["id"] for n in range(5)]
    _create(api, kind="chunk", title="Фрагмент", text="Просто текст страницы")
    page = api.get(URL, {"limit": 2, "kind": "qa"}).json()
    assert [e["id"] for e in page["results"]] == ids[::-1][:2]
    assert page["next"] and page["previous"] is None
    second = api.get(page["next"]).json()
    assert [e["id"] for e in second["results"]] == ids[::-1][2:4]
    assert {e["kind"] for e in api.get(URL, {"kind": "chunk"}).json()["results"]} == {"chunk"}


def test_update_makes_a_version_and_revert_restores_it(api):
    entry = _create(api)
    changed = api.patch(f"{URL}{entry['id']}/", {"text": "Нет, только доставка."}, format="json")
    assert changed.status_code == 200 and changed.json()["text"] == "Нет, только доставка."
    history = api.get(f"{URL}{entry['id']}/history/").json()["results"]
    assert [v["change"] for v in history] == ["changed", "created"]
    assert history[0]["reason"].startswith("API, ключ ")
    reverted = api.post(f"{URL}{entry['id']}/revert/", {"history_id": history[1]["history_id"]}, format="json")
    assert reverted.status_code == 200 and reverted.json()["text"] == PAIR["text"]
    assert Entry.objects.get(pk=entry["id"]).embedding_model  # searchable again at once
    assert len(api.get(f"{URL}{entry['id']}/history/").json()["results"]) == 3


def test_put_of_what_was_read_is_accepted_and_a_changed_read_only_field_is_not(api):
    entry = _create(api)
    assert api.put(f"{URL}{entry['id']}/", entry, format="json").status_code == 200
    response = api.put(f"{URL}{entry['id']}/", {**entry, "id": entry["id"] + 1}, format="json")
    assert response.status_code == 400
    assert response.json()["errors"][0]["pointer"] == "#/id"


def test_a_put_without_kind_keeps_it_and_another_kind_is_refused(api):
    chunk = _create(api, kind="chunk", title="Фрагмент", text="Текст страницы.")
    body = {"title": "Фрагмент", "text": "Новый текст страницы."}
    assert api.put(f"{URL}{chunk['id']}/", body, format="json").json()["kind"] == "chunk"
    response = api.put(f"{URL}{chunk['id']}/", {**body, "kind": "qa"}, format="json")
    assert response.status_code == 400 and response.json()["errors"][0]["pointer"] == "#/kind"


def test_delete_switches_the_entry_off_and_it_comes_back(api):
    entry = _create(api)
    assert api.delete(f"{URL}{entry['id']}/").status_code == 204
    assert api.get(f"{URL}{entry['id']}/").json()["active"] is False
    assert api.get("/api/v1/search/", {"q": PAIR["title"]}).json()["results"] == []
    assert api.patch(f"{URL}{entry['id']}/", {"active": True}, format="json").json()["active"] is True


def test_the_same_question_twice_is_a_conflict_naming_the_first(api):
    first = _create(api)
    response = api.post(URL, {**PAIR, "title": "можно ли ЗАБРАТЬ заказ самому"}, format="json")
    assert response.status_code == 409
    assert f"№{first['id']}" in response.json()["detail"]
    assert Entry.objects.filter(kind="qa").count() == 1


BAD = [
    ({"text": "х" * 20001}, "text"),
    ({"title": 123}, "title"),
    ({"weight": "0.5"}, "weight"),
    ({"weight": True}, "weight"),
    ({"weight": 1.5}, "weight"),
    ({"active": "yes"}, "active"),
    ({"url": "javascript:alert(1)"}, "url"),
    ({"url": "data:text/html,<b>x</b>"}, "url"),
    ({"text": "до\x00после"}, "text"),
    ({"title": "половина \ud800 пары"}, "title"),
    ({"colour": "red"}, "colour"),
    ({"kind": "correction"}, "kind"),
    ({"text": ""}, "text"),
]


@pytest.mark.parametrize(("fields", "field"), BAD, ids=[f for _x, f in BAD])
def test_bad_input_is_a_readable_400_and_nothing_is_saved(api, fields, field):
    # As a client sends it: JSON text, a lone surrogate as its \\ud800 escape.
    response = api.post(URL, json.dumps({**PAIR, **fields}), content_type="application/json")
    assert response.status_code == 400, response.content
    assert response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["type"] == "urn:spravka:problem:validation" and body["status"] == 400
    assert body["errors"][0]["pointer"] == f"#/{field}" and body["errors"][0]["detail"]
    assert field in body["detail"]
    assert not Entry.objects.exists()


def test_a_bad_edit_keeps_the_entry_as_it_was(api):
    entry = _create(api)
    response = api.patch(f"{URL}{entry['id']}/", {"text": "", "url": "javascript:x"}, format="json")
    assert response.status_code == 400
    assert {e["pointer"] for e in response.json()["errors"]} == {"#/text", "#/url"}
    assert api.get(f"{URL}{entry['id']}/").json() == entry


def test_a_body_that_is_not_json_or_too_big_is_refused(api, settings):
    response = api.post(URL, "{not json", content_type="application/json")
    assert response.status_code == 400 and response["Content-Type"] == "application/problem+json"
    settings.API_MAX_JSON_BYTES = 1000
    response = api.post(URL, {**PAIR, "text": "я" * 2000}, format="json")
    assert response.status_code == 413 and "КБ" in response.json()["detail"]
    assert not Entry.objects.exists()


def test_the_list_costs_two_queries_whatever_its_size(api, bot, django_assert_num_queries):
    for n in range(3):
        _create(api, title=f"Вопрос {n}?")
    api.get(URL)  # the key's last-use stamp is written on its first request of a while
    with django_assert_num_queries(2):  # the key with its bot; one page of entries
        assert len(api.get(URL).json()["results"]) == 3
