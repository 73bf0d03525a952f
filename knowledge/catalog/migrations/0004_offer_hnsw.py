"""Partial HNSW indexes over the offers' vectors, one per local model, in half precision, as
knowledge's entries have them (knowledge/migrations/0006): the fallback by meaning of product
search (commerce/products.py) orders by exactly this expression, with an iterative index scan
so that the bot's own offers and the question's filters still give k rows. Exact cosine over a
bot's 10,000 offers cost ~75 ms p50 (bench/catalog_import.py); the index a few."""

from django.db import migrations

HNSW_MODELS = {"e5-small": 384, "use-m3": 512}


def offer_hnsw_index(name: str, dim: int) -> str:
    index = "catalogoffer_hnsw_" + name.replace("-", "_")
    return (
        f"CREATE INDEX IF NOT EXISTS {index} ON commerce_catalogoffer "
        f"USING hnsw ((embedding::halfvec({dim})) halfvec_cosine_ops) "
        f"WITH (m = 16, ef_construction = 128) WHERE embedding_model = '{name}'"
    )


class Migration(migrations.Migration):
    dependencies = [("commerce", "0003_offer_embeddings")]

    operations = [
        migrations.RunSQL(offer_hnsw_index(name, dim), f"DROP INDEX IF EXISTS catalogoffer_hnsw_{name.replace('-', '_')}")
        for name, dim in HNSW_MODELS.items()
    ]
