"""Imports: documents, question/answer pairs and passage files become entries.

Every import reads and validates the whole input before it writes anything, then writes in one
transaction: a bad file or a bad row leaves the knowledge base exactly as it was. Re-importing
the same input updates rows by their stable key and never creates twins. Embeddings are not
computed here; the caller runs `embed_pending` (commands do it synchronously, uploads in Celery).
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass, field
from typing import Any, TypeVar

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import transaction
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, gettext_noop

from bots.models import Bot
from core.texts import Stored, stored
from core.validators import validate_link
from knowledge.documents import Chunk, decode_text, document_name, extract_chunks
from knowledge.drafts import KEY_MAX, QA_SOURCE_TITLE, EntryDraft, Outcome, content_hash, question_key
from knowledge.exceptions import DocumentEmpty, DocumentTooLarge, KnowledgeError, QAInvalid, RowsInvalid
from knowledge.models import Entry, Source
from knowledge.runs import run_imported
from knowledge.services import entries_deactivate, entries_replace_in_bulk, entry_upsert

T = TypeVar("T")

QA_DEFAULT_WEIGHT = 0.8
QUESTION_MAX = 1000
ANSWER_MAX = 5000


@dataclass
class ImportResult:
    """What one import did, in the same words the command and the admin print."""

    source: Source
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    deactivated: int = 0

    def count(self, outcome: Outcome) -> None:
        setattr(self, outcome, getattr(self, outcome) + 1)

    @property
    def total(self) -> int:
        return self.created + self.updated + self.unchanged

    def summary(self) -> str:
        return _("создано %(created)s, обновлено %(updated)s, без изменений %(unchanged)s, "
                 "отключено %(deactivated)s") % {
            "created": self.created, "updated": self.updated, "unchanged": self.unchanged,
            "deactivated": self.deactivated}


# --- documents --------------------------------------------------------------------------------


def document_import(*, bot: Bot, filename: str, data: bytes, url: str = "") -> ImportResult:
    """Store a document as chunks of one `Source(kind=document, title=<file name>)`.

    Links: a document usually has no address a visitor could open, so a chunk's `url` stays
    empty and the answer chain labels the source with `title` (the file name) and `heading_path`
    («Условия доставки.pdf › стр. 2»). When the owner says where the file is published (`url`),
    chunks link there, with the section anchor (#page=2 for PDF, the heading slug for Markdown).

    Chunk keys are «file › heading path #ordinal», so a changed file updates the sections that
    changed in place, and chunks whose section is gone are switched off (kept, restorable).
    """
    name = document_name(filename)
    link = _checked_url(url, what=_("Адрес документа «%(name)s»") % {"name": name})
    drafts = [_chunk_draft(name, chunk, link) for chunk in extract_chunks(filename=name, data=data)]
    with transaction.atomic():
        _lock_bot(bot)
        source, _created = Source.objects.get_or_create(bot=bot, kind=Source.Kind.DOCUMENT, title=name[:300])
        if link and source.url != link:
            source.url = link
            source.save(update_fields=["url"])
        result = _replace_entries(bot=bot, source=source, drafts=drafts)
        _record_run(result, message=stored(gettext_noop("Документ «%(name)s»"), name=name))
    return result


def _chunk_draft(filename: str, chunk: Chunk, url: str) -> EntryDraft:
    path = " › ".join(chunk.heading_path)
    key = f"{filename} › {path} #{chunk.ordinal}" if path else f"{filename} #{chunk.ordinal}"
    if len(key) > KEY_MAX:
        # Keep the key unique when a long file name or heading path has to be shortened.
        key = f"{key[: KEY_MAX - 60]}…{_digest(key)[:40]} #{chunk.ordinal}"
    link = f"{url}#{chunk.anchor}" if url and chunk.anchor else url
    return EntryDraft(key=key, title=filename, text=chunk.text, url=link, heading_path=path)


def _replace_entries(*, bot: Bot, source: Source, drafts: list[EntryDraft]) -> ImportResult:
    """The drafts become the source's whole content: upsert each, switch off the rest."""
    result = ImportResult(source=source)
    for draft in drafts:
        _entry, outcome = entry_upsert(bot=bot, source=source, draft=draft)
        result.count(outcome)
    keep = {draft.key for draft in drafts}
    stale = Entry.objects.filter(bot=bot, source=source, active=True).exclude(key__in=keep)
    result.deactivated = entries_deactivate(entries=stale)
    return result


# --- question / answer pairs ------------------------------------------------------------------


def qa_add(*, bot: Bot, question: str, answer: str, weight: float = QA_DEFAULT_WEIGHT, url: str = "") -> Entry:
    """Add or update (by question) one pair the owner typed. The same question asked with other
    case, punctuation or «ё» updates the existing pair instead of competing with it."""
    question, answer, url = question.strip(), answer.strip(), url.strip()
    problems = qa_problems(question=question, answer=answer, weight=weight, url=url)
    if problems:
        raise QAInvalid(problems)
    with transaction.atomic():
        _lock_bot(bot)
        entry, _outcome = entry_upsert(
            bot=bot, source=_qa_source(bot), draft=_qa_draft(question, answer, weight, url)
        )
    return entry


def qa_import_csv(*, bot: Bot, data: bytes, filename: str = "CSV") -> ImportResult:
    """Import a CSV of pairs: header `question,answer[,weight][,url]` or `вопрос;ответ[;вес][;ссылка]`.
    All rows are checked first; one bad row and nothing is imported, with every bad row listed.
    Pairs not in the file are left alone: a CSV adds and updates, it does not replace pairs typed
    by hand (they share one source, so a CSV row updates a typed pair with the same question)."""
    name = document_name(filename)
    rows = _qa_rows(filename=name, data=data)
    problems = [_line(row.line, reason) for row in rows for reason in row.problems]
    if problems:
        raise RowsInvalid(_file(name), problems)
    with transaction.atomic():
        _lock_bot(bot)
        result = ImportResult(source=_qa_source(bot))
        for row in rows:
            draft = _qa_draft(row.question, row.answer, row.weight, row.url)
            _entry, outcome = entry_upsert(bot=bot, source=result.source, draft=draft)
            result.count(outcome)
        _record_run(result, message=stored(gettext_noop("Вопросы и ответы из «%(name)s»"), name=name))
    return result


def qa_problems(*, question: str, answer: str, weight: float, url: str) -> list[str]:
    """Why a pair cannot be stored, in words for the owner; empty when it can."""
    problems = []
    if not question:
        problems.append(_("пустой вопрос"))
    elif not question_key(question):
        problems.append(_("в вопросе нет ни одного слова"))
    elif len(question) > QUESTION_MAX:
        problems.append(_("вопрос длиннее %(max)s символов") % {"max": QUESTION_MAX})
    if not answer:
        problems.append(_("пустой ответ"))
    elif len(answer) > ANSWER_MAX:
        problems.append(_("ответ длиннее %(max)s символов (сейчас %(n)s)") % {"max": ANSWER_MAX, "n": len(answer)})
    if not 0.0 <= weight <= 1.0:
        problems.append(_("вес должен быть от 0 до 1"))
    if url and not _url_ok(url):
        problems.append(_("ссылка должна быть полным адресом: https://…"))
    return problems


def _qa_draft(question: str, answer: str, weight: float, url: str) -> EntryDraft:
    return EntryDraft(
        key=question_key(question), title=question, text=answer, url=url, kind=Entry.Kind.QA, weight=weight
    )


def _qa_source(bot: Bot) -> Source:
    source, _created = Source.objects.get_or_create(bot=bot, kind=Source.Kind.MANUAL, title=QA_SOURCE_TITLE)
    return source


# --- passages (JSON Lines) --------------------------------------------------------------------


def passages_load(*, bot: Bot, filename: str, data: bytes) -> ImportResult:
    """Load `{"id", "title", "text", "url"}` lines as chunks of a `Source(kind=manual)` named
    after the file. Built for 100k lines: validated in memory, written with bulk queries in
    batches, history included (`services.entries_replace_in_bulk`). The file is the source's whole
    content: ids no longer in it are switched off."""
    name = document_name(filename)
    drafts = _passage_drafts(filename=name, data=data)
    with transaction.atomic():
        _lock_bot(bot)
        source, _created = Source.objects.get_or_create(bot=bot, kind=Source.Kind.MANUAL, title=name[:300])
        result = ImportResult(source, **entries_replace_in_bulk(bot=bot, source=source, drafts=drafts))
        _record_run(result, message=stored(gettext_noop("Фрагменты из «%(name)s»"), name=name))
    return result


# --- reading a Q/A CSV -----------------------------------------------------------------------

_QA_COLUMNS = {
    "question": "question", "вопрос": "question", "answer": "answer", "ответ": "answer",
    "weight": "weight", "вес": "weight", "url": "url", "ссылка": "url", "link": "url",
}
_QA_HEADER_HINT = gettext_lazy("первая строка — заголовок «вопрос;ответ;вес;ссылка» или «question,answer,weight,url»")


def _line(number: int, problem: object) -> str:
    return _("строка %(n)s: %(problem)s") % {"n": number, "problem": problem}


def _file(name: str) -> str:
    return _("Файл «%(name)s»") % {"name": name}


@dataclass
class QARow:
    line: int
    question: str = ""
    answer: str = ""
    weight: float = QA_DEFAULT_WEIGHT
    url: str = ""
    problems: list[str] = field(default_factory=list)


def _qa_rows(*, filename: str, data: bytes) -> list[QARow]:
    """Rows with their first line number (a quoted answer may span lines) and what is wrong with
    each. Excel in Russia saves «;»-separated cp1251, «CSV UTF-8» adds a BOM: all are accepted."""
    if len(data) > settings.UPLOAD_MAX_BYTES:
        raise DocumentTooLarge(filename, len(data), settings.UPLOAD_MAX_BYTES)
    text = decode_text(filename, data)
    body = text.lstrip("\r\n")
    if not body.strip():
        raise DocumentEmpty(filename)
    line = text[: len(text) - len(body)].count("\n") + 1  # blank lines above the header still count
    delimiter, columns = _qa_header(filename, body, line)
    reader = csv.reader(io.StringIO(body, newline=""), delimiter=delimiter)
    next(reader)
    rows, offset, row_start = [], line - 1, reader.line_num + 1
    for cells in reader:
        if any(cell.strip() for cell in cells):
            rows.append(_qa_row(offset + row_start, cells, columns, delimiter))
        row_start = reader.line_num + 1
    if not rows:
        raise RowsInvalid(_file(filename), [_("в файле только заголовок, нет ни одной пары")])
    _mark_repeated_questions(rows)
    return rows


def _qa_header(filename: str, text: str, line: int) -> tuple[str, list[str]]:
    """The delimiter is the one that splits the header into known column names."""
    first_line = text.splitlines()[0]
    for delimiter in (";", ",", "\t"):
        names = [name.strip().lower() for name in next(csv.reader([first_line], delimiter=delimiter))]
        columns = [_QA_COLUMNS.get(name, "") for name in names]
        if "question" in columns and "answer" in columns:
            unknown = [name for name, column in zip(names, columns, strict=True) if not column and name]
            if unknown:
                problem = _("неизвестный столбец «%(name)s» (%(hint)s)") % {"name": unknown[0], "hint": _QA_HEADER_HINT}
                raise RowsInvalid(_file(filename), [_line(line, problem)])
            return delimiter, columns
    problem = _("нет столбцов «вопрос» и «ответ» (%(hint)s)") % {"hint": _QA_HEADER_HINT}
    raise RowsInvalid(_file(filename), [_line(line, problem)])


def _qa_row(line: int, cells: list[str], columns: list[str], delimiter: str) -> QARow:
    values = {column: cell.strip() for column, cell in zip(columns, cells, strict=False) if column}
    row = QARow(line=line, question=values.get("question", ""), answer=values.get("answer", ""),
                url=values.get("url", ""))
    if any(cell.strip() for cell in cells[len(columns) :]):
        row.problems.append(
            _("лишние ячейки (%(cells)s вместо %(columns)s) — если в тексте есть «%(delimiter)s», "
              "возьмите его в кавычки") % {"cells": len(cells), "columns": len(columns), "delimiter": delimiter}
        )
    raw_weight = values.get("weight", "").replace(",", ".")
    if raw_weight:
        try:
            row.weight = float(raw_weight)
        except ValueError:
            row.weight = math.nan
        if not math.isfinite(row.weight):
            row.problems.append(_("вес «%(weight)s» — не число") % {"weight": values["weight"]})
            row.weight = QA_DEFAULT_WEIGHT
    row.problems += qa_problems(question=row.question, answer=row.answer, weight=row.weight, url=row.url)
    return row


def _mark_repeated_questions(rows: list[QARow]) -> None:
    """Two rows with one question would silently overwrite each other: make the owner choose."""
    first_line: dict[str, int] = {}
    for row in rows:
        key = question_key(row.question)
        if key and key in first_line:
            row.problems.append(_("вопрос повторяет строку %(n)s") % {"n": first_line[key]})
        first_line.setdefault(key, row.line)


# --- reading passages in bulk ------------------------------------------------------------------

_PASSAGE_FIELDS = ("id", "title", "text", "url")


def _passage_drafts(*, filename: str, data: bytes) -> list[EntryDraft]:
    """Every line checked before anything is written; ids must be unique within the file."""
    drafts: list[EntryDraft] = []
    problems: list[str] = []
    first_line: dict[str, int] = {}
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        draft = _passage_draft(raw, first=number == 1)
        if isinstance(draft, str):
            problems.append(_line(number, draft))
        elif draft.key in first_line:
            problems.append(_line(number, _("id «%(id)s» уже был в строке %(n)s") % {
                "id": draft.key, "n": first_line[draft.key]}))
        else:
            first_line[draft.key] = number
            drafts.append(draft)
    if problems:
        raise RowsInvalid(_file(filename), problems)
    if not drafts:
        raise DocumentEmpty(filename)
    return drafts


def _passage_draft(raw: bytes, *, first: bool) -> EntryDraft | str:
    """A draft, or the reason the line is bad."""
    try:
        item: Any = json.loads(raw.decode("utf-8-sig" if first else "utf-8"))
    except UnicodeDecodeError:
        return _("текст не в кодировке UTF-8")
    except json.JSONDecodeError as exc:
        return _("неверный JSON (символ %(n)s)") % {"n": exc.colno}
    if not isinstance(item, dict):
        return _("ожидается объект {\"id\", \"title\", \"text\", \"url\"}")
    for name in ("id", "text"):
        if name not in item:
            return _("нет поля «%(name)s»") % {"name": name}
    if not isinstance(item["id"], str | int) or isinstance(item["id"], bool):
        return _("поле «id» должно быть строкой или числом")
    wrong = [name for name in _PASSAGE_FIELDS[1:] if not isinstance(item.get(name, ""), str)]
    if wrong:
        return _("поле «%(name)s» должно быть строкой") % {"name": wrong[0]}
    key, text = str(item["id"]).strip(), item["text"].replace("\x00", " ").strip()
    if not key or not text:
        return _("пустое поле «%(name)s»") % {"name": "id" if not key else "text"}
    if len(key) > KEY_MAX:
        return _("id длиннее %(max)s символов") % {"max": KEY_MAX}
    url = item.get("url", "").strip()
    try:
        validate_link(url)
    except ValidationError as exc:
        return _("поле «url»: %(error)s") % {"error": " ".join(exc.messages)}
    return EntryDraft(key=key, title=item.get("title", "").strip(), text=text, url=url)


# --- shared -----------------------------------------------------------------------------------


def _lock_bot(bot: Bot) -> None:
    """Serialise imports into one bot: two uploads of the same file at once would otherwise both
    create its Source. Must be called inside the import's transaction."""
    Bot.objects.select_for_update().filter(pk=bot.pk).exists()


def _record_run(result: ImportResult, *, message: Stored) -> None:
    """A finished run row, so the sources page shows imports beside crawls (runs.py)."""
    run_imported(source=result.source, created=result.created, updated=result.updated,
                 deactivated=result.deactivated, unchanged=result.unchanged, message=message)


def _checked_url(url: str, *, what: str) -> str:
    url = url.strip()
    if url and not _url_ok(url):
        raise KnowledgeError(_("%(what)s должен быть полным адресом, например https://shop.example/files/") % {
            "what": what})
    return url


def _url_ok(url: str) -> bool:
    try:
        URLValidator(schemes=["http", "https"])(url)
    except ValidationError:
        return False
    return len(url) <= 2000


def _digest(text: str) -> str:
    return content_hash(text)
