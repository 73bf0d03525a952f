"""Product search over a bot's catalog: the offers for a question, with the filters the code reads
from it (never a model): a price range («до 15 000», «от 3 тысяч», «от 2 до 5 тыс.»), in stock
(«в наличии»), a vendor and a category named in the question. The rest of the question is
matched by words (PostgreSQL full-text, 'russian', any word; name counts most), then by meaning.

What must stay true:
- Every price, old price and availability returned is the offer row's own, as the feed said it.
- A filter is applied only when the question says it; the filters that were applied come back
  with the hits, so a reply (and a person reading the log) can say why these offers.
- Three queries at most: the bot's vendors and categories (cached; an import drops the cache after
  commit), the search by words, and by meaning only when the words found fewer than asked
  (offer embeddings, commerce/embedding.py); nothing per offer.
"""

from __future__ import annotations

import functools
import re
import threading
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any, Final
from urllib.parse import urlsplit

import snowballstemmer
from django.contrib.postgres.search import SearchQuery, SearchRank
from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import Case, F, IntegerField, Q, Value, When
from django.db.models.expressions import RawSQL

from bots.models import Bot
from knowledge.catalog.models import CatalogOffer
from knowledge.embeddings import DIMENSIONS, get_embedder
from knowledge.search import rescale_cosine

_NUMBER: Final = r"(\d[\d\s\u00a0]{0,12}(?:[.,]\d{1,2})?)\s*(тыс\w*\.?|т\.|к\b|k\b|млн\w*)?"
_CURRENCY: Final = r"(?:\s*(?:₽|руб\w*\.?|р\.))?"
_RANGE: Final = re.compile(rf"\bот\s+{_NUMBER}{_CURRENCY}\s+до\s+{_NUMBER}{_CURRENCY}", re.I)
_MAX: Final = re.compile(
    rf"\b(?:до|дешевле|не\s+дороже|не\s+больше|в\s+пределах|максимум|меньше|below|under|up\s+to)\s+{_NUMBER}{_CURRENCY}",
    re.I,
)
_MIN: Final = re.compile(rf"\b(?:от|дороже|не\s+дешевле|минимум|больше|from|over)\s+{_NUMBER}{_CURRENCY}", re.I)
_IN_STOCK: Final = re.compile(r"\bв\s+наличии\b|\bin\s+stock\b|\bесть\s+сейчас\b", re.I)
_WORD: Final = re.compile(r"[^\W\d_]{2,}", re.U)
# Words that ask, not describe: they would match any description.
_ASKING: Final = frozenset(
    "есть ли у вас вы а какой какая какие какое нужен нужна нужно нужны хочу ищу подскажите покажите "
    "можно купить найти посоветуйте сколько стоит стоят цена цены рублей руб тысяч тыс наличии до от "
    "дешевле дороже не больше меньше пределах максимум минимум что чтобы для товар товары товаров товара".split()
)
_local = threading.local()


def _stem(word: str) -> str:
    """The word's Russian stem, by this thread's stemmer: a snowball stemmer keeps the word it works
    on in itself, so one shared by the chat's worker threads garbles words (see answers/lemmas.py)."""
    stemmer = getattr(_local, "stemmer", None)
    if stemmer is None:
        stemmer = _local.stemmer = snowballstemmer.stemmer("russian")
    return str(stemmer.stemWord(word))


_ASKING_STEMS: Final = frozenset(_stem(w) for w in _ASKING)
FACETS_SECONDS: Final = 300  # the bot's vendor and category names, cached; an import refreshes them


@dataclass(frozen=True)
class Filters:
    price_min: Decimal | None = None
    price_max: Decimal | None = None
    in_stock: bool = False
    vendors: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    words: tuple[str, ...] = ()
    names: tuple[str, ...] = ()  # names every offer shown must have (a brand that is no vendor of the feed)

    def applied(self) -> dict[str, Any]:
        shown: dict[str, Any] = {}
        if self.price_min is not None:
            shown["price_min"] = str(self.price_min)
        if self.price_max is not None:
            shown["price_max"] = str(self.price_max)
        if self.in_stock:
            shown["in_stock"] = True
        if self.vendors:
            shown["vendors"] = list(self.vendors)
        if self.categories:
            shown["categories"] = list(self.categories)
        if self.names:
            shown["names"] = list(self.names)
        return shown


@dataclass(frozen=True)
class Found:
    offers: list[CatalogOffer]
    filters: Filters
    nearest_category: str = ""  # when nothing matched: the category the words point to, if any
    extra: dict[str, Any] = field(default_factory=dict)


def _amount(number: str, scale: str | None) -> Decimal:
    value = Decimal(re.sub(r"[\s\u00a0]", "", number).replace(",", "."))
    scale = (scale or "").casefold()
    if scale.startswith(("тыс", "т.", "к", "k")):
        value *= 1000
    elif scale.startswith("млн"):
        value *= 1_000_000
    return value


@functools.lru_cache(maxsize=8192)
def _stems(text: str) -> frozenset[str]:
    return frozenset(_stem(w.casefold()) for w in _WORD.findall(text))


def facets_key(bot_id: int) -> str:
    return f"commerce:facets:{bot_id}"


def _facets(bot: Bot) -> tuple[list[str], list[str], bool]:
    cached = cache.get(facets_key(bot.pk))
    if cached is not None and len(cached) == 3:
        return cached[0], cached[1], cached[2]
    pairs = list(CatalogOffer.objects.filter(bot=bot).order_by().values_list("vendor", "category").distinct())
    vendors = sorted({v for v, _c in pairs if v})
    categories = sorted({c for _v, c in pairs if c})
    cache.set(facets_key(bot.pk), (vendors, categories, bool(pairs)), FACETS_SECONDS)
    return vendors, categories, bool(pairs)


def facets(bot: Bot) -> tuple[list[str], list[str]]:
    """The bot's vendor and category names (what a question may name), from the cache or one query."""
    vendors, categories, _any = _facets(bot)
    return vendors, categories


def has_catalog(bot: Bot) -> bool:
    """Whether the bot has any offer at all (cached with the facets: no query on most turns)."""
    return _facets(bot)[2]


def read_filters(text: str, *, vendors: list[str], categories: list[str]) -> Filters:
    """The filters a question states; `vendors` and `categories` are the bot's own (from its feed)."""
    text = text[:1000]
    rest = text
    price_min = price_max = None
    if found := _RANGE.search(text):
        price_min = _amount(found.group(1), found.group(2) or found.group(4))
        price_max = _amount(found.group(3), found.group(4))
        rest = rest.replace(found.group(0), " ")
    else:
        if found := _MAX.search(text):
            price_max = _amount(found.group(1), found.group(2))
            rest = rest.replace(found.group(0), " ")
        if found := _MIN.search(rest):
            price_min = _amount(found.group(1), found.group(2))
            rest = rest.replace(found.group(0), " ")
    in_stock = bool(_IN_STOCK.search(rest))
    lowered = f" {rest.casefold()} "
    named_vendors = tuple(v for v in vendors if v and re.search(rf"(?<!\w){re.escape(v.casefold())}(?!\w)", lowered))
    question = _stems(rest) - _ASKING_STEMS
    named_categories = tuple(c for c in categories if c and _stems(c.rsplit("/", 1)[-1]) & question)
    words = tuple(sorted(w for w in {w.casefold() for w in _WORD.findall(rest)} if w not in _ASKING))
    return Filters(price_min, price_max, in_stock, named_vendors, named_categories, words[:12])


def product_search(
    *, bot: Bot, text: str, k: int = 3, query: str = "", vendors: tuple[str, ...] = (),
    categories: tuple[str, ...] = (), names: tuple[str, ...] = (),
) -> Found:
    """The best `k` offers of the bot's catalog for `text` (cheapest first among equal matches).
    `query` (the model's `product_query`) adds words, vendors and categories to look for; the price
    range and «в наличии» are read from the visitor's `text` alone, never from a model. `vendors`
    and `categories` (of the feed's own) are the ones the caller read from `text` by word form
    («Вихрем», «кофеварку»); `names` must each be in an offer's text (a brand the feed may lack)."""
    feed_vendors, feed_categories = facets(bot)
    filters = read_filters(text, vendors=feed_vendors, categories=feed_categories)
    filters = replace(filters, vendors=_union(filters.vendors, _own(vendors, feed_vendors)),
                      categories=_union(filters.categories, _own(categories, feed_categories)), names=names[:5])
    if query.strip():
        extra = read_filters(query, vendors=feed_vendors, categories=feed_categories)
        filters = replace(
            filters, vendors=_union(filters.vendors, extra.vendors),
            categories=_union(filters.categories, extra.categories), words=_union(filters.words, extra.words)[:12],
        )
    scope = Q(bot=bot)
    if filters.price_min is not None:
        scope &= Q(price__gte=filters.price_min)
    if filters.price_max is not None:
        scope &= Q(price__lte=filters.price_max)
    if filters.in_stock:
        scope &= Q(available=True)
    if filters.vendors:
        scope &= Q(vendor__in=filters.vendors)
    if filters.categories:
        scope &= Q(category__in=filters.categories)
    for name in filters.names:
        scope &= Q(search_vector=SearchQuery(name, config="russian", search_type="plain"))
    vendor_stems = _stems(" ".join(filters.vendors))
    words = [w for w in filters.words if _stem(w) not in vendor_stems and w not in filters.names]
    queryset = CatalogOffer.objects.filter(scope)
    if words and not filters.categories:
        matched = SearchQuery(words[0], config="russian", search_type="plain")
        for word in words[1:]:
            matched |= SearchQuery(word, config="russian", search_type="plain")
        queryset = queryset.filter(search_vector=matched).annotate(rank=SearchRank(F("search_vector"), matched))
        queryset = queryset.order_by("-rank", "price", "id")
    elif not (filters.applied() or words):
        return Found([], filters)  # nothing to go by: no offers rather than arbitrary ones
    elif narrowing := [w for w in words if _stem(w) not in _stems(" ".join(map(_leaf, filters.categories)))]:
        # A category and more words («робот-пылесос», «чайник из стекла»): the offers the words find
        # first, and only them when there are any; else the category's own order.
        matched = SearchQuery(narrowing[0], config="russian", search_type="plain")
        for word in narrowing[1:]:
            matched |= SearchQuery(word, config="russian", search_type="plain")
        hit = Case(When(search_vector=matched, then=Value(1)), default=Value(0), output_field=IntegerField())
        queryset = queryset.annotate(hit=hit).order_by("-hit", "-available", "price", "id")
    else:
        queryset = queryset.order_by("-available", "price", "id")
    offers = list(queryset.defer(*_UNSHOWN)[:k])
    if offers and _hit(offers[0]):
        offers = [offer for offer in offers if _hit(offer)]
    if len(offers) < k and words and not filters.categories:  # the words' meaning finds the rest
        # The vendor is a filter already: its name in the query would pull any of its offers near.
        meant = query.strip() or " ".join(
            w for w in _WORD.findall(text) if _stem(w.casefold()) not in vendor_stems)
        offers += _by_meaning(scope, meant, exclude=[offer.pk for offer in offers], k=k - len(offers))
    nearest = ""
    if not offers:
        nearest = next((c for c in feed_categories if _stems(_leaf(c)) & _stems(" ".join(words))), "")
    return Found(offers, filters, nearest)


def _hit(offer: CatalogOffer) -> bool:
    """Whether the narrowing words found this offer (0 or 1, annotated by the query; absent when
    there were none)."""
    return bool(offer.__dict__.get("hit"))


def _leaf(category: str) -> str:
    return category.rsplit("/", 1)[-1]


def _own(named: tuple[str, ...], feed: list[str]) -> tuple[str, ...]:
    """Only the feed's own names: a caller's reading never adds a vendor or category the feed lacks."""
    known = set(feed)
    return tuple(name for name in named if name in known)


def _union(first: tuple[str, ...], second: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys((*first, *second)))


def category_link(*, bot: Bot, category: str) -> str:
    """A page for a category: the longest path all its offers' pages share (their listing, as a
    shop's URLs usually go: /catalog/vacuums/v1/ and /catalog/vacuums/v2/ → /catalog/vacuums/;
    offers that all point at one listing, /catalog/home/#vacuums, give that page), on the offers'
    own site; "" when they share none (the caller falls back to the bot's site)."""
    urls = list(
        CatalogOffer.objects.filter(bot=bot, category=category).exclude(url="").order_by("id")
        .values_list("url", flat=True)[:200]
    )
    parts = [urlsplit(url) for url in urls if url.startswith(("http://", "https://"))]
    if not parts or len({(p.scheme, p.netloc) for p in parts}) != 1:
        return ""
    paths = [[segment for segment in p.path.split("/") if segment] for p in parts]
    common: list[str] = []
    for segments in zip(*paths, strict=False):
        if len(set(segments)) != 1:
            break
        common.append(segments[0])
    if not common:
        return ""
    return f"{parts[0].scheme}://{parts[0].netloc}/{'/'.join(common)}/"


_UNSHOWN: Final = ("description", "params", "content_hash", "embedding")
MEANING_EF: Final = 40  # HNSW candidates per step of the iterative scan (k is 3 at most)
MEANING_SCAN_TUPLES: Final = 20000  # how far the scan may go past refused rows before it gives up
MEANING_FLOOR: Final = 0.68  # rescaled cosine an offer needs to count as meant: e5-small is a weak judge of
# Russian product names (on the demo feed «трековые светильники» reaches 0.65 on a kettle), so only close ones count


def _by_meaning(scope: Q, text: str, *, exclude: list[int], k: int) -> list[CatalogOffer]:
    """The offers nearest to `text` by the embedding model (commerce/embedding.py), among those the
    filters allow and that are embedded with the current model; only close enough ones. The
    question's own vector: in the chain the entries search has just embedded it (cached).

    Ordered by the expression of the model's partial HNSW index (migration 0004: half precision,
    the model key inlined as the index predicate), with an iterative scan: the index goes on past
    other bots' offers and the ones the filters refuse until k rows pass, or it has read
    MEANING_SCAN_TUPLES; relaxed order, so the rows are sorted again here."""
    embedder = get_embedder()
    key, dim = embedder.key, DIMENSIONS[embedder.key]
    vector = embedder.query(text[:1000])
    literal = "[" + ",".join(f"{x:.6f}" for x in vector.tolist()) + "]"
    distance = RawSQL(f"(embedding::halfvec({dim}) <=> %s::halfvec({dim}))", [literal])  # noqa: S611 - our own dim
    queryset = (
        CatalogOffer.objects.filter(scope, embedding_model=key).exclude(pk__in=exclude)
        .annotate(distance=distance).order_by("distance").defer(*_UNSHOWN)[:k]
    )
    with transaction.atomic(savepoint=False), connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL hnsw.iterative_scan = relaxed_order; SET LOCAL hnsw.ef_search = {MEANING_EF}; "
                       f"SET LOCAL hnsw.max_scan_tuples = {MEANING_SCAN_TUPLES}")
        rows = list(queryset)
    rows.sort(key=lambda row: (float(row.distance), row.price, row.pk))
    return [row for row in rows if rescale_cosine(1 - float(row.distance), key) >= MEANING_FLOOR]


def card(offer: CatalogOffer) -> dict[str, Any]:
    """A product card as a reply would carry it: every value the row's own."""
    return {
        "id": offer.offer_id, "name": offer.name, "price": str(offer.price),
        "old_price": str(offer.old_price) if offer.old_price is not None else None, "currency": offer.currency,
        "available": offer.available, "url": offer.url, "picture": offer.picture,
    }
