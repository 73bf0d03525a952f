"""Counted phrases a page's script fills in («1 знак», «3 знака», «5 знаков» / "1 character",
"5 characters"): the server renders the phrase's forms in the page's language, keyed by the
categories of the browser's `Intl.PluralRules`, and the script picks one by the count
(`static/owner/plural.js`). The catalogs stay the one place the words live.

What must stay true: a category maps to a count that gettext's rule of the same language puts in
the same form. Russian: one 1, few 2, many 5, and other (fractions: «1,5 знака») the few form;
English: one 1, other 2. A category a language does not use is harmless."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

SAMPLES: Final = {"one": 1, "few": 2, "many": 5, "other": 2}


def plural_forms(phrase: Callable[[int], str]) -> dict[str, str]:
    """`phrase` is `lambda n: ngettext("%(n)s знак", "%(n)s знаков", n)` (a literal call, so the
    catalogs' checks see its msgids); the result maps each category to its form, "%(n)s" unfilled."""
    return {category: phrase(n) for category, n in SAMPLES.items()}
