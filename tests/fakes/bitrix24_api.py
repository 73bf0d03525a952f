"""A local fake of a Bitrix24 portal's inbound webhook, for crm/providers.py to talk to over real HTTP.

Calls go to `{url}/rest/{user}/{code}/{method}.json` with a JSON body; the webhook is
`webhook` (user USER, code CODE). Another user or code answers 401 `{"error": "NO_AUTH_FOUND",
"error_description": "Wrong authorization data"}` as Bitrix24 does. Methods:
- `crm.lead.fields`: `{"result": {...the lead's fields...}}`;
- `crm.lead.add`: `{"fields": {...}}` with TITLE required; answers `{"result": <new id>}` and keeps the
  lead in `leads` (id -> its fields, with "comments": the timeline comments added later);
- `crm.timeline.comment.add`: `{"fields": {"ENTITY_ID", "ENTITY_TYPE": "lead", "COMMENT"}}`; 400
  `{"error": "ERROR_CORE"...}` for a lead that does not exist.
Any other method answers 404 `ERROR_METHOD_NOT_FOUND`. Switches: tests/fakes/crm_base.py.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from tests.fakes.crm_base import Answer, FakeCrm, Request

USER = "1"
CODE = "k3y4spravkatest9"
CALL = re.compile(r"^/rest/(\d+)/([A-Za-z0-9]+)/([A-Za-z.]+?)(?:\.json)?$")


def _result(value: Any) -> Answer:
    return Answer(200, {"result": value, "time": {"start": 1764000000.0, "duration": 0.01}})


def _error(status: int, code: str, description: str) -> Answer:
    return Answer(status, {"error": code, "error_description": description})


class FakeBitrix24(FakeCrm):
    def __init__(self) -> None:
        super().__init__()
        self.leads: dict[int, dict[str, Any]] = {}
        self._ids = itertools.count(101)

    @property
    def webhook(self) -> str:
        return f"{self.url}/rest/{USER}/{CODE}/"

    def comments_of(self, lead_id: int | str) -> list[str]:
        with self._lock:
            return list(self.leads.get(int(lead_id), {}).get("comments", []))

    def _unauthorized(self) -> Answer:
        return _error(401, "NO_AUTH_FOUND", "Wrong authorization data")

    def _answer(self, request: Request) -> Answer:
        match = CALL.fullmatch(request.path)
        if match is None:
            return Answer(404, text="<html><body>404 Not Found</body></html>")
        user, code, method = match.groups()
        if (user, code) != (USER, CODE):
            return self._unauthorized()
        body = request.body if isinstance(request.body, dict) else {}
        if method == "crm.lead.fields":
            return _result({"TITLE": {"type": "string"}, "NAME": {"type": "string"},
                            "PHONE": {"type": "crm_multifield"}, "EMAIL": {"type": "crm_multifield"},
                            "COMMENTS": {"type": "string"}})
        if method == "crm.lead.add":
            fields = body.get("fields")
            if not isinstance(fields, dict) or not fields.get("TITLE"):
                return _error(400, "ERROR_CORE", "Не заполнено обязательное поле \"Название лида\"")
            lead_id = next(self._ids)
            self.leads[lead_id] = dict(fields, comments=[])
            return _result(lead_id)
        if method == "crm.timeline.comment.add":
            fields = body.get("fields") or {}
            lead = self.leads.get(int(fields.get("ENTITY_ID") or 0))
            if fields.get("ENTITY_TYPE") != "lead" or lead is None or not fields.get("COMMENT"):
                return _error(400, "ERROR_CORE", "Entity not found")
            lead["comments"].append(fields["COMMENT"])
            return _result(next(self._ids) + 9000)
        return _error(404, "ERROR_METHOD_NOT_FOUND", "Method not found!")
