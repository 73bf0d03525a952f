"""Page text -> entry drafts: one or more chunks per section, each with its heading path and a link
to the nearest heading anchor.

Headings are hard boundaries even when a section is short: a chunk's citation link and heading
path must name the section its text really comes from. Inside a section paragraphs are packed up
to MAX_CHARS; a paragraph longer than that is cut at line breaks, then sentence ends, then spaces,
never inside a word. Documents (documents.py) are packed by the same `pack`. Keys are url +
heading path + ordinal, so a re-crawl updates the same rows in place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from knowledge.drafts import EntryDraft, content_hash
from knowledge.extract import Block

# A chunk is what search returns and the model reads: big enough to carry a whole answer,
# small enough that the [n] source it is cited as points at one topic.
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


# Lines first, then sentence ends, then spaces: the coarsest cut that fits keeps the most meaning.
_CUTS = (("\n", re.compile(r"\n+")), (" ", SENTENCE_END), (" ", re.compile(r"\s+")))


def _pieces(text: str, limit: int, depth: int = 0) -> list[str]:
    """`text` as pieces of at most `limit` characters, each as long as the coarsest cut allows;
    only a "word" longer than a chunk (a URL, a hash) is cut inside, as no better cut exists."""
    if len(text) <= limit:
        return [text]
    if depth == len(_CUTS):
        return [text[start : start + limit] for start in range(0, len(text), limit)]
    joiner, pattern = _CUTS[depth]
    out: list[str] = []
    current = ""
    for piece in pattern.split(text):
        for part in _pieces(piece, limit, depth + 1):
            candidate = f"{current}{joiner}{part}" if current else part
            if current and len(candidate) > limit:
                out.append(current)
                candidate = part
            current = candidate
    if current:
        out.append(current)
    return out


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
