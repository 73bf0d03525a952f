"""One partial HNSW index per embedding model: the column has no fixed dimension, so each model's
vectors are indexed through a cast to its own dimension (the pattern pgvector documents for
mixed dimensions). knowledge/search.py must use the very same cast and WHERE clause."""

from django.db import migrations

MODELS = {"e5-small": 384, "use-m3": 512}


def _create(name: str, dim: int) -> str:
    index = "entry_hnsw_" + name.replace("-", "_")
    return (
        f"CREATE INDEX IF NOT EXISTS {index} ON knowledge_entry "
        f"USING hnsw ((embedding::vector({dim})) vector_cosine_ops) "
        f"WITH (m = 16, ef_construction = 64) WHERE embedding_model = '{name}'"
    )


def _drop(name: str) -> str:
    return "DROP INDEX IF EXISTS entry_hnsw_" + name.replace("-", "_")


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0001_initial")]

    operations = [
        migrations.RunSQL(_create(name, dim), _drop(name)) for name, dim in MODELS.items()
    ]
