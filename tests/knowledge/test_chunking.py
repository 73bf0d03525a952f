"""FAQ pages are chunked per question with the question in the heading path; tables become one
line per row, each value named by its column header, and a chunk is never cut inside a row."""

from __future__ import annotations

import pytest

from knowledge.chunking import page_drafts
from knowledge.extract import html_extract, table_text


def drafts(body: str, url: str = "https://shop.example/faq/"):
    page = html_extract(f"<html><head><title>Вопросы</title></head><body><main>{body}</main></body></html>".encode(),
                        url=url)
    return page_drafts(url=url, title=page.title, blocks=page.blocks)


@pytest.mark.parametrize(
    "body",
    [
        "<h1>Частые вопросы</h1><h2>Заказ</h2>"
        "<details><summary>Нужно ли регистрироваться?</summary><p>Нет, заказ можно оформить без регистрации.</p>"
        "</details><details><summary>Можно ли заказать по телефону?</summary><p>Да, позвоните на единый номер.</p>"
        "</details>",
        "<h1>Частые вопросы</h1><h2>Заказ</h2><dl><dt>Нужно ли регистрироваться?</dt>"
        "<dd><p>Нет, заказ можно оформить без регистрации.</p></dd><dt>Можно ли заказать по телефону?</dt>"
        "<dd>Да, позвоните на единый номер.</dd></dl>",
        "<h1>Частые вопросы</h1><h2>Заказ</h2><p><strong>Нужно ли регистрироваться?</strong></p>"
        "<p>Нет, заказ можно оформить без регистрации.</p><p><b>Можно ли заказать по телефону?</b></p>"
        "<p>Да, позвоните на единый номер.</p>",
    ],
    ids=["details", "dl", "bold-questions"],
)
def test_a_faq_page_becomes_one_chunk_per_question_under_its_heading_path(body):
    chunks = {d.heading_path: d.text for d in drafts(body)}

    assert chunks == {
        "Частые вопросы / Заказ / Нужно ли регистрироваться?": "Нет, заказ можно оформить без регистрации.",
        "Частые вопросы / Заказ / Можно ли заказать по телефону?": "Да, позвоните на единый номер.",
    }


def test_a_bold_line_that_is_not_a_question_stays_text():
    [chunk] = drafts("<h1>Доставка</h1><p><strong>Внимание.</strong></p><p>Курьер звонит заранее.</p>")
    assert chunk.heading_path == "Доставка" and chunk.text == "Внимание.\n\nКурьер звонит заранее."


def test_a_table_row_carries_its_column_headers():
    [chunk] = drafts(
        "<h1>Доставка</h1><h2 id='summary'>Кратко</h2><table>"
        "<tr><th>Зона</th><th>Срок</th><th>Стоимость</th><th>Бесплатно</th></tr>"
        "<tr><td>Внутри МКАД</td><td>на следующий день</td><td>350 ₽</td><td>от 5 000 ₽</td></tr>"
        "<tr><td>Экспресс</td><td>в день заказа</td><td>690 ₽</td><td>—</td></tr></table>"
    )

    assert chunk.text == (
        "Внутри МКАД: срок — на следующий день; стоимость — 350 ₽; бесплатно — от 5 000 ₽\n"
        "Экспресс: срок — в день заказа; стоимость — 690 ₽"
    )
    assert chunk.url.endswith("#summary")


def test_a_table_without_a_header_keeps_its_cells_in_a_row():
    assert table_text([["Москва", "300 ₽"], ["Тверь", "500 ₽"]], header=False) == "Москва | 300 ₽\nТверь | 500 ₽"
    assert table_text([["СДЭК", "Цена"], ["Казань", "390 ₽"]], header=True) == "Казань: цена — 390 ₽"


def test_a_long_table_is_cut_between_rows_never_inside_one():
    rows = "".join(f"<tr><td>Город номер {n}</td><td>{n} дня</td><td>{100 + n} ₽</td></tr>" for n in range(60))
    chunks = drafts(f"<h1>Регионы</h1><table><tr><th>Город</th><th>Срок</th><th>Цена</th></tr>{rows}</table>")

    assert len(chunks) > 1
    lines = [line for chunk in chunks for line in chunk.text.split("\n")]
    assert lines == [f"Город номер {n}: срок — {n} дня; цена — {100 + n} ₽" for n in range(60)]
