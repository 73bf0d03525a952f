"""An entry's version history in the admin as a person reads it (issue 12: human labels, never raw
values). simple_history's own list prints field names as headers (`kind`, `weight`), raw values
(`qa`, `True`), «None» for a change made by the system, and every changed column, content hashes
included. `ReadableHistory` builds the rows itself and hands them to
templates/admin/knowledge/entry/history_list.html:

- the extra columns are headed by their fields' labels and shown as the changelist shows them
  (a choice by its label, a boolean as an icon, a number in the reader's locale);
- each version's reason is in the reader's language (knowledge/versions.py);
- changes list the fields an owner edits, with their labels and readable values; bookkeeping
  (the content hash, the vector's model, the dedupe key) is left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, cast

from django.contrib.admin.utils import display_for_field, label_for_field
from django.db import models
from django.http import HttpRequest
from django.utils.text import Truncator, capfirst
from django.utils.translation import pgettext

from knowledge.versions import reason_shown

BOOKKEEPING: Final = frozenset({"content_hash", "embedding_model", "key", "created_at"})
CHANGE_CHARS: Final = 100
EMPTY: Final = "—"


@dataclass(frozen=True)
class Change:
    field: str
    old: str
    new: str


def shown_value(field: models.Field, value: Any) -> str:
    """A stored value as the admin's changelist shows it (a boolean's icon is HTML, already safe)."""
    return str(display_for_field(value, field, EMPTY))


def _field(model: type[models.Model], name: str) -> models.Field:
    field = model._meta.get_field(name)
    assert isinstance(field, models.Field), name  # a history's columns are the model's own fields
    return field


def changed_value(field: models.Field, value: Any) -> str:
    """A value inside a change's text: a boolean as a word (no icon in running text), cut short."""
    if isinstance(field, models.BooleanField) and isinstance(value, bool):
        return pgettext("флажок", "да") if value else pgettext("флажок", "нет")
    return Truncator(str(display_for_field(value, field, EMPTY))).chars(CHANGE_CHARS)


def _changes(model: type[models.Model], newer: Any, older: Any) -> list[Change]:
    delta = newer.diff_against(older, foreign_keys_are_objs=False)
    changes = []
    for change in delta.changes:
        if change.field in BOOKKEEPING:
            continue
        field = _field(model, change.field)
        old, new = changed_value(field, change.old), changed_value(field, change.new)
        changes.append(Change(field=capfirst(str(field.verbose_name)), old=old, new=new))
    return changes


class ReadableHistory:
    """Mixed into a SimpleHistoryAdmin whose model's history the owner reads."""

    object_history_list_template = "admin/knowledge/entry/history_list.html"
    model: type[models.Model]

    def render_history_view(self, request: HttpRequest, template: str, context: dict[str, Any], **kwargs: Any) -> Any:
        page = context.get("page_obj")  # the list of versions; a single version's form has none
        if page is not None:
            records = list(page.object_list)
            columns = list(context.get("history_list_display") or [])
            context["columns"] = [capfirst(str(label_for_field(name, self.model, cast(Any, self)))) for name in columns]
            # The page's last version is compared with the one before it, on the next page (one query).
            older = [*records[1:], records[-1].prev_record] if records else []
            pairs = zip(records, older, strict=True)
            context["rows"] = [self._row(record, columns, before) for record, before in pairs]
        return super().render_history_view(request, template, context, **kwargs)  # type: ignore[misc]

    def _row(self, record: Any, columns: list[str], older: Any) -> dict[str, Any]:
        cells = []
        for name in columns:
            method = getattr(self, name, None)
            value = method(record) if callable(method) else shown_value(_field(self.model, name), getattr(record, name))
            cells.append(value)
        return {
            "record": record, "cells": cells, "reason": reason_shown(record.history_change_reason),
            "changes": _changes(self.model, record, older) if older is not None else [],
        }
