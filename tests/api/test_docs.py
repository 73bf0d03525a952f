"""Over a real server: uvicorn running the project's ASGI app on the test database. Every curl
example of docs/api.md is run as written and gets the status the doc promises; httpx walks the
API as an integration would, and the docs page's Swagger UI files come from this server.

Cross-cutting: docs/api.md against the whole API (api/views/, api/authentication.py, bots/apikeys.py) on a
real server."""

from __future__ import annotations

import json
import re
import subprocess

import httpx
import pytest

from tests.conftest import REPO
from tests.e2e.conftest import live_app  # noqa: F401  (the real app under uvicorn)

pytestmark = pytest.mark.django_db(transaction=True)

DOC = REPO / "docs" / "api.md"
EXAMPLE = re.compile(r"```sh\n# → (\d{3})\n(.*?)```", re.DOTALL)
# Each example prints its body, then its status on a line of its own.
PRELUDE = "set -eu\ncurl() { command curl -w '\\n%{http_code}' \"$@\"; }\n"


def _examples() -> list[tuple[int, str]]:
    return [(int(status), body) for status, body in EXAMPLE.findall(DOC.read_text(encoding="utf-8"))]


def test_the_doc_has_an_example_for_every_resource():
    text = " ".join(body for _status, body in _examples())
    for path in ["entries/", "entries/$ENTRY_ID/history/", "entries/$ENTRY_ID/revert/", "sources/",
                 "sources/$SOURCE_ID/crawl/", "documents/", "search/", "ask/", "conversations/", "leads/",
                 "gaps/", "review-items/"]:
        assert f"/api/v1/{path}" in text, path
    assert len(_examples()) >= 15


@pytest.fixture
def world(bot):
    from bots.apikeys import api_key_create
    from knowledge.models import Source
    from knowledge.services import entry_create, source_create
    from tests.api.rows import rows_for
    from tests.chat.conftest import KNOWLEDGE

    for key, title, text, url in KNOWLEDGE:
        entry_create(bot=bot, kind="qa", title=f"{title}: {key}?", text=text, url=url)
    entry = entry_create(bot=bot, kind="qa", title="Есть ли самовывоз?", text="Нет, только доставка.")
    rows = rows_for(bot)
    source = source_create(bot=bot, kind=Source.Kind.SITE, url="https://shop.example/catalog/")
    return {
        "KEY": api_key_create(bot=bot, name="Документация")[1],
        "ENTRY_ID": str(entry.pk), "VERSION_ID": str(entry.history.get().history_id),
        "SOURCE_ID": str(source.pk), "SITE_URL": "https://shop.example/", "CONVERSATION_ID": str(rows["conversations"]),
    }


def test_every_curl_example_in_the_doc_gets_the_status_it_promises(live_app, world, tmp_path):  # noqa: F811
    (tmp_path / "dostavka.md").write_text("# Доставка\n\nКурьер привезёт заказ на следующий день.\n")
    env = {"PATH": "/usr/bin:/bin", "SPRAVKA": live_app, **world}
    for status, body in _examples():
        done = subprocess.run(["bash", "-c", PRELUDE + body], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, (body, done.stderr)
        payload, _sep, got = done.stdout.rpartition("\n")
        assert int(got) == status, (body, done.stdout)
        if status != 204:
            data = json.loads(payload)
            assert ("errors" in data or data["status"] == status) if status >= 400 else data, body


def test_an_integration_walks_the_api_with_httpx(live_app, world):  # noqa: F811
    headers = {"Authorization": f"Bearer {world['KEY']}"}
    with httpx.Client(base_url=live_app, headers=headers, timeout=60) as http:
        created = http.post("/api/v1/entries/", json={"title": "Работаете ли в выходные?", "text": "Да, без выходных."})
        assert created.status_code == 201
        listed = http.get("/api/v1/entries/", params={"limit": 2})
        assert listed.status_code == 200 and listed.json()["results"][0]["id"] == created.json()["id"]
        assert http.get(listed.json()["next"]).status_code == 200
        answer = http.post("/api/v1/ask/", json={"question": "Вы работаете в выходные?"}).json()
        assert answer["source"] == created.json()["id"] and "без выходных" in answer["text"]
        problem = http.get("/api/v1/entries/", headers={"Authorization": "Bearer spr_nope"})
        assert problem.status_code == 401 and problem.headers["content-type"] == "application/problem+json"
        docs = http.get("/api/docs/")
        assert docs.status_code == 200
        assets = re.findall(r'(?:src|href)="(/static/drf_spectacular_sidecar/[^"]+)"', docs.text)
        assert any(a.endswith("swagger-ui-bundle.js") for a in assets) and "cdn" not in docs.text.lower()
        for asset in assets:
            assert http.get(asset).status_code == 200, asset
        assert http.get("/api/schema/", headers={"Accept": "application/json"}).json()["openapi"].startswith("3")
