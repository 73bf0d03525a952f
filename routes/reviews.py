"""Customer reviews in: a CSV file (`manage.py importreviews`) or a signed webhook. One writer.

A CSV has the columns author, rating, text, product, date, source (header row, any order, comma
or semicolon, UTF-8 with or without BOM). It is checked whole before anything is saved: one bad
row and the file is refused with every problem listed by line, nothing half-imported. A review
seen before (same author, date, source, product and text) is skipped, so a re-import is harmless.

A webhook body is one review as JSON with the same fields, signed like our own webhooks:
`X-Spravka-Signature: sha256=<hex HMAC-SHA256 of the raw body>` with the bot's intake secret.
"""

from __future__ import annotations

import csv
import hashlib
import hmac
import io
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any, Final

from django.db import IntegrityError, transaction
from django.utils.dateparse import parse_date
from django.utils.translation import gettext as _

from bots.models import Bot
from chat.webhooks import sign
from routes.models import CustomerReview, ReviewReplySettings

COLUMNS: Final = ("author", "rating", "text", "product", "date", "source")
REQUIRED: Final = ("author", "rating", "text", "date", "source")
MAX_ROWS: Final = 5000
MAX_TEXT: Final = 5000
MAX_BODY: Final = 64 * 1024


class ReviewsRefused(Exception):
    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class ReviewDraft:
    author: str
    rating: int
    text: str
    product: str
    written_on: date
    source: str

    def fingerprint(self) -> str:
        parts = (self.author, self.written_on.isoformat(), self.source, self.product, " ".join(self.text.split()))
        return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def _date(value: str) -> date | None:
    value = value.strip()
    try:
        parsed = parse_date(value)
    except ValueError:
        return None
    if parsed is None and len(value) == 10 and value[2] == "." and value[5] == ".":  # 31.12.2026
        try:
            parsed = parse_date(f"{value[6:]}-{value[3:5]}-{value[:2]}")
        except ValueError:
            return None
    return parsed


def review_parse(row: Mapping[str, Any], where: str) -> tuple[ReviewDraft | None, list[str]]:
    """One review's fields, checked: the draft, or the problems (each naming `where`)."""
    get = {key: str(row.get(key) if row.get(key) is not None else "").strip() for key in COLUMNS}
    problems = [_("%(w)s: поле «%(f)s» пустое.") % {"w": where, "f": key} for key in REQUIRED if not get[key]]
    rating = int(get["rating"]) if get["rating"].isdigit() else None
    if get["rating"] and (rating is None or not 1 <= rating <= 5):
        problems.append(_("%(w)s: оценка «%(v)s» — нужна цифра от 1 до 5.") % {"w": where, "v": get["rating"][:20]})
    written = _date(get["date"]) if get["date"] else None
    if get["date"] and written is None:
        problems.append(_("%(w)s: дата «%(v)s» не распознана (нужно ГГГГ-ММ-ДД или ДД.ММ.ГГГГ).")
                        % {"w": where, "v": get["date"][:20]})
    if len(get["text"]) > MAX_TEXT:
        problems.append(_("%(w)s: текст длиннее %(n)s знаков.") % {"w": where, "n": MAX_TEXT})
    for key, limit in (("author", 200), ("product", 300), ("source", 100)):
        if len(get[key]) > limit:
            problems.append(_("%(w)s: поле «%(f)s» длиннее %(n)s знаков.") % {"w": where, "f": key, "n": limit})
    if problems or rating is None or written is None:
        return None, problems
    return ReviewDraft(get["author"], rating, get["text"], get["product"], written, get["source"]), []


def csv_parse(data: bytes) -> list[ReviewDraft]:
    """Every review of the file, or ReviewsRefused with every problem found."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ReviewsRefused([_("Файл не в кодировке UTF-8 (байт %(n)s).") % {"n": exc.start}]) from exc
    if not text.strip():
        raise ReviewsRefused([_("Файл пуст.")])
    try:
        dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(text[:4096], delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    reader = csv.DictReader(io.StringIO(text), dialect=dialect)
    header = [name.strip().lower() for name in (reader.fieldnames or [])]
    missing = [name for name in REQUIRED if name not in header]
    if missing:
        names = {"c": ", ".join(missing), "all": ", ".join(COLUMNS)}
        raise ReviewsRefused([_("Нет столбцов: %(c)s. Нужны: %(all)s.") % names])
    reader.fieldnames = header
    drafts: list[ReviewDraft] = []
    problems: list[str] = []
    try:
        for number, row in enumerate(reader, start=2):
            if number - 1 > MAX_ROWS:
                raise ReviewsRefused([_("В файле больше %(n)s отзывов: разделите его.") % {"n": MAX_ROWS}])
            if None in row:
                problems.append(_("Строка %(n)s: лишние значения (больше столбцов, чем в заголовке).") % {"n": number})
                continue
            draft, found = review_parse(row, _("Строка %(n)s") % {"n": number})
            problems += found
            if draft is not None:
                drafts.append(draft)
    except csv.Error as exc:
        raise ReviewsRefused([_("Файл не читается как CSV: %(e)s.") % {"e": exc}]) from exc
    if problems:
        raise ReviewsRefused(problems)
    if not drafts:
        raise ReviewsRefused([_("В файле нет ни одного отзыва.")])
    return drafts


@dataclass(frozen=True)
class Imported:
    created: list[CustomerReview]
    skipped: int


def reviews_import(*, bot: Bot, drafts: list[ReviewDraft]) -> Imported:
    """All in one transaction: a failure leaves nothing of the file behind."""
    created: list[CustomerReview] = []
    with transaction.atomic():
        seen = set(CustomerReview.objects.filter(bot=bot, fingerprint__in=[d.fingerprint() for d in drafts])
                   .values_list("fingerprint", flat=True))
        for draft in drafts:
            key = draft.fingerprint()
            if key in seen:
                continue
            seen.add(key)
            created.append(CustomerReview.objects.create(
                bot=bot, author=draft.author, rating=draft.rating, text=draft.text, product=draft.product,
                written_on=draft.written_on, source=draft.source, fingerprint=key,
            ))
    return Imported(created=created, skipped=len(drafts) - len(created))


def intake_secret(bot: Bot) -> str:
    return ReviewReplySettings.objects.get_or_create(bot=bot)[0].intake_secret


def signature_valid(bot: Bot, body: bytes, header: str) -> bool:
    return bool(header) and hmac.compare_digest(sign(intake_secret(bot), body), header.strip())


def review_receive(*, bot: Bot, body: bytes) -> tuple[CustomerReview, bool]:
    """One review from a webhook body (already authenticated); (review, created). A review sent
    twice is the same row, and its run starts once (after commit)."""
    if len(body) > MAX_BODY:
        raise ReviewsRefused([_("Тело запроса больше %(n)s байт.") % {"n": MAX_BODY}])
    try:
        data = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ReviewsRefused([_("Тело запроса — не JSON в UTF-8.")]) from exc
    if not isinstance(data, dict):
        raise ReviewsRefused([_("Ожидался объект JSON с полями: %(all)s.") % {"all": ", ".join(COLUMNS)}])
    draft, problems = review_parse(data, _("Отзыв"))
    if draft is None:
        raise ReviewsRefused(problems)
    key = draft.fingerprint()
    try:
        with transaction.atomic():
            review = CustomerReview.objects.create(
                bot=bot, author=draft.author, rating=draft.rating, text=draft.text, product=draft.product,
                written_on=draft.written_on, source=draft.source, fingerprint=key,
            )
    except IntegrityError:
        return CustomerReview.objects.get(bot=bot, fingerprint=key), False
    from routes.tasks import review_reply_start

    transaction.on_commit(lambda: review_reply_start.delay(review.pk))
    return review, True
