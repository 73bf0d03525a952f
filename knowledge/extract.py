"""HTML -> what the knowledge base keeps: a title, the main text as headings and paragraphs (so the
chunker can keep heading paths), the heading anchors, and the in-page links for the crawler.

trafilatura finds the main content and drops menus and footers, but it loses element ids; the
anchors come from a second, plain lxml parse of the same document, matched by heading text.
Nothing in here may raise on bad input: broken HTML yields fewer blocks, never an exception.

FAQ pages are read question by question: before trafilatura sees the page, a `<summary>` of a
`<details>`, a `<dt>`, and a paragraph that is only a bold question become headings one level
below the heading they sit under, so the chunker cuts one chunk per question with the question
in its heading path. Tables become one line per row, each cell named by its column header
(«Внутри МКАД: срок — на следующий день; стоимость — 350 ₽»), so a chunk cut between rows still
says what every value is.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from urllib.parse import urljoin, urlsplit, urlunsplit

import trafilatura
from lxml import etree, html

log = logging.getLogger("spravka.crawler")

HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
# Links to files the crawler never asks for: they would only come back as "не HTML".
SKIP_EXTENSIONS = re.compile(
    r"\.(jpe?g|png|gif|webp|svg|ico|bmp|tiff?|pdf|zip|rar|7z|gz|tar|mp[34]|avi|mov|mkv|webm|wav|ogg"
    r"|docx?|xlsx?|pptx?|odt|ods|exe|dmg|apk|css|js|json|xml|woff2?|ttf|eot)$",
    re.IGNORECASE,
)
SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Block:
    """One heading (level 1..6) or one paragraph-like piece of main text (level 0)."""

    text: str
    level: int = 0
    anchor: str = ""


@dataclass
class ExtractedPage:
    title: str = ""
    blocks: list[Block] = field(default_factory=list)
    links: list[str] = field(default_factory=list)
    noindex: bool = False
    nofollow: bool = False


def clean_text(text: str) -> str:
    """One line of text: collapsed whitespace, no NUL (PostgreSQL refuses it in text columns)."""
    return SPACE.sub(" ", text.replace("\x00", " ")).strip()


def normalize_url(url: str, base: str = "") -> str | None:
    """Absolute http(s) URL without fragment and default port, lowercase scheme and host; None for
    anything that is not a web address (mailto:, javascript:, garbage)."""
    try:
        parts = urlsplit(urljoin(base, url.strip()) if base else url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in {"http", "https"} or not parts.hostname:
        return None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    default = {"http": 80, "https": 443}[scheme]
    netloc = host if port in (None, default) else f"{host}:{port}"
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))


def looks_like_file(url: str) -> bool:
    """Links to images, documents, archives: the crawler does not ask for them at all."""
    return bool(SKIP_EXTENSIONS.search(urlsplit(url).path))


def site_key(url: str) -> str:
    """host[:port] without a leading "www.": shop.ru and www.shop.ru are one site."""
    netloc = urlsplit(url).netloc.lower()
    return netloc.removeprefix("www.")


def _decode(body: bytes, charset: str | None) -> str:
    if charset:
        try:
            return body.decode(charset, errors="replace")
        except LookupError:
            pass
    return str(trafilatura.utils.decode_file(body))


def _parse(text: str) -> html.HtmlElement | None:
    try:
        return html.document_fromstring(text)
    except (etree.ParserError, ValueError):
        return None


def _meta_robots(tree: html.HtmlElement) -> set[str]:
    values: set[str] = set()
    for meta in tree.iter("meta"):
        if str(meta.get("name", "")).lower() in {"robots", "spravkabot"}:
            values |= {part.strip().lower() for part in str(meta.get("content", "")).split(",")}
    return values


def _links(tree: html.HtmlElement, url: str) -> list[str]:
    base = url
    for element in tree.iter("base"):
        if element.get("href"):
            base = urljoin(url, str(element.get("href")))
            break
    found: dict[str, None] = {}
    for anchor in tree.iter("a"):
        href = anchor.get("href")
        if href and "nofollow" not in str(anchor.get("rel", "")).lower():
            normalized = normalize_url(str(href), base)
            if normalized:
                found[normalized] = None
    return list(found)


def _heading_anchor(heading: html.HtmlElement) -> str:
    """The id a link can jump to: on the heading, inside it (<a name>), or on its wrapping section."""
    if heading.get("id"):
        return str(heading.get("id"))
    for inner in heading.iter():
        if inner.get("id") or (inner.tag == "a" and inner.get("name")):
            return str(inner.get("id") or inner.get("name"))
    parent = heading.getparent()
    if parent is not None and parent.get("id") and len(parent) and parent[0] is heading:
        return str(parent.get("id"))
    return ""


def _anchors(tree: html.HtmlElement) -> dict[str, str]:
    anchors: dict[str, str] = {}
    for heading in tree.iter(*HEADINGS, "summary", "dt"):
        text = clean_text(heading.text_content())
        anchor = _heading_anchor(heading)
        if text and anchor:
            anchors.setdefault(text, anchor)
    return anchors


def _element_text(element: etree._Element) -> str:
    """Text of one trafilatura block; lists become bullet lines and tables one line per row."""
    if element.tag == "list":
        items = (clean_text("".join(item.itertext())) for item in element.iter("item"))
        return "\n".join(f"• {item}" for item in items if item)
    if element.tag == "table":
        rows = [[clean_text("".join(c.itertext())) for c in row.iter("cell")] for row in element.iter("row")]
        return table_text(rows, header=_has_header(element))
    return clean_text("".join(element.itertext()))


_EMPTY_CELL = frozenset({"", "-", "—", "–"})


def _has_header(table: etree._Element) -> bool:
    first = next(table.iter("row"), None)
    return first is not None and all(cell.get("role") == "head" for cell in first.iter("cell"))


def _label(header: str) -> str:
    """A column header as a label inside a line: «Стоимость» -> «стоимость», «СДЭК» stays."""
    return header[:1].lower() + header[1:] if header[1:2].islower() else header


def table_text(rows: list[list[str]], *, header: bool) -> str:
    """One line per row. With a header row: «first cell: header — cell; header — cell», empty
    cells left out; without one: the cells joined by « | »."""
    rows = [row for row in rows if any(cell not in _EMPTY_CELL for cell in row)]
    if not header or len(rows) < 2:
        return "\n".join(" | ".join(row) for row in rows)
    names, lines = rows[0], []
    for row in rows[1:]:
        pairs = [f"{_label(name)} — {cell}" for name, cell in zip(names[1:], row[1:], strict=False)
                 if cell not in _EMPTY_CELL]
        lines.append(f"{row[0]}: {'; '.join(pairs)}" if pairs else row[0])
    return "\n".join(lines)


def _heading_level(rend: str) -> int:
    match = re.fullmatch(r"h([1-6])", rend)
    return int(match.group(1)) if match else 2


def _blocks(body: etree._Element, anchors: dict[str, str]) -> list[Block]:
    blocks = []
    for element in body:
        text = _element_text(element)
        if not text:
            continue
        if element.tag == "head":
            level = _heading_level(str(element.get("rend", "")))
            blocks.append(Block(text=text, level=level, anchor=anchors.get(text, "")))
        else:
            blocks.append(Block(text=text))
    return blocks


_QUESTION_END = re.compile(r"\?\s*$")


def faq_headings(tree: html.HtmlElement) -> int:
    """Turn FAQ questions into headings in place, one level below the heading above each; returns
    how many. A `<details>` becomes a section with its `<summary>` as heading, a `<dt>` a heading
    (its `<dd>` a plain block), a paragraph whose whole text is bold and ends with "?" a heading."""
    level, targets = 1, []
    for element in tree.iter():
        tag = element.tag if isinstance(element.tag, str) else ""
        if tag in HEADINGS:
            level = int(tag[1])
        elif tag in {"summary", "dt"} or (tag in {"p", "div"} and _bold_question(element)):
            targets.append((element, min(6, level + 1)))
    for element, heading_level in targets:
        parent = element.getparent()
        if element.tag == "summary" and parent is not None and parent.tag == "details":
            parent.tag = "section"
        element.tag = f"h{heading_level}"
    for dd in tree.iter("dd"):
        dd.tag = "div"
    return len(targets)


def _bold_question(element: html.HtmlElement) -> bool:
    text = clean_text(element.text_content())
    if not text or len(text) > 300 or not _QUESTION_END.search(text) or len(element) == 0:
        return False
    bold = "".join(clean_text(child.text_content()) for child in element if child.tag in {"strong", "b"})
    return bold.replace(" ", "") == text.replace(" ", "")


def _trafilatura(text: str | html.HtmlElement, url: str, *, fast: bool) -> tuple[str, etree._Element | None]:
    try:
        document = trafilatura.bare_extraction(
            text, url=url, fast=fast, favor_recall=True, include_formatting=True, include_tables=True,
            include_comments=False, with_metadata=True,
        )
    except Exception:  # trafilatura on hostile markup: log it, the page just has no text
        log.warning("trafilatura failed on %s", url, exc_info=True)
        return "", None
    if document is None or isinstance(document, dict) or document.body is None:
        return "", None
    return clean_text(document.title or ""), document.body


def _main_content(text: str, url: str) -> tuple[str, etree._Element | None]:
    """trafilatura's own extractor first: its fallbacks (readability, jusText) often find a bit more
    text but flatten headings and tables into paragraphs, and headings are what chunks hang on.
    FAQ questions are made headings first (`faq_headings`), on a parse of its own."""
    source: str | html.HtmlElement = text
    tree = _parse(text)
    if tree is not None and faq_headings(tree):
        source = html.tostring(tree, encoding="unicode")
    title, body = _trafilatura(source, url, fast=True)
    if body is None or not "".join(body.itertext()).strip():
        title, body = _trafilatura(source, url, fast=False)
    return title, body


def html_extract(body: bytes, *, url: str, charset: str | None = None) -> ExtractedPage:
    text = _decode(body, charset).replace("\x00", "")
    tree = _parse(text)
    if tree is None:
        return ExtractedPage()
    robots = _meta_robots(tree)
    page = ExtractedPage(noindex="noindex" in robots or "none" in robots,
                         nofollow="nofollow" in robots or "none" in robots)
    if not page.nofollow:
        page.links = _links(tree, url)
    if page.noindex:
        return page
    title, main = _main_content(text, url)
    page.title = title or clean_text(tree.findtext(".//title") or "")
    if main is not None:
        page.blocks = _blocks(main, _anchors(tree))
    return page
