"""Rebuild the per-model HNSW indexes of 0005 over half-precision vectors (halfvec, pgvector 0.7+).

At 100k entries the full-precision index (220 MB) did not fit PostgreSQL's buffer cache (128 MB
by default), so a search paid for pages read back from the OS; the halfvec index is 126 MB. On
bench/search_speed.py (100k e5-small entries, ef_search 200) vector top-20 p95 went from 11 to
7.7 ms at the same recall@10 against exact search (0.978 -> 0.980). Only the index and the order
in which the vector retriever gathers candidates use half precision: the stored vectors stay full
precision and every candidate's cosine is computed from them (knowledge/search.py).
Same names, same predicate; knowledge/search.py must cast exactly as here.
"""

from django.db import migrations

HNSW_MODELS = {"e5-small": 384, "use-m3": 512}


def hnsw_index(name: str, dim: int, *, half: bool = True) -> str:
    """The partial HNSW index of one model (bench/search_speed.py builds it with this too)."""
    index = "entry_hnsw_" + name.replace("-", "_")
    kind = "halfvec" if half else "vector"
    return (
        f"DROP INDEX IF EXISTS {index}; "
        f"CREATE INDEX {index} ON knowledge_entry "
        f"USING hnsw ((embedding::{kind}({dim})) {kind}_cosine_ops) "
        f"WITH (m = 16, ef_construction = 128) WHERE embedding_model = '{name}'"
    )


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0005_hnsw_build_quality")]

    operations = [
        migrations.RunSQL(hnsw_index(name, dim), hnsw_index(name, dim, half=False))
        for name, dim in HNSW_MODELS.items()
    ]
