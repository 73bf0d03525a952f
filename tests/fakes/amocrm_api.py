"""A local fake of amoCRM's API v4 (one account), for crm/providers.py to talk to over real HTTP.

Every request needs `Authorization: Bearer <token>` with the account's token (`token`), else 401
`{"title": "Unauthorized", "status": 401, "detail": ...}` as amoCRM answers. Endpoints:
- `GET /api/v4/account`: the account (id, name, subdomain);
- `POST /api/v4/leads/complex`: a list of leads, each with `_embedded.contacts` (first_name or name,
  custom_fields_values with field_code PHONE / EMAIL); answers `[{"id", "contact_id", "company_id",
  "request_id", "merged"}]` and keeps the lead in `leads` (id -> {"name", "contact", "notes"});
- `POST /api/v4/leads/{id}/notes`: a list of notes, each `{"note_type": "common", "params": {"text"}}`;
  404 for a lead that does not exist, 400 for another note type or an empty text.
Anything else answers 404. Switches: tests/fakes/crm_base.py.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from tests.fakes.crm_base import Answer, FakeCrm, Request

TOKEN = "amo-long-lived-FAKE.eyJhbGciOiJSUzI1NiJ9.spravka_test_token-0123456789"
NOTES = re.compile(r"^/api/v4/leads/(\d+)/notes$")


class FakeAmoCRM(FakeCrm):
    def __init__(self, token: str = TOKEN, name: str = "Магазин «Справка»") -> None:
        super().__init__()
        self.token, self.name = token, name
        self.leads: dict[int, dict[str, Any]] = {}
        self._lead_ids = itertools.count(31000001)
        self._contact_ids = itertools.count(52000001)
        self._note_ids = itertools.count(70000001)

    def notes_of(self, lead_id: int | str) -> list[str]:
        with self._lock:
            return [note["params"]["text"] for note in self.leads.get(int(lead_id), {}).get("notes", [])]

    def _unauthorized(self) -> Answer:
        return Answer(401, {"title": "Unauthorized", "type": "https://httpstatus.es/401", "status": 401,
                            "detail": "Неверный логин или пароль"})

    def _answer(self, request: Request) -> Answer:
        if request.headers.get("authorization", "") != f"Bearer {self.token}":
            return self._unauthorized()
        if request.method == "GET" and request.path == "/api/v4/account":
            return Answer(200, {"id": 29000001, "name": self.name, "subdomain": "spravka", "country": "RU",
                                "currency": "RUB"})
        if request.method == "POST" and request.path == "/api/v4/leads/complex":
            return self._complex(request.body)
        match = NOTES.fullmatch(request.path)
        if request.method == "POST" and match:
            return self._notes(int(match[1]), request.body)
        return Answer(404, {"title": "Not Found", "status": 404})

    def _complex(self, body: Any) -> Answer:
        if not isinstance(body, list) or not body:
            return _invalid("body must be a non-empty array")
        answered = []
        for number, item in enumerate(body):
            contacts = (item.get("_embedded") or {}).get("contacts") if isinstance(item, dict) else None
            if not isinstance(contacts, list) or not contacts or not isinstance(contacts[0], dict):
                return _invalid("_embedded.contacts is required")
            contact = contacts[0]
            fields = {f.get("field_code"): [v.get("value") for v in f.get("values", [])]
                      for f in contact.get("custom_fields_values") or []}
            lead_id, contact_id = next(self._lead_ids), next(self._contact_ids)
            self.leads[lead_id] = {"name": item.get("name", ""), "notes": [], "contact": {
                "id": contact_id, "name": contact.get("first_name") or contact.get("name", ""),
                "phone": (fields.get("PHONE") or [""])[0], "email": (fields.get("EMAIL") or [""])[0]}}
            answered.append({"id": lead_id, "contact_id": contact_id, "company_id": None,
                             "request_id": [str(number)], "merged": False})
        return Answer(200, answered)

    def _notes(self, lead_id: int, body: Any) -> Answer:
        lead = self.leads.get(lead_id)
        if lead is None:
            return Answer(404, {"title": "Not Found", "status": 404})
        if not isinstance(body, list) or not body:
            return _invalid("body must be a non-empty array")
        made = []
        for note in body:
            if not isinstance(note, dict) or note.get("note_type") != "common" or not (note.get("params") or {}).get(
                    "text"):
                return _invalid("note_type must be common with params.text")
            lead["notes"].append(note)
            made.append({"id": next(self._note_ids), "entity_id": lead_id, "request_id": "0"})
        return Answer(200, {"_links": {}, "_embedded": {"notes": made}})


def _invalid(detail: str) -> Answer:
    return Answer(400, {"title": "Bad Request", "status": 400, "detail": detail,
                        "validation-errors": [{"request_id": "0", "errors": [{"detail": detail}]}]})
