"""Page text -> entry drafts: one or more chunks per section, each with its heading path and a link
to the nearest heading anchor.

Headings are hard boundaries even when a section is short: a chunk's citation link and heading
path must name the section its text really comes from. Inside a section paragraphs are packed up
to MAX_CHARS; a paragraph longer than that is cut at sentence ends, then at spaces, never inside a
word. Keys are url + heading path + ordinal, so a re-crawl updates the same rows in place.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from knowledge.extract import Block
from knowledge.services import EntryDraft, content_hash

MIN_CHARS = 500
MAX_CHARS = 1200
SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")


@dataclass
class Section:
    path: tuple[str, ...]
    anchor: str
    paragraphs: list[str] = field(default_factory=list)


def sections(blocks: list[Block]) -> list[Section]:
    """Group paragraphs under their heading path; the anchor is the deepest heading that has one."""
    stack: list[Block] = []
    result = [Section(path=(), anchor="")]
    for block in blocks:
        if block.level == 0:
            result[-1].paragraphs.append(block.text)
            continue
        while stack and stack[-1].level >= block.level:
            stack.pop()
        stack.append(block)
        anchor = next((heading.anchor for heading in reversed(stack) if heading.anchor), "")
        result.append(Section(path=tuple(heading.text for heading in stack), anchor=anchor))
    return [section for section in result if section.paragraphs]


def _split_words(text: str, limit: int) -> Iterator[str]:
    piece = ""
    for word in text.split(" "):
        if piece and len(piece) + 1 + len(word) > limit:
            yield piece
            piece = ""
        piece = f"{piece} {word}" if piece else word
        while len(piece) > limit:  # one "word" longer than a chunk (a URL, a hash): no better cut exists
            yield piece[:limit]
            piece = piece[limit:]
    if piece:
        yield piece


def _pieces(paragraph: str, limit: int) -> Iterator[str]:
    """A paragraph as pieces of at most `limit` characters, cut at sentence ends where possible."""
    if len(paragraph) <= limit:
        yield paragraph
        return
    for sentence in SENTENCE_END.split(paragraph):
        yield from _split_words(sentence, limit) if len(sentence) > limit else [sentence]


def _greedy(paragraphs: list[str], limit: int) -> list[str]:
    """Paragraphs stay whole and in order; the sentences of a long one are re-joined with spaces."""
    chunks: list[str] = []
    current = ""
    for paragraph in paragraphs:
        glue = "\n\n"
        for piece in _pieces(paragraph, limit):
            if current and len(current) + len(glue) + len(piece) > limit:
                chunks.append(current)
                current = ""
            current = f"{current}{glue}{piece}" if current else piece
            glue = " "
    if current:
        chunks.append(current)
    return chunks


def pack(paragraphs: list[str], limit: int = MAX_CHARS) -> list[str]:
    """Chunks of at most `limit` characters, balanced so a long section does not end in a crumb
    (1250 characters become two of ~625, not 1200 + 50), but never below MIN_CHARS per target."""
    total = sum(len(paragraph) + 2 for paragraph in paragraphs)
    count = -(-total // limit)
    target = min(limit, max(MIN_CHARS, int(total / count * 1.15)))
    balanced = _greedy(paragraphs, target)
    return balanced if len(balanced) <= count else _greedy(paragraphs, limit)


def chunk_key(url: str, path: tuple[str, ...], ordinal: int) -> str:
    """Stable and short (Entry.key is 500 chars, URLs can be 2000): a digest, readable prefix."""
    return f"page:{content_hash(url, *path, ordinal)[:40]}"


def page_drafts(*, url: str, title: str, blocks: list[Block]) -> list[EntryDraft]:
    drafts: list[EntryDraft] = []
    used: dict[tuple[str, ...], int] = {}  # a path can repeat on one page: ordinals continue
    for section in sections(blocks):
        link = f"{url}#{section.anchor}" if section.anchor else url
        for text in pack(section.paragraphs):
            ordinal = used.get(section.path, 0)
            used[section.path] = ordinal + 1
            drafts.append(EntryDraft(
                key=chunk_key(url, section.path, ordinal), title=title or url, text=text, url=link,
                heading_path=" / ".join(section.path),
            ))
    return drafts
