"""Documents into knowledge: chunks with heading paths, idempotent re-imports, and every bad
file refused with a message a shop owner can act on, leaving nothing half-saved."""

from __future__ import annotations

import codecs

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from reportlab.lib.pdfencrypt import StandardEncryption

from knowledge.exceptions import (
    DocumentCorrupt,
    DocumentEmpty,
    DocumentEncodingUnknown,
    DocumentEncrypted,
    DocumentHasNoText,
    DocumentTooLarge,
    DocumentUnsupported,
    KnowledgeError,
)
from knowledge.importing import document_import
from knowledge.models import Entry, Source
from tests.knowledge.files import make_docx, make_pdf, make_zip

pytestmark = pytest.mark.django_db

FAQ = """---
title: Вопросы покупателей
---
# Доставка {#delivery}

Доставляем по Москве за 300 ₽, бесплатно от 5000 ₽.

## Самовывоз

Из магазина на Ленина, 5, с 10 до 20.

# Оплата

Картой, наличными или по счёту для юрлиц.
"""


def _active(bot) -> dict[str, Entry]:
    return {entry.key: entry for entry in Entry.objects.filter(bot=bot, active=True)}


def test_a_markdown_file_becomes_chunks_under_its_headings(bot):
    result = document_import(bot=bot, filename="faq.md", data=FAQ.encode())

    assert (result.created, result.updated, result.unchanged, result.deactivated) == (3, 0, 0, 0)
    assert result.source.kind == Source.Kind.DOCUMENT and result.source.title == "faq.md"
    entries = _active(bot)
    assert set(entries) == {"faq.md › Доставка #1", "faq.md › Доставка › Самовывоз #1", "faq.md › Оплата #1"}
    pickup = entries["faq.md › Доставка › Самовывоз #1"]
    assert (pickup.title, pickup.heading_path, pickup.kind) == ("faq.md", "Доставка › Самовывоз", "chunk")
    assert pickup.text == "Из магазина на Ленина, 5, с 10 до 20."
    assert pickup.url == ""  # a file has no address a visitor could open; the label is title + path
    assert "title:" not in " ".join(entry.text for entry in entries.values())


def test_a_published_document_links_each_chunk_to_its_heading_anchor(bot):
    document_import(bot=bot, filename="faq.md", data=FAQ.encode(), url="https://shop.example/faq")

    urls = {entry.heading_path: entry.url for entry in Entry.objects.filter(bot=bot)}
    assert urls == {
        "Доставка": "https://shop.example/faq#delivery",
        "Доставка › Самовывоз": "https://shop.example/faq#самовывоз",
        "Оплата": "https://shop.example/faq#оплата",
    }


def test_reimporting_the_same_file_changes_nothing(bot):
    document_import(bot=bot, filename="faq.md", data=FAQ.encode())
    versions = sum(entry.history.count() for entry in Entry.objects.filter(bot=bot))

    again = document_import(bot=bot, filename="faq.md", data=FAQ.encode())

    assert (again.created, again.updated, again.unchanged, again.deactivated) == (0, 0, 3, 0)
    assert Entry.objects.filter(bot=bot).count() == 3
    assert Source.objects.filter(bot=bot).count() == 1
    assert sum(entry.history.count() for entry in Entry.objects.filter(bot=bot)) == versions


def test_a_changed_file_updates_in_place_and_switches_off_what_disappeared(bot):
    document_import(bot=bot, filename="faq.md", data=FAQ.encode())
    before = _active(bot)
    Entry.objects.filter(bot=bot).update(embedding=[0.1] * 384, embedding_model="e5-small")
    changed = FAQ.replace("300 ₽", "350 ₽").replace("## Самовывоз\n\nИз магазина на Ленина, 5, с 10 до 20.\n", "")

    result = document_import(bot=bot, filename="faq.md", data=changed.encode())

    assert (result.created, result.updated, result.unchanged, result.deactivated) == (0, 1, 1, 1)
    delivery = Entry.objects.get(pk=before["faq.md › Доставка #1"].pk)
    assert "350 ₽" in delivery.text and delivery.embedding is None  # re-embedded on the next pass
    assert Entry.objects.get(pk=before["faq.md › Оплата #1"].pk).embedding_model == "e5-small"
    pickup = Entry.objects.get(pk=before["faq.md › Доставка › Самовывоз #1"].pk)
    assert not pickup.active and pickup.history.count() == 2  # kept, versioned, restorable


def test_a_docx_keeps_its_headings_and_reads_tables_as_rows(bot):
    def build(document):
        document.add_heading("Условия магазина", level=0)
        document.add_heading("Доставка", level=1)
        document.add_paragraph("Курьер привезёт заказ на следующий день.")
        table = document.add_table(rows=3, cols=2)
        for row, cells in enumerate([("Город", "Цена"), ("Москва", "300 ₽"), ("Тверь", "500 ₽")]):
            for column, text in enumerate(cells):
                table.cell(row, column).text = text
        document.add_heading("Возврат", level=1)
        document.add_paragraph("Вернуть товар можно в течение 14 дней.")

    document_import(bot=bot, filename="Условия.docx", data=make_docx(build))

    entries = {entry.heading_path: entry.text for entry in Entry.objects.filter(bot=bot)}
    assert entries == {
        "Условия магазина › Доставка": (
            "Курьер привезёт заказ на следующий день.\n\nГород | Цена\nМосква | 300 ₽\nТверь | 500 ₽"
        ),
        "Условия магазина › Возврат": "Вернуть товар можно в течение 14 дней.",
    }


def test_docx_headings_are_found_by_russian_style_names_and_by_inheritance(bot):
    from docx.enum.style import WD_STYLE_TYPE

    def build(document):
        russian = document.styles.add_style("Заголовок 1", WD_STYLE_TYPE.PARAGRAPH)
        custom = document.styles.add_style("Мой подзаголовок", WD_STYLE_TYPE.PARAGRAPH)
        custom.base_style = document.styles["Heading 2"]
        document.add_paragraph("Гарантия", style=russian)
        document.add_paragraph("Сроки", style=custom)
        document.add_paragraph("Год на всю технику.")

    document_import(bot=bot, filename="гарантия.docx", data=make_docx(build))

    assert [entry.heading_path for entry in Entry.objects.filter(bot=bot)] == ["Гарантия › Сроки"]


def test_a_pdf_is_split_by_page_with_words_broken_across_lines_rejoined(bot):
    data = make_pdf([["Доставка по Москве стоит 300 рублей,", "бесплат-", "но от 5000 рублей."],
                     ["Гарантия на всю технику — один год."]])

    document_import(bot=bot, filename="прайс.pdf", data=data, url="https://shop.example/price.pdf")

    pages = {entry.heading_path: entry for entry in Entry.objects.filter(bot=bot)}
    assert set(pages) == {"стр. 1", "стр. 2"}
    assert "бесплатно от 5000" in pages["стр. 1"].text.replace("\n", " ")
    assert pages["стр. 2"].url == "https://shop.example/price.pdf#page=2"


def test_a_pdf_locked_only_against_printing_is_imported(bot):
    data = make_pdf([["Скидка 10% по карте."]], encrypt=StandardEncryption("", "owner-secret", canPrint=0))

    result = document_import(bot=bot, filename="скидки.pdf", data=data)

    assert result.created == 1


def test_long_sections_are_cut_into_chunks_of_even_size(bot):
    paragraph = "Товар можно вернуть в течение двух недель, если сохранены чек и упаковка. "
    text = "# Возврат\n\n" + "\n\n".join(paragraph * 3 for _ in range(12))

    document_import(bot=bot, filename="return.md", data=text.encode())

    sizes = [len(entry.text) for entry in Entry.objects.filter(bot=bot).order_by("key")]
    assert len(sizes) >= 2
    assert all(500 <= size <= 1200 for size in sizes), sizes


@pytest.mark.parametrize(
    ("encoding", "prefix"),
    [("utf-8", b""), ("utf-8", codecs.BOM_UTF8), ("cp1251", b""), ("koi8_r", b""), ("utf-16", b"")],
)
def test_a_text_file_is_read_in_any_common_russian_encoding(bot, encoding, prefix):
    text = "Магазин работает ежедневно с 9 до 21 часа.\r\n\r\nВ праздники - с 10 до 18, «Ё» и «№» тоже."
    if encoding == "koi8_r":
        text = text.replace("«", '"').replace("»", '"').replace("№", "N")  # not in KOI8-R

    document_import(bot=bot, filename="часы.txt", data=prefix + text.encode(encoding))

    assert [entry.text for entry in Entry.objects.filter(bot=bot)] == [text.replace("\r\n", "\n")]


BAD_FILES = [
    pytest.param("пусто.txt", b"", DocumentEmpty,
                 "В файле «пусто.txt» нет текста. Проверьте, что загружаете нужный файл.", id="empty"),
    pytest.param("пробелы.md", b" \n\n \t\n", DocumentEmpty,
                 "В файле «пробелы.md» нет текста. Проверьте, что загружаете нужный файл.", id="blank"),
    pytest.param("setup.exe", b"MZ\x90\x00", DocumentUnsupported,
                 "Файл «setup.exe» не поддерживается. Загрузите PDF, DOCX, TXT или Markdown (.md).",
                 id="unknown-extension"),
    pytest.param("договор.doc", b"\xd0\xcf\x11\xe0", DocumentUnsupported,
                 "Файл «договор.doc» не поддерживается. Загрузите PDF, DOCX, TXT или Markdown (.md). "
                 "Это старый формат Word: откройте файл и сохраните его как DOCX.", id="old-word"),
    pytest.param("фото.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", DocumentUnsupported,
                 "Файл «фото.txt» не поддерживается. Загрузите PDF, DOCX, TXT или Markdown (.md). "
                 "Похоже, это не текстовый файл.", id="binary-as-text"),
    pytest.param("каша.txt", bytes(range(128, 256)) * 4, DocumentEncodingUnknown,
                 "Не удалось определить кодировку файла «каша.txt». Сохраните его в кодировке UTF-8 "
                 "и загрузите снова.", id="unknown-encoding"),
    pytest.param("архив.docx", make_zip({"readme.txt": "не документ"}), DocumentCorrupt,
                 "Файл «архив.docx» повреждён или это не DOCX. Откройте его в редакторе, сохраните заново "
                 "как DOCX и загрузите ещё раз.", id="zip-not-docx"),
    pytest.param("текст.docx", "просто текст".encode(), DocumentCorrupt,
                 "Файл «текст.docx» повреждён или это не DOCX. Откройте его в редакторе, сохраните заново "
                 "как DOCX и загрузите ещё раз.", id="text-as-docx"),
    pytest.param("картинка.pdf", b"\x89PNG\r\n\x1a\n", DocumentCorrupt,
                 "Файл «картинка.pdf» повреждён или это не PDF. Откройте его в редакторе, сохраните заново "
                 "как PDF и загрузите ещё раз.", id="not-a-pdf"),
]


@pytest.mark.parametrize(("filename", "data", "error", "message"), BAD_FILES)
def test_a_bad_file_is_refused_with_a_clear_message_and_nothing_is_saved(bot, filename, data, error, message):
    with pytest.raises(error) as refused:
        document_import(bot=bot, filename=filename, data=data)

    assert refused.value.message == message
    assert not Source.objects.filter(bot=bot).exists()
    assert not Entry.objects.filter(bot=bot).exists()


def _truncated(data: bytes) -> bytes:
    return data[: len(data) // 2]


@pytest.mark.parametrize("kind", ["pdf", "docx"])
def test_a_truncated_file_is_refused_and_the_previous_import_stays_intact(bot, kind):
    good = make_pdf([["Гарантия один год."]]) if kind == "pdf" else make_docx(
        lambda document: document.add_paragraph("Гарантия один год.")
    )
    document_import(bot=bot, filename=f"гарантия.{kind}", data=good)

    with pytest.raises(DocumentCorrupt, match=f"повреждён или это не {kind.upper()}"):
        document_import(bot=bot, filename=f"гарантия.{kind}", data=_truncated(good))

    assert [(entry.text, entry.active) for entry in Entry.objects.filter(bot=bot)] == [("Гарантия один год.", True)]


def test_a_password_protected_pdf_is_refused(bot):
    data = make_pdf([["Секретный прайс"]], encrypt=StandardEncryption("user-secret", "owner-secret"))

    with pytest.raises(DocumentEncrypted) as refused:
        document_import(bot=bot, filename="прайс.pdf", data=data)

    assert refused.value.message == (
        "Файл «прайс.pdf» защищён паролем. Снимите защиту (сохраните копию без пароля) и загрузите снова."
    )
    assert not Entry.objects.filter(bot=bot).exists()


def test_a_scanned_pdf_without_a_text_layer_is_refused(bot):
    with pytest.raises(DocumentHasNoText) as refused:
        document_import(bot=bot, filename="скан.pdf", data=make_pdf([[], []], cyrillic=False))

    assert refused.value.message == (
        "В файле «скан.pdf» нет текстового слоя — похоже, это скан или картинки. "
        "Распознайте текст (OCR) или загрузите тот же документ в формате DOCX или TXT."
    )
    assert not Source.objects.filter(bot=bot).exists()


def test_a_file_over_the_upload_limit_is_refused(bot, settings):
    settings.UPLOAD_MAX_BYTES = 1024 * 1024

    with pytest.raises(DocumentTooLarge) as refused:
        document_import(bot=bot, filename="большой.txt", data=b"a" * (1024 * 1024 + 1))

    assert refused.value.message == (
        "Файл «большой.txt» слишком большой: 1,0 МБ при пределе 1,0 МБ. Разделите его на несколько файлов поменьше."
    )


def test_a_path_sent_as_the_file_name_is_reduced_to_the_name(bot):
    result = document_import(bot=bot, filename="C:\\Users\\shop\\Desktop\\faq.md", data=FAQ.encode())

    assert result.source.title == "faq.md"


def test_importing_into_one_bot_never_touches_another_bots_entries(bot, other_bot):
    document_import(bot=other_bot, filename="faq.md", data=FAQ.encode())
    theirs = {entry.pk: (entry.text, entry.active) for entry in Entry.objects.filter(bot=other_bot)}

    document_import(bot=bot, filename="faq.md", data=FAQ.encode())
    document_import(bot=bot, filename="faq.md", data=b"# Other\n\nCompletely different text.")

    assert {entry.pk: (entry.text, entry.active) for entry in Entry.objects.filter(bot=other_bot)} == theirs
    assert Entry.objects.filter(bot=bot, active=True).count() == 1


def test_importdocs_imports_the_good_files_reports_the_bad_ones_and_fails(bot, tmp_path, capsys):
    (tmp_path / "faq.md").write_text(FAQ, encoding="utf-8")
    (tmp_path / "скан.pdf").write_bytes(b"not a pdf")

    with pytest.raises(CommandError, match="Не импортировано файлов: 2 из 3"):
        call_command("importdocs", "demo", str(tmp_path / "faq.md"), str(tmp_path / "скан.pdf"),
                     str(tmp_path / "нет.txt"), "--no-embed")

    out, err = capsys.readouterr()
    assert f"{tmp_path / 'faq.md'}: создано 3, обновлено 0, без изменений 0, отключено 0" in out
    assert "Файл «скан.pdf» повреждён или это не PDF" in err
    assert f"Файл «{tmp_path / 'нет.txt'}» не найден. Проверьте путь." in err
    assert Entry.objects.filter(bot=bot).count() == 3


def test_importdocs_embeds_what_it_imported(bot, tmp_path, capsys):
    (tmp_path / "оплата.txt").write_text("Оплата картой или наличными при получении.", encoding="utf-8")

    call_command("importdocs", "demo", str(tmp_path / "оплата.txt"))

    assert "Векторизовано записей: 1" in capsys.readouterr().out
    entry = Entry.objects.get(bot=bot)
    assert entry.embedding is not None and entry.embedding_model


def test_importdocs_names_a_missing_bot(db, tmp_path):
    with pytest.raises(CommandError, match="Бот «nobody» не найден"):
        call_command("importdocs", "nobody", str(tmp_path / "faq.md"))


def test_every_document_error_is_a_knowledge_error_with_a_message():
    error = DocumentEmpty("a.txt")
    assert isinstance(error, KnowledgeError) and error.message == str(error)
