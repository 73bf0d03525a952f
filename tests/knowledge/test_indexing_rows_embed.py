"""`rows_embed`, the batch-and-write loop that entries (`embed_pending`) and catalog offers
(knowledge/catalog/embedding.py) share: real PostgreSQL, the real local embedding model."""

from __future__ import annotations

import pytest

from knowledge.drafts import EntryDraft, passage_text
from knowledge.embeddings import DIMENSIONS, get_embedder
from knowledge.indexing import rows_embed, vector_literal
from knowledge.models import Entry
from knowledge.services import entry_upsert, source_get_or_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def five(bot) -> list[Entry]:
    source = source_get_or_create(bot=bot, kind="manual", title="тест")
    texts = ["Доставка курьером 390 ₽.", "Возврат 14 дней.", "Гарантия 12 месяцев.", "Самовывоз с 10 до 22.",
             "Оплата картой или наличными."]
    return [entry_upsert(bot=bot, source=source, draft=EntryDraft(key=f"e{n}", title=f"Тема {n}", text=text,
                                                                  url=f"/e{n}/", kind=Entry.Kind.CHUNK))[0]
            for n, text in enumerate(texts)]


def test_rows_are_embedded_in_key_order_batch_by_batch_with_progress(bot, five):
    embedder = get_embedder()
    written: list[tuple[list[int], list[str]]] = []
    progress: list[tuple[int, int]] = []
    done = rows_embed(
        rows=Entry.objects.filter(bot=bot).order_by("-pk"), text=passage_text,
        write=lambda batch, vectors: written.append(([row.pk for row in batch], vectors)),
        embedder=embedder, batch_size=2, progress=lambda n, total: progress.append((n, total)),
    )
    assert done == 5
    ids = sorted(entry.pk for entry in five)
    assert [pks for pks, _ in written] == [ids[0:2], ids[2:4], ids[4:5]]
    assert progress == [(2, 5), (4, 5), (5, 5)]
    first = written[0][1][0]
    assert first.startswith("[") and first.endswith("]")
    assert len(first.strip("[]").split(",")) == DIMENSIONS[embedder.key]
    # The literal is the model's vector for the row's text, as search will compare it.
    expected = embedder.passages([passage_text(five[0])])[0]
    assert [float(x) for x in first.strip("[]").split(",")] == pytest.approx(expected.tolist(), abs=1e-6)


def test_a_batch_the_writer_skips_is_not_fetched_again_in_the_same_pass(bot, five):
    calls: list[int] = []
    done = rows_embed(rows=Entry.objects.filter(bot=bot, embedding__isnull=True), text=passage_text,
                      write=lambda batch, vectors: calls.append(len(batch)), embedder=get_embedder(), batch_size=3)
    assert (done, calls) == (5, [3, 2])  # nothing written, yet the pass ends
    assert Entry.objects.filter(bot=bot, embedding__isnull=True).count() == 5


def test_no_rows_no_work(bot):
    calls: list[int] = []
    assert rows_embed(rows=Entry.objects.filter(bot=bot), text=passage_text,
                      write=lambda batch, vectors: calls.append(len(batch)), embedder=get_embedder()) == 0
    assert calls == []


def test_vector_literal_is_pgvectors_text_form():
    assert vector_literal([0.5, -1.0, 0.25]) == "[0.5,-1.0,0.25]"
