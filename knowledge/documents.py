"""Text out of uploaded files: PDF, DOCX, TXT and Markdown become heading-labelled chunks.

Everything here is pure (bytes in, chunks out, no database), so an import can extract the whole
file first and refuse it with a clear `DocumentError` before a single row is written.
"""

from __future__ import annotations

import codecs
import io
import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from itertools import groupby
from pathlib import PurePosixPath, PureWindowsPath

from django.conf import settings
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from knowledge.chunking import pack
from knowledge.exceptions import (
    DocumentCorrupt,
    DocumentEmpty,
    DocumentEncodingUnknown,
    DocumentEncrypted,
    DocumentHasNoText,
    DocumentTooLarge,
    DocumentUnsupported,
)

_OLD_FORMATS = {
    ".doc": gettext_lazy("Это старый формат Word: откройте файл и сохраните его как DOCX."),
    ".rtf": gettext_lazy("Откройте файл в Word и сохраните его как DOCX."),
    ".odt": gettext_lazy("Сохраните документ как DOCX (Файл → Сохранить как)."),
    ".xls": gettext_lazy("Таблицу вопросов и ответов загружайте как CSV (импорт вопросов и ответов)."),
    ".xlsx": gettext_lazy("Таблицу вопросов и ответов загружайте как CSV (импорт вопросов и ответов)."),
}


@dataclass(frozen=True)
class Block:
    """One paragraph (or table) of a document with the headings it sits under."""

    heading_path: tuple[str, ...]
    text: str
    anchor: str = ""


@dataclass(frozen=True)
class Chunk:
    """What becomes one Entry. `ordinal` counts chunks under the same heading path, from 1, so
    an edit in one section leaves every other section's keys (and rows) untouched."""

    heading_path: tuple[str, ...]
    text: str
    anchor: str
    ordinal: int


def document_name(filename: str) -> str:
    """The bare file name: browsers and scripts may send a path, Windows ones with backslashes."""
    name = PureWindowsPath(PurePosixPath(filename).name).name.strip()
    return name or "документ"


def extract_chunks(*, filename: str, data: bytes) -> list[Chunk]:
    """Read the whole file and cut it into chunks, or raise a `DocumentError` naming the file."""
    chunks = chunk_blocks(extract_blocks(filename=filename, data=data))
    if not chunks:
        raise DocumentEmpty(filename)
    return chunks


def extract_blocks(*, filename: str, data: bytes) -> list[Block]:
    limit = settings.UPLOAD_MAX_BYTES
    if len(data) > limit:
        raise DocumentTooLarge(filename, len(data), limit)
    suffix = PurePosixPath(filename.lower()).suffix
    reader = _READERS.get(suffix)
    if reader is None:
        raise DocumentUnsupported(filename, str(_OLD_FORMATS.get(suffix, "")))
    if not data.strip():
        raise DocumentEmpty(filename)
    return _without_nul(reader(filename, data))


def _without_nul(blocks: list[Block]) -> list[Block]:
    """PostgreSQL refuses NUL in text columns; odd PDF fonts and Word files can produce it."""
    cleaned = (
        Block(tuple(part.replace("\x00", "") for part in block.heading_path), block.text.replace("\x00", "").strip(),
              block.anchor)
        for block in blocks
    )
    return [block for block in cleaned if block.text]


# --- plain text and its encoding ------------------------------------------------------------

_CYRILLIC = re.compile(r"[а-яё]", re.IGNORECASE)
_LATIN = re.compile(r"[a-z]", re.IGNORECASE)
# The fifteen commonest Russian letters make up ~80% of any Russian text; a wrong single-byte
# guess permutes the alphabet and drops that share to about half.
_COMMON_RUSSIAN = frozenset("оеиантсрвлкмдпу")


def decode_text(filename: str, data: bytes) -> str:
    """UTF-8 (with or without BOM), UTF-16 with BOM, else the legacy Russian encodings.

    Valid UTF-8 is almost never produced by accident, so it wins outright. A single-byte
    encoding decodes any bytes at all, so cp1251 (Windows) and KOI8-R are both tried and the one
    that reads like Russian wins; text that reads like neither is refused, not stored garbled.
    """
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return _strict(filename, data, "utf-16")
    if data.startswith(codecs.BOM_UTF8):
        return _strict(filename, data[len(codecs.BOM_UTF8) :], "utf-8")
    if b"\x00" in data:
        raise DocumentUnsupported(filename, _("Похоже, это не текстовый файл."))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    candidates = [data.decode(encoding, errors="replace") for encoding in ("cp1251", "koi8_r")]
    scored = [(_russian_likeness(text), text) for text in candidates]
    score, best = max(scored, key=lambda pair: pair[0])
    if score < 0.3:
        raise DocumentEncodingUnknown(filename)
    return best


def _strict(filename: str, data: bytes, encoding: str) -> str:
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise DocumentEncodingUnknown(filename) from exc


def _russian_likeness(text: str) -> float:
    """About 0.8 for Russian: the share of common Russian letters, lowered by words that mix
    Cyrillic and Latin (a Western file read as cp1251) and by symbols. Control characters mean
    binary, not text."""
    if "\ufffd" in text or any(unicodedata.category(ch) == "Cc" and ch not in "\r\n\t\f" for ch in text):
        return 0.0
    letters = [ch for ch in text.lower() if _CYRILLIC.match(ch)]
    if not letters:
        return 0.0
    common = sum(ch in _COMMON_RUSSIAN for ch in letters) / len(letters)
    words = re.findall(r"[^\W\d_]+", text)
    mixed = sum(1 for word in words if _CYRILLIC.search(word) and _LATIN.search(word)) / len(words)
    # Box drawing and maths signs: what KOI8-R makes of cp1251 punctuation, or of binary.
    symbols = sum(unicodedata.category(ch) in ("So", "Sm") for ch in text) / max(1, len(text.split()))
    return common - mixed - symbols


def _paragraphs(text: str) -> list[str]:
    parts = re.split(r"\n\s*\n", text.replace("\r\n", "\n").replace("\r", "\n"))
    return [part.strip() for part in parts if part.strip()]


def _read_txt(filename: str, data: bytes) -> list[Block]:
    return [Block((), para) for para in _paragraphs(decode_text(filename, data))]


# --- Markdown ---------------------------------------------------------------------------------

_ATX = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)\s*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_THEMATIC_BREAK = re.compile(r"^ {0,3}([-*_])(?:\s*\1){2,}\s*$")
_EXPLICIT_ANCHOR = re.compile(r"\s*\{#([\w\-.:]+)\}\s*$")


class _Headings:
    """The current heading path. A heading closes every heading of its level or deeper."""

    def __init__(self) -> None:
        self._stack: list[tuple[int, str, str]] = []
        self._slugs: Counter[str] = Counter()

    def push(self, level: int, raw_title: str) -> None:
        title, anchor = _split_anchor(raw_title)
        if not anchor:
            anchor = self._unique(_slug(title))
        while self._stack and self._stack[-1][0] >= level:
            self._stack.pop()
        self._stack.append((level, title, anchor))

    def block(self, text: str) -> Block:
        anchor = self._stack[-1][2] if self._stack else ""
        return Block(tuple(title for _level, title, _anchor in self._stack), text, anchor)

    def _unique(self, slug: str) -> str:
        """GitHub's rule: the second «Доставка» heading is #доставка-1."""
        seen = self._slugs[slug]
        self._slugs[slug] += 1
        return f"{slug}-{seen}" if seen else slug


def _split_anchor(raw_title: str) -> tuple[str, str]:
    match = _EXPLICIT_ANCHOR.search(raw_title)
    if match:
        return raw_title[: match.start()].strip(), match.group(1)
    return raw_title.strip(), ""


def _slug(title: str) -> str:
    """The anchor GitHub, GitLab and MkDocs give a heading, so a published copy links straight to it."""
    return re.sub(r"[^\w\- ]", "", title.lower()).strip().replace(" ", "-")


_FRONT_MATTER = re.compile(r"\A---\r?\n.*?^---[ \t]*$\n?", re.DOTALL | re.MULTILINE)


def _without_front_matter(text: str) -> str:
    """YAML metadata (title, date, tags) at the top of a Markdown file is not knowledge."""
    return _FRONT_MATTER.sub("", text, count=1)


def _read_markdown(filename: str, data: bytes) -> list[Block]:
    headings = _Headings()
    blocks: list[Block] = []
    para: list[str] = []
    in_fence = False

    def flush() -> None:
        text = "\n".join(para).strip()
        if text:
            blocks.append(headings.block(text))
        para.clear()

    for line in _without_front_matter(decode_text(filename, data)).splitlines():
        if _FENCE.match(line):
            in_fence = not in_fence
        elif not in_fence and (atx := _ATX.match(line)):
            flush()
            headings.push(len(atx.group(1)), atx.group(2))
            continue
        elif not in_fence and len(para) == 1 and para[0].strip() and (setext := _SETEXT.match(line)):
            title = para.pop()
            headings.push(1 if setext.group(1).startswith("=") else 2, title)
            continue
        elif not in_fence and _THEMATIC_BREAK.match(line):
            flush()
            continue
        elif not in_fence and not line.strip():
            flush()
            continue
        para.append(line)
    flush()
    return blocks


# --- PDF --------------------------------------------------------------------------------------


def _read_pdf(filename: str, data: bytes) -> list[Block]:
    """One section per page, labelled «стр. N» with anchor `page=N`: browsers open a PDF link
    ending in #page=N on that page, and pages are the only structure every PDF has."""
    pages = _pdf_pages(filename, data)
    if not any(text.strip() for text in pages):
        raise DocumentHasNoText(filename)
    return [
        Block((f"стр. {number}",), para, f"page={number}")
        for number, text in enumerate(pages, start=1)
        for para in _paragraphs(_dehyphenate(text))
    ]


def _pdf_pages(filename: str, data: bytes) -> list[str]:
    from pypdf import PasswordType, PdfReader

    # pypdf quietly repairs broken files and would import half of a truncated one. The header may
    # follow some junk (readers accept it within the first 1024 bytes); the end marker may not.
    if b"%PDF-" not in data[:1024] or b"%%EOF" not in data[-2048:]:
        raise DocumentCorrupt(filename, "PDF")
    try:
        reader = PdfReader(io.BytesIO(data))
    except Exception as exc:
        raise DocumentCorrupt(filename, "PDF") from exc
    if reader.is_encrypted:
        # A PDF locked only against printing or editing opens with the empty password.
        try:
            opened = reader.decrypt("") != PasswordType.NOT_DECRYPTED
        except Exception as exc:  # an unknown cipher counts as locked
            raise DocumentEncrypted(filename) from exc
        if not opened:
            raise DocumentEncrypted(filename)
    try:
        return [page.extract_text() or "" for page in reader.pages]
    except Exception as exc:
        raise DocumentCorrupt(filename, "PDF") from exc


def _dehyphenate(text: str) -> str:
    """Rejoin words a PDF broke across lines («достав-\\nка»), so search finds them."""
    return re.sub(r"(?<=[^\W\d_])-\n(?=[a-zа-яё])", "", text)


# --- DOCX -------------------------------------------------------------------------------------

_HEADING_STYLE = re.compile(r"^(?:heading|заголовок)\s*(\d)$", re.IGNORECASE)
_TITLE_STYLES = {"title", "название", "заголовок"}


def _read_docx(filename: str, data: bytes) -> list[Block]:
    from docx import Document
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    if not data.startswith(b"PK"):
        raise DocumentCorrupt(filename, "DOCX")
    headings, blocks = _Headings(), []
    try:
        for item in Document(io.BytesIO(data)).iter_inner_content():
            if isinstance(item, Paragraph):
                text, level = item.text.strip(), _heading_level(item)
                if text and level is not None:
                    headings.push(level, text)
                elif text:
                    blocks.append(headings.block(text))
            elif isinstance(item, Table) and (table := _table_text(item)):
                blocks.append(headings.block(table))
    except Exception as exc:  # a zip that is not Word, a truncated file, broken XML
        raise DocumentCorrupt(filename, "DOCX") from exc
    # Word anchors are bookmarks, not heading slugs: a DOCX link has no #section part.
    return [Block(block.heading_path, block.text) for block in blocks]


def _heading_level(paragraph: object) -> int | None:
    """Heading level from the style or its ancestors («Заголовок 2» in a Russian Word), else from
    the outline level a custom heading style sets. Title is level 0: it sits above Heading 1."""
    style = getattr(paragraph, "style", None)
    while style is not None:
        name = (style.name or "").strip()
        if name.lower() in _TITLE_STYLES:
            return 0
        if match := _HEADING_STYLE.match(name):
            return int(match.group(1))
        if (level := _outline_level(style.element)) is not None:
            return level
        style = style.base_style
    return _outline_level(getattr(paragraph, "_p", None))


def _outline_level(element: object) -> int | None:
    from docx.oxml.ns import qn

    found = element.find(f".//{qn('w:outlineLvl')}") if element is not None else None  # type: ignore[attr-defined]
    value = found.get(qn("w:val")) if found is not None else None
    # Level 9 means "body text" in Word.
    return int(value) + 1 if value is not None and value.isdigit() and int(value) < 9 else None


def _table_text(table: object) -> str:
    """A table as «cell | cell» lines. Merged cells repeat in python-docx and are kept once."""
    lines = []
    for row in table.rows:  # type: ignore[attr-defined]
        cells, seen = [], set()
        for cell in row.cells:
            if id(cell._tc) in seen:
                continue
            seen.add(id(cell._tc))
            cells.append(" ".join(cell.text.split()))
        if any(cells):
            lines.append(" | ".join(cells))
    return "\n".join(lines)


_READERS: dict[str, Callable[[str, bytes], list[Block]]] = {
    ".pdf": _read_pdf,
    ".docx": _read_docx,
    ".txt": _read_txt,
    ".text": _read_txt,
    ".md": _read_markdown,
    ".markdown": _read_markdown,
}

# --- chunking ---------------------------------------------------------------------------------


def chunk_blocks(blocks: list[Block]) -> list[Chunk]:
    """Chunks never straddle a heading: the heading path is the chunk's label and its link
    anchor, so a short section stays a short chunk (a one-line «Оплата» section is the ideal
    search hit). Inside a section, paragraphs are packed into evenly sized chunks."""
    ordinals: Counter[tuple[str, ...]] = Counter()
    chunks = []
    for (path, anchor), group in groupby(blocks, key=lambda block: (block.heading_path, block.anchor)):
        for text in pack([block.text for block in group]):
            ordinals[path] += 1
            chunks.append(Chunk(path, text, anchor, ordinals[path]))
    return chunks
