"""Entry versions: every save is a version (django-simple-history); a revert is one more version.

Nothing is ever rolled back by deleting history: a revert (`services.entry_revert`, restoring the
fields of RESTORED_FIELDS) writes the old content as a new version, so the revert itself can be
reverted and the history reads as what really happened.

Why a version was made (its reason, simple_history's `history_change_reason`, 100 characters) is
written in Russian in one of the forms of REASON_FORMS, or as one of REASON_CODES, and read in the
reader's language through `reason_shown`.

What must stay true:
- What is written does not change: the REST API hands the stored reason to integrations as it is
  (an integration contract), and rows written before `reason_shown` existed use the same forms.
  A form is declared once, by its Russian msgid: the writer fills it in untranslated
  (`reason_written`), the reader recognises it by the same msgid and translates it.
- `reason_shown` accepts anything a row may hold: None or "" is a dash, a text in no known form
  (written by hand, or by code this module does not know) is shown as it is, never dropped.
"""

from __future__ import annotations

from typing import Final

from django.utils.translation import gettext_noop

from core.texts import Text, shown, stored, written_form

# What a version restores. Identity (bot, source, page, key) stays: an old key could collide
# with a newer row, and a revert must never move an entry to another source or tenant.
RESTORED_FIELDS = ("kind", "title", "heading_path", "text", "url", "weight", "review_needed", "active",
                   "content_hash")


# --- reasons of versions ---------------------------------------------------------------------------

REASON_REVERT: Final = gettext_noop("откат к версии №%(n)s")
REASON_REVIEW_ITEM: Final = gettext_noop("поправка из очереди проверки №%(n)s")  # n: the ReviewItem
REASON_CORRECTION: Final = gettext_noop("поправка (%(origin)s)")  # origin: a Correction.Origin value
REASON_CORRECTION_UNDO: Final = gettext_noop("отмена поправки №%(n)s")  # n: the Correction
REASON_API_KEY: Final = gettext_noop("API, ключ %(prefix)s")  # prefix: the ApiKey's public prefix
REASON_FORMS: Final = (REASON_REVERT, REASON_REVIEW_ITEM, REASON_CORRECTION, REASON_CORRECTION_UNDO, REASON_API_KEY)

REASON_DASHBOARD: Final = "dashboard"  # an edit, a new pair or a removed document in the owner's dashboard
REASON_API: Final = "API"  # the REST API with a credential that is not a key
REASON_ADMIN: Final = "admin"  # the admin's entry form, its bulk actions and its revert
REASON_CODES: Final[dict[str, str]] = {
    REASON_DASHBOARD: gettext_noop("в кабинете владельца"),
    REASON_ADMIN: gettext_noop("в админке"),
    REASON_API: REASON_API,  # the same word in every language
}
# The origins a correction's reason names (review.models.Correction.Origin: values and labels; a test
# keeps the two in step, since knowledge may not import review).
CORRECTION_ORIGINS: Final[dict[str, str]] = {
    "review": gettext_noop("очередь проверки"),
    "gap": gettext_noop("пробелы в знаниях"),
    "command": gettext_noop("из командной строки"),
    "operator": gettext_noop("ответ оператора"),
}
NO_REASON: Final = "—"


_PATTERNS: Final = tuple((msgid, written_form(msgid, n=r"\d+")) for msgid in REASON_FORMS)  # n: a number


def reason_written(msgid: str, /, **params: object) -> str:
    """The reason to store, in Russian: one of REASON_FORMS filled in, cut to the column's 100."""
    if msgid not in REASON_FORMS:
        raise ValueError(f"not a form of version reason: {msgid!r}")
    return (msgid % params)[:100]


def reason_text(raw: str | None) -> Text:
    """A stored reason as a text to show (core/texts.py): a known form or code as its msgid with
    its parameters, anything else as it is."""
    if not raw:
        return ""
    if raw in REASON_CODES:
        return stored(REASON_CODES[raw])
    for msgid, pattern in _PATTERNS:
        match = pattern.fullmatch(raw)
        if match is None:
            continue
        params: dict[str, object] = dict(match.groupdict())
        origin = params.get("origin")
        if isinstance(origin, str) and origin in CORRECTION_ORIGINS:
            params["origin"] = stored(CORRECTION_ORIGINS[origin])
        return stored(msgid, **params)
    return raw


def reason_shown(raw: str | None) -> str:
    """The reason of a version in the active language; a dash when the version has none."""
    return shown(reason_text(raw)) or NO_REASON
