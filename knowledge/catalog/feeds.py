"""Reading a product feed: Yandex Market YML (`yml_catalog/shop/categories`, `offers/offer`) or a CSV
with named columns, into offer drafts the import stores.

What must stay true:
- XML is parsed by lxml with entities never resolved, no DTD loaded, no network, no huge trees; a
  document that declares entities of its own (the "billion laughs") is refused outright.
- Nothing is guessed: an offer without an id, a name or a readable price, or with a price below
  zero, is skipped and named in `problems`; a feed with no usable offer is an error.
- Every text is one clean line (descriptions: plain text, no markup), bounded; links only http(s).
- What is wrong is said to the owner as a stored text (core/texts.py): kept untranslated on the
  import's row and shown in the reader's language.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from dataclasses import asdict, dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any, Final, Literal

from django.utils.translation import gettext_noop
from lxml import etree
from lxml import html as lxml_html

from core.texts import Stored, Text, shown, stored

FeedKind = Literal["yml", "csv"]
MAX_PROBLEMS: Final = 20
_CONTROL: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")
_TRUE: Final = frozenset({"true", "1", "yes", "да", "в наличии", "+"})
_FALSE: Final = frozenset({"false", "0", "no", "нет", "нет в наличии", "-"})
_MAX_PRICE: Final = Decimal("999999999999.99")
NO_ID: Final = gettext_noop("нет id")
NO_NAME: Final = gettext_noop("нет названия")
REPEATED_ID: Final = gettext_noop("id повторяется")
NOT_A_NUMBER: Final = gettext_noop("цена «%(price)s» — не число")


class FeedError(Exception):
    """The feed cannot be read at all; `text` (a stored text) says why, for the shop owner, and
    `str()` is it in the active language."""

    def __init__(self, text: Text) -> None:
        super().__init__(text)
        self.text = text

    def __str__(self) -> str:
        return shown(self.text)


@dataclass(frozen=True)
class OfferDraft:
    offer_id: str
    name: str
    price: Decimal
    old_price: Decimal | None = None
    currency: str = "RUB"
    available: bool = True
    url: str = ""
    picture: str = ""
    category: str = ""
    vendor: str = ""
    description: str = ""
    params: dict[str, str] = field(default_factory=dict)

    def content_hash(self) -> str:
        data = {k: str(v) if isinstance(v, Decimal) else v for k, v in asdict(self).items()}
        return hashlib.sha256(json.dumps(data, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


@dataclass
class Parsed:
    offers: list[OfferDraft]
    skipped: int = 0
    problems: list[Stored] = field(default_factory=list)

    def skip(self, where: Stored, why: Text) -> None:
        self.skipped += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(stored(gettext_noop("%(where)s: %(why)s"), where=where, why=why))


def feed_kind(data: bytes, name: str = "") -> FeedKind:
    """YML when the bytes start like XML, CSV otherwise: the content decides, not the file name
    (a price list saved as .xml is still a CSV, a PNG is neither and says so)."""
    head = data[:200].lstrip(b"\xef\xbb\xbf \t\r\n")
    return "yml" if head.startswith(b"<") else "csv"


def parse_feed(data: bytes, *, kind: FeedKind | None = None, name: str = "") -> Parsed:
    kind = kind or feed_kind(data, name)
    parsed = parse_yml(data) if kind == "yml" else parse_csv(data)
    if not parsed.offers:
        if parsed.problems:
            raise FeedError(stored(gettext_noop("в фиде нет ни одного товара, который можно показать (%(problems)s)"),
                                   problems=parsed.problems[:3]))
        raise FeedError(stored(gettext_noop("в фиде нет ни одного товара, который можно показать")))
    return parsed


# --- YML -----------------------------------------------------------------------------------------


def _xml(data: bytes) -> Any:
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False,
                             dtd_validation=False, remove_comments=True, remove_pis=True)
    try:
        root = etree.fromstring(data, parser=parser)
    except etree.XMLSyntaxError as exc:
        raise FeedError(stored(gettext_noop("фид не читается как XML: %(error)s"), error=str(exc)[:200])) from exc
    if root is None:
        raise FeedError(stored(gettext_noop("фид пустой")))
    dtd = root.getroottree().docinfo.internalDTD
    if dtd is not None and any(True for _entity in dtd.iterentities()):
        raise FeedError(stored(gettext_noop(
            "в фиде объявлены свои сущности (<!ENTITY>): такие фиды не читаем, это путь для атак")))
    return root


def parse_yml(data: bytes) -> Parsed:
    root = _xml(data)
    if not isinstance(root.tag, str) or root.tag != "yml_catalog":
        raise FeedError(stored(gettext_noop("это XML, но не фид YML: корневой элемент должен быть <yml_catalog>")))
    shop = root.find("shop")
    if shop is None:
        raise FeedError(stored(gettext_noop("в фиде нет раздела <shop>")))
    categories = _categories(shop)
    parsed = Parsed(offers=[])
    seen: set[str] = set()
    offers = shop.find("offers")
    for number, offer in enumerate(offers.iterfind("offer") if offers is not None else [], start=1):
        draft, why = _yml_offer(offer, categories)
        offer_id = draft_id(offer)
        where = (stored(gettext_noop("товар %(id)s"), id=offer_id) if offer_id
                 else stored(gettext_noop("товар №%(n)s"), n=number))
        if draft is None:
            parsed.skip(where, why)
        elif draft.offer_id in seen:
            parsed.skip(where, stored(REPEATED_ID))
        else:
            seen.add(draft.offer_id)
            parsed.offers.append(draft)
    return parsed


def draft_id(offer: Any) -> str:
    return _line(offer.get("id") or "", 80)


def _categories(shop: Any) -> dict[str, str]:
    """id -> "Parent / Child" names."""
    raw: dict[str, tuple[str, str]] = {}
    block = shop.find("categories")
    for category in block.iterfind("category") if block is not None else []:
        raw[_line(category.get("id") or "", 80)] = (_line(category.text or "", 200),
                                                    _line(category.get("parentId") or "", 80))
    names: dict[str, str] = {}
    for cid in raw:
        chain, current, hops = [], cid, 0
        while current in raw and hops < 10:
            chain.append(raw[current][0])
            current, hops = raw[current][1], hops + 1
        names[cid] = " / ".join(reversed([name for name in chain if name]))
    return names


def _yml_offer(offer: Any, categories: dict[str, str]) -> tuple[OfferDraft | None, Text]:
    offer_id = draft_id(offer)
    if not offer_id:
        return None, stored(NO_ID)

    def text(tag: str, limit: int = 500) -> str:
        return _line(offer.findtext(tag) or "", limit)

    name = text("name") or " ".join(part for part in (text("typePrefix"), text("vendor"), text("model")) if part)
    if not name:
        return None, stored(NO_NAME)
    price, why = _price(offer.findtext("price"))
    if price is None:
        return None, why
    old_price, _why = _price(offer.findtext("oldprice"))
    params: dict[str, str] = {}
    for param in offer.iterfind("param"):
        key = _line(param.get("name") or "", 100)
        if key and len(params) < 50:
            unit = _line(param.get("unit") or "", 20)
            params[key] = _line(f"{param.text or ''} {unit}".strip(), 200)
    return OfferDraft(
        offer_id=offer_id, name=name, price=price, old_price=old_price if old_price and old_price > price else None,
        currency=text("currencyId", 8) or "RUB", available=_available(offer.get("available"), default=True),
        url=_link(text("url", 2000)), picture=_link(text("picture", 2000)),
        category=categories.get(text("categoryId", 80), ""), vendor=text("vendor", 200),
        description=_plain(offer.findtext("description") or ""), params=params,
    ), ""


# --- CSV -----------------------------------------------------------------------------------------

_COLUMNS: Final = {
    "id": ("id", "offer_id", "артикул", "sku"), "name": ("name", "название", "наименование", "title"),
    "price": ("price", "цена"), "oldprice": ("oldprice", "old_price", "старая цена"),
    "currency": ("currency", "currencyid", "валюта"), "url": ("url", "ссылка", "link"),
    "picture": ("picture", "image", "картинка", "фото"), "category": ("category", "категория"),
    "vendor": ("vendor", "brand", "производитель", "бренд"), "available": ("available", "в наличии", "наличие"),
    "description": ("description", "описание"),
}


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1251", errors="replace")


def parse_csv(data: bytes) -> Parsed:
    text = _decode(data)
    if "\x00" in text[:4096]:
        raise FeedError(stored(gettext_noop("это не CSV: в файле двоичные данные")))
    sample = text[:8192]
    try:
        dialect: Any = csv.Sniffer().sniff(sample, delimiters=",;\t")
    except csv.Error:
        dialect = csv.excel
    reader = csv.reader(io.StringIO(text), dialect)
    header = [_line(cell, 100).casefold() for cell in next(reader, [])]
    where = {key: next((header.index(a) for a in aliases if a in header), None) for key, aliases in _COLUMNS.items()}
    missing = [key for key in ("id", "name", "price") if where[key] is None]
    if missing:
        raise FeedError(stored(gettext_noop("в первой строке CSV нет столбцов: %(columns)s (нужны id, name, price)"),
                               columns=", ".join(missing)))
    parsed = Parsed(offers=[])
    seen: set[str] = set()
    try:
        for line_number, row in enumerate(reader, start=2):
            if not any(cell.strip() for cell in row):
                continue

            def cell(key: str, limit: int = 500, row: list[str] = row) -> str:
                index = where[key]
                return _line(row[index], limit) if index is not None and index < len(row) else ""

            offer_id, name = cell("id", 80), cell("name")
            price, why = _price(cell("price", 40))
            label = stored(gettext_noop("строка %(n)s"), n=line_number)
            if not offer_id or not name or price is None:
                parsed.skip(label, why or stored(NO_ID if not offer_id else NO_NAME))
                continue
            if offer_id in seen:
                parsed.skip(label, stored(REPEATED_ID))
                continue
            seen.add(offer_id)
            old_price, _why = _price(cell("oldprice", 40))
            parsed.offers.append(OfferDraft(
                offer_id=offer_id, name=name, price=price,
                old_price=old_price if old_price and old_price > price else None,
                currency=cell("currency", 8) or "RUB", available=_available(cell("available", 40), default=True),
                url=_link(cell("url", 2000)), picture=_link(cell("picture", 2000)), category=cell("category", 300),
                vendor=cell("vendor", 200), description=_plain(cell("description", 20000)),
            ))
    except csv.Error as exc:
        raise FeedError(stored(gettext_noop("CSV не читается: %(error)s"), error=str(exc)[:200])) from exc
    return parsed


# --- values --------------------------------------------------------------------------------------


def _line(value: str, limit: int) -> str:
    text = " ".join(_CONTROL.sub(" ", value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _plain(value: str, limit: int = 3000) -> str:
    """A description as plain text: YML allows CDATA with HTML inside."""
    if "<" in value:
        try:
            value = lxml_html.fromstring(f"<div>{value}</div>").text_content()
        except (etree.ParserError, ValueError):
            value = re.sub(r"<[^>]*>", " ", value)
    return _line(value, limit)


def _price(value: str | None) -> tuple[Decimal | None, Text]:
    text = (value or "").strip().replace("\u00a0", "").replace(" ", "").replace(",", ".")
    if not text:
        return None, stored(gettext_noop("нет цены"))
    try:
        price = Decimal(text)
    except InvalidOperation:
        return None, stored(NOT_A_NUMBER, price=text[:20])
    if not price.is_finite():
        return None, stored(NOT_A_NUMBER, price=text[:20])
    if price < 0:
        return None, stored(gettext_noop("цена меньше нуля (%(price)s)"), price=text[:20])
    if price > _MAX_PRICE:
        return None, stored(gettext_noop("цена слишком большая"))
    return price.quantize(Decimal("0.01")), ""


def _available(value: str | None, *, default: bool) -> bool:
    text = (value or "").strip().casefold()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    return default


def _link(value: str) -> str:
    return value if re.match(r"https?://[^\s/]+", value) and not _CONTROL.search(value) else ""
