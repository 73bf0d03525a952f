"""Texts a service stores in a row for a person to read later (a crawl's summary, why a page was skipped,
why a feed was refused), shown in the reader's language, not in the writer's.

A message is stored untranslated: its Russian msgid and its parameters, as JSON
(`stored(gettext_noop("страница больше %(size)s"), size=...)`), and translated when it is shown
(`shown(value)`, in the active language: the page's, the API request's, the command's).

What must stay true:
- `shown` accepts everything a row may hold: a plain string (rows written before stored texts, or a
  text from outside: a site's own words) is shown as it is; a stored text `{"msgid", "params"}`
  is translated and filled in; a list is shown line by line. A parameter may be a stored text too
  (a reason inside a summary), and a float parameter is written with the active language's decimal
  separator (a whole one without decimals).
- A msgid must be marked where it is written (`gettext_noop`), so makemessages puts it in the
  catalog and `tests/test_translations.py` holds its English; a msgid missing from the catalog is
  shown in Russian, never lost.
- A stored text that does not fit its msgid (a placeholder without a parameter) is shown as its
  msgid rather than raising: a page that lists runs must never fail on one old row.
- `russian(value)` is the same text in Russian, for the text columns kept beside the stored one
  (searchable in the admin, read by older code and by rows' readers that do not translate).
"""

from __future__ import annotations

import re
from typing import Any, TypeAlias

from django.utils import formats, translation

Stored: TypeAlias = dict[str, Any]
Text: TypeAlias = "str | Stored | list[Any]"


def stored(msgid: str, /, **params: Any) -> Stored:
    """A text to store: the msgid (marked with gettext_noop where it is written) and its parameters
    (strings, numbers, or stored texts themselves)."""
    return {"msgid": msgid, "params": params} if params else {"msgid": msgid}


def is_stored(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("msgid"), str)


def shown(value: Any, *, sep: str = "\n") -> str:
    """The text in the active language. None or empty: ""."""
    if value is None or value == "":
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return sep.join(shown(part) for part in value)
    if is_stored(value):
        return _fill(translation.gettext(value["msgid"]), value.get("params") or {}, value["msgid"])
    return str(value)


def russian(value: Any, *, sep: str = "\n") -> str:
    with translation.override("ru"):
        return shown(value, sep=sep)


def stored_pair(value: Any, limit: int) -> tuple[str, Any]:
    """(the Russian text cut to the text column's `limit`, the value for the JSON column beside it:
    None for a plain string, which has nothing to translate)."""
    return russian(value)[:limit], (None if isinstance(value, str) or not value else value)


def written_form(template: str, /, **groups: str) -> re.Pattern[str]:
    """How a filled-in text of `template` reads, to recognise it when shown (rows that keep the
    filled-in Russian text, not the msgid: version reasons, the bot's history notes): the template's
    words as they are, each `%(name)s` a named group matching `groups[name]` (a regex; any text by
    default). Use it with `fullmatch`."""
    parts = re.split(r"%\((\w+)\)s", template)
    return re.compile("".join(
        re.escape(part) if i % 2 == 0 else f"(?P<{part}>{groups.get(part, '.+?')})" for i, part in enumerate(parts)
    ))


def _param(value: Any) -> Any:
    if isinstance(value, float):  # 4.0 -> "4", 9.8 -> "9,8" / "9.8"
        return str(int(value)) if value.is_integer() else formats.number_format(value, use_l10n=True)
    if isinstance(value, (dict, list, tuple)):
        return shown(value, sep="; ")
    return value


def _fill(text: str, params: dict[str, Any], msgid: str) -> str:
    if not params:
        return text
    values = {name: _param(value) for name, value in params.items()}
    try:
        return text % values
    except (KeyError, TypeError, ValueError):
        try:
            return msgid % values
        except (KeyError, TypeError, ValueError):
            return msgid
