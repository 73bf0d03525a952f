"""Errors as RFC 9457 problem details; throttling per key in Redis; the schema and the docs page,
served with Swagger UI from our own static files."""

import pytest

from tests.api.conftest import client_for

pytestmark = pytest.mark.django_db


def test_a_key_over_its_rate_gets_429_with_retry_after_and_other_keys_do_not(api, other_api, settings):
    settings.API_RATE = "3/min"
    assert [api.get("/api/v1/entries/").status_code for _ in range(3)] == [200, 200, 200]
    response = api.get("/api/v1/entries/")
    assert response.status_code == 429 and response["Content-Type"] == "application/problem+json"
    body = response.json()
    assert body["type"] == "urn:spravka:problem:throttled" and body["retry_after"] >= 1
    assert int(response["Retry-After"]) == body["retry_after"]
    assert other_api.get("/api/v1/entries/").status_code == 200


def test_the_count_lives_in_redis_so_a_new_client_with_the_same_key_is_still_limited(api_key, settings):
    import redis

    settings.API_RATE = "2/min"
    for _ in range(2):
        assert client_for(api_key).get("/api/v1/gaps/").status_code == 200
    assert client_for(api_key).get("/api/v1/gaps/").status_code == 429
    client = redis.Redis.from_url(settings.REDIS_URL)
    try:
        assert list(client.scan_iter(match=f"*api:throttle:api:{api_key.split('_')[1]}*"))
    finally:
        client.close()


def test_ask_has_its_own_smaller_rate(api, knowledge, settings):
    settings.API_ASK_RATE = "1/min"
    assert api.post("/api/v1/ask/", {"question": "Привет"}, format="json").status_code == 200
    assert api.post("/api/v1/ask/", {"question": "Привет"}, format="json").status_code == 429
    assert api.get("/api/v1/entries/").status_code == 200


def test_problems_speak_english_when_asked(api):
    response = api.get("/api/v1/entries/99/", HTTP_ACCEPT_LANGUAGE="en")
    assert response.status_code == 404
    assert response.json()["detail"] == "Not found."  # DRF speaks English; our own titles await locale/en
    russian = api.get("/api/v1/entries/99/").json()
    assert russian["title"] == "Не найдено"
    missing = api.post("/api/v1/entries/", {"text": ""}, format="json", HTTP_ACCEPT_LANGUAGE="en").json()
    assert "blank" in missing["errors"][0]["detail"]


def test_a_wrong_method_and_a_wrong_media_type_are_problems(api):
    response = api.put("/api/v1/entries/", {}, format="json")
    assert response.status_code == 405 and response.json()["type"] == "urn:spravka:problem:method-not-allowed"
    response = api.post("/api/v1/entries/", "text=1", content_type="application/x-www-form-urlencoded")
    assert response.status_code == 415 and response.json()["status"] == 415


def test_the_schema_lists_every_resource_and_needs_no_key(client):
    response = client.get("/api/schema/", HTTP_ACCEPT="application/json")
    assert response.status_code == 200
    schema = response.json()
    paths = set(schema["paths"])
    for path in ["/api/v1/entries/", "/api/v1/entries/{id}/", "/api/v1/entries/{id}/history/",
                 "/api/v1/entries/{id}/revert/", "/api/v1/sources/", "/api/v1/sources/{id}/crawl/",
                 "/api/v1/documents/", "/api/v1/search/", "/api/v1/ask/", "/api/v1/conversations/",
                 "/api/v1/conversations/{id}/", "/api/v1/leads/", "/api/v1/gaps/", "/api/v1/review-items/"]:
        assert path in paths, path
    assert schema["components"]["securitySchemes"]["ApiKey"]["scheme"] == "bearer"
    entry = schema["components"]["schemas"]["Entry"]["properties"]
    assert {"id", "kind", "title", "text", "url", "weight", "active"} <= set(entry)


BROWSER = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"


def test_a_browser_is_shown_the_schema_and_programs_get_it_as_before(client):
    """A browser's GET (text/html first) displays the YAML in the tab; an API client gets YAML for */*
    and JSON when it asks, as the docs say (docs/api.md)."""
    shown = client.get("/api/schema/", HTTP_ACCEPT=BROWSER)
    assert shown.status_code == 200 and shown["Content-Type"] == "text/plain; charset=utf-8"
    assert "attachment" not in shown.get("Content-Disposition", "")
    assert shown.content.decode().startswith("openapi: 3") and "/api/v1/entries/" in shown.content.decode()
    assert client.get("/api/schema/", HTTP_ACCEPT="*/*")["Content-Type"].startswith("application/vnd.oai.openapi")
    assert client.get("/api/schema/", HTTP_ACCEPT="application/yaml")["Content-Type"].startswith("application/yaml")
    assert client.get("/api/schema/", HTTP_ACCEPT="application/json").json()["openapi"].startswith("3")
    asked = client.get("/api/schema/?format=json", HTTP_ACCEPT=BROWSER)  # an explicit format wins
    assert asked["Content-Type"] == "application/vnd.oai.openapi+json" and asked.json()["openapi"].startswith("3")


def test_the_docs_page_loads_swagger_ui_from_our_own_static_files(client):
    page = client.get("/api/docs/").content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in page
    assert "cdn" not in page.lower() and "unpkg" not in page.lower()
    from django.contrib.staticfiles import finders

    # Served like every other static file (collectstatic); the uvicorn test fetches it over HTTP.
    assert finders.find("drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js")
