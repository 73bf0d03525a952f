"""Order numbers and second factors in a visitor's text.

The number pattern is the owner's (OrderEndpoint.number_pattern): it runs under the `regex`
module's timeout, so a pattern that backtracks badly costs a visitor's turn at most TIMEOUT, never
the server. A number is a whole token: "12.11.2026" holds no order number 2026.
"""

from __future__ import annotations

import functools
import re
from typing import Final

import regex
from django.utils.translation import gettext as _

from knowledge.catalog.models import DEFAULT_NUMBER_PATTERN, MAX_NUMBER

TIMEOUT: Final = 0.05  # seconds for one search with the owner's pattern
SCAN_CHARS: Final = 2000  # the longest visitor message (chat.writes.MAX_TEXT)
_TOO_LONG: Final = re.compile(rf"[\w-]{{{MAX_NUMBER + 1},}}")
_EMAIL: Final = re.compile(r"[^\s@<>()\[\],;:]+@[^\s@<>()\[\],;:]+\.[^\s@<>()\[\],;:.]+")
_DIGITS: Final = re.compile(r"\d")


@functools.lru_cache(maxsize=256)
def compiled(pattern: str) -> regex.Pattern[str]:
    """The owner's pattern as a whole token (raises regex.error when it does not compile)."""
    return regex.compile(rf"(?<![\w.-])(?:{pattern})(?![\w-]|[.,]\d)", regex.IGNORECASE)


def pattern_error(pattern: str) -> str | None:
    """Why `pattern` cannot be a number pattern, or None."""
    if not pattern.strip():
        return _("шаблон пустой")
    try:  # alone too: "[" or "a)(b" compile only inside the whole-token wrapper, as something else
        bare, rx = regex.compile(pattern, regex.IGNORECASE), compiled(pattern)
    except regex.error as exc:
        return _("шаблон не читается: %(error)s") % {"error": exc}
    try:
        if rx.fullmatch("", timeout=TIMEOUT) is not None or bare.fullmatch("", timeout=TIMEOUT):
            return _("шаблон подходит и к пустой строке")
    except TimeoutError:
        return _("шаблон слишком сложный")
    return None


def number_in(text: str, pattern: str = DEFAULT_NUMBER_PATTERN) -> str | None:
    """The first order number in `text`, or None (also when the pattern ran out of time)."""
    try:
        found = compiled(pattern).search(text[:SCAN_CHARS], timeout=TIMEOUT)
    except (TimeoutError, regex.error):
        return None
    if found is None:
        return None
    number = found.group(0).strip()
    return number if 0 < len(number) <= MAX_NUMBER else None


def too_long_token(text: str) -> str | None:
    """A token longer than any order number (a pasted wall of digits): refused, never sent."""
    found = _TOO_LONG.search(text)
    return found.group(0) if found else None


def factor_in(text: str) -> str | None:
    """A second factor: an e-mail address, or the last 4 digits of a phone (the 4 digits alone,
    or a whole phone number)."""
    email = _EMAIL.search(text)
    if email:
        return email.group(0).casefold()
    digits = "".join(_DIGITS.findall(text))
    return digits[-4:] if 4 <= len(digits) <= 15 else None


def factor_matches(factor: str, *, phone: str, email: str) -> bool:
    if "@" in factor:
        return bool(email) and email.strip().casefold() == factor
    phone_digits = "".join(_DIGITS.findall(phone))
    return len(phone_digits) >= 4 and phone_digits[-4:] == factor
