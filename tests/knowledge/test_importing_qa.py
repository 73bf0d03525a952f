"""Question/answer pairs, typed one by one or imported from a CSV the way Excel saves it in Russia:
validated row by row, all or nothing, and re-imports update by question."""

from __future__ import annotations

import codecs

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from knowledge.drafts import question_key
from knowledge.exceptions import DocumentTooLarge, QAInvalid, RowsInvalid
from knowledge.importing import qa_add, qa_import_csv
from knowledge.models import Entry, Source

pytestmark = pytest.mark.django_db


def _pairs(bot) -> dict[str, tuple[str, float, str]]:
    return {entry.title: (entry.text, entry.weight, entry.url) for entry in Entry.objects.filter(bot=bot)}


def test_a_typed_pair_becomes_a_qa_entry_of_the_manual_source(bot):
    entry = qa_add(bot=bot, question="Сколько стоит доставка?", answer="300 ₽ по Москве.")

    assert (entry.kind, entry.title, entry.weight) == ("qa", "Сколько стоит доставка?", 0.8)
    assert entry.text == "300 ₽ по Москве."
    assert entry.source is not None and entry.source.kind == Source.Kind.MANUAL
    assert entry.key == "сколько стоит доставка"


def test_the_same_question_written_differently_updates_the_pair(bot):
    first = qa_add(bot=bot, question="Сколько стоит доставка?", answer="300 ₽.")

    again = qa_add(bot=bot, question="  сколько  стоит ДОСТАВКА ", answer="350 ₽.", weight=0.9,
                   url="https://shop.example/delivery")

    assert again.pk == first.pk
    assert _pairs(bot) == {"сколько  стоит ДОСТАВКА": ("350 ₽.", 0.9, "https://shop.example/delivery")}
    assert question_key("Ещё вопрос?") == question_key("еще ВОПРОС")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"question": " ", "answer": "Да."}, "Пара «вопрос — ответ» не сохранена: пустой вопрос."),
        ({"question": "???", "answer": "Да."}, "Пара «вопрос — ответ» не сохранена: в вопросе нет ни одного слова."),
        ({"question": "Есть самовывоз?", "answer": ""}, "Пара «вопрос — ответ» не сохранена: пустой ответ."),
        ({"question": "Есть самовывоз?", "answer": "Да.", "weight": 1.5},
         "Пара «вопрос — ответ» не сохранена: вес должен быть от 0 до 1."),
        ({"question": "Есть самовывоз?", "answer": "Да.", "url": "shop.example/pickup"},
         "Пара «вопрос — ответ» не сохранена: ссылка должна быть полным адресом: https://…."),
        ({"question": "", "answer": "", "weight": -1},
         "Пара «вопрос — ответ» не сохранена: пустой вопрос; пустой ответ; вес должен быть от 0 до 1."),
        ({"question": "Есть самовывоз?", "answer": "Да" * 2501},
         "Пара «вопрос — ответ» не сохранена: ответ длиннее 5000 символов (сейчас 5002)."),
    ],
)
def test_a_bad_pair_is_refused_with_every_reason(bot, fields, message):
    with pytest.raises(QAInvalid) as refused:
        qa_add(bot=bot, **fields)

    assert refused.value.message == message
    assert not Entry.objects.filter(bot=bot).exists()


def test_a_csv_with_an_english_header_is_imported(bot):
    data = (
        b"question,answer,weight,url\n"
        b"How long is delivery?,2-3 days,0.9,https://shop.example/delivery\n"
        b'Do you ship abroad?,"No, only within Russia.",,\n'
    )

    result = qa_import_csv(bot=bot, data=data)

    assert (result.created, result.updated, result.unchanged) == (2, 0, 0)
    assert _pairs(bot) == {
        "How long is delivery?": ("2-3 days", 0.9, "https://shop.example/delivery"),
        "Do you ship abroad?": ("No, only within Russia.", 0.8, ""),
    }


EXCEL_RU = (
    "Вопрос;Ответ;Вес;Ссылка\r\n"
    "Как оплатить заказ?;Картой или наличными; 0,9 ;\r\n"
    'Можно вернуть товар?;"Да, в течение 14 дней;\r\nнужен чек.";;https://shop.example/return\r\n'
)


@pytest.mark.parametrize("encoding", ["cp1251", "utf-8-sig", "utf-8"])
def test_a_russian_excel_csv_is_imported_in_any_of_its_encodings(bot, encoding):
    result = qa_import_csv(bot=bot, data=EXCEL_RU.encode(encoding), filename="faq.csv")

    assert result.created == 2
    assert _pairs(bot) == {
        "Как оплатить заказ?": ("Картой или наличными", 0.9, ""),
        "Можно вернуть товар?": ("Да, в течение 14 дней;\r\nнужен чек.", 0.8, "https://shop.example/return"),
    }


def test_reimporting_a_csv_updates_by_question_and_never_duplicates(bot):
    qa_import_csv(bot=bot, data=EXCEL_RU.encode("cp1251"))
    changed = EXCEL_RU.replace("Картой или наличными", "Картой, наличными или СБП").replace(
        "Как оплатить заказ?", "как оплатить заказ"
    )

    result = qa_import_csv(bot=bot, data=changed.encode("cp1251"))

    assert (result.created, result.updated, result.unchanged, result.deactivated) == (0, 1, 1, 0)
    assert Entry.objects.filter(bot=bot).count() == 2
    assert Entry.objects.get(bot=bot, key="как оплатить заказ").text == "Картой, наличными или СБП"


def test_a_csv_adds_to_pairs_typed_by_hand_and_leaves_them_alone(bot):
    typed = qa_add(bot=bot, question="Есть ли самовывоз?", answer="Да, на Ленина, 5.")

    qa_import_csv(bot=bot, data=EXCEL_RU.encode())

    assert Entry.objects.get(pk=typed.pk).active
    assert Entry.objects.filter(bot=bot, source=typed.source).count() == 3


BAD_CSV = (
    "вопрос;ответ;вес\n"            # 1
    "Как оплатить?;Картой;0,8\n"    # 2
    "Есть доставка?;Да;\n"          # 3
    "Где магазин?;На Ленина;1\n"    # 4
    "\n"                            # 5: blank lines are skipped, not errors
    ";Ответ без вопроса;\n"         # 6
    "Есть гарантия?;;\n"            # 7
    "Можно в кредит?;Нет;много\n"   # 8
    "Можно в рассрочку?;Да;1,5\n"   # 9
    "где магазин;Уже было;\n"       # 10
    "Сколько ждать?;2 дня;0,5;лишнее\n"  # 11
)


def test_a_csv_with_bad_rows_imports_nothing_and_lists_every_bad_row(bot):
    with pytest.raises(RowsInvalid) as refused:
        qa_import_csv(bot=bot, data=BAD_CSV.encode("cp1251"), filename="faq.csv")

    assert refused.value.problems == [
        "строка 6: пустой вопрос",
        "строка 7: пустой ответ",
        "строка 8: вес «много» — не число",
        "строка 9: вес должен быть от 0 до 1",
        "строка 10: вопрос повторяет строку 4",
        "строка 11: лишние ячейки (4 вместо 3) — если в тексте есть «;», возьмите его в кавычки",
    ]
    assert refused.value.message.startswith(
        "Файл «faq.csv» не импортирован, ничего не сохранено. Исправьте:\nстрока 6: пустой вопрос\n"
    )
    assert not Entry.objects.filter(bot=bot).exists()


def test_an_owner_reading_english_gets_the_same_rows_in_english(bot):
    from django.utils import translation

    with translation.override("en"), pytest.raises(RowsInvalid) as refused:
        qa_import_csv(bot=bot, data=BAD_CSV.encode("cp1251"), filename="faq.csv")

    assert refused.value.problems[:3] == [
        "line 6: the question is empty", "line 7: the answer is empty", "line 8: the weight “много” is not a number",
    ]
    assert refused.value.message.startswith(
        "The file “faq.csv” was not imported, nothing was saved. Fix:\nline 6: the question is empty\n")


def test_a_quoted_answer_spanning_lines_does_not_shift_the_line_numbers(bot):
    data = b'question,answer\n"Q1","line one\nline two"\n"Q2",\n'

    with pytest.raises(RowsInvalid) as refused:
        qa_import_csv(bot=bot, data=data)

    assert refused.value.problems == ["строка 4: пустой ответ"]


def test_blank_lines_above_the_header_still_count_in_line_numbers(bot):
    data = "\r\n\r\nвопрос;ответ\r\nКак?;\r\n".encode()

    with pytest.raises(RowsInvalid) as refused:
        qa_import_csv(bot=bot, data=data)

    assert refused.value.problems == ["строка 4: пустой ответ"]


def test_a_csv_over_the_upload_limit_is_refused(bot, settings):
    settings.UPLOAD_MAX_BYTES = 100

    with pytest.raises(DocumentTooLarge, match=r"Файл «faq\.csv» слишком большой"):
        qa_import_csv(bot=bot, data=EXCEL_RU.encode() * 2, filename="faq.csv")


HEADER_HINT = "(первая строка — заголовок «вопрос;ответ;вес;ссылка» или «question,answer,weight,url»)"


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        ("q;a\nКак?;Так\n", f"строка 1: нет столбцов «вопрос» и «ответ» {HEADER_HINT}"),
        ("вопрос;ответ;категория\nКак?;Так;Оплата\n", f"строка 1: неизвестный столбец «категория» {HEADER_HINT}"),
        ("вопрос;ответ\n\n", "в файле только заголовок, нет ни одной пары"),
    ],
)
def test_a_csv_without_a_usable_header_or_rows_is_refused(bot, data, problem):
    with pytest.raises(RowsInvalid) as refused:
        qa_import_csv(bot=bot, data=data.encode())

    assert refused.value.problems == [problem]
    assert not Source.objects.filter(bot=bot).exists()


def test_many_bad_rows_are_all_kept_but_the_message_stays_readable(bot):
    data = "вопрос;ответ\n" + "".join(f"Вопрос {n}?;\n" for n in range(100))

    with pytest.raises(RowsInvalid) as refused:
        qa_import_csv(bot=bot, data=data.encode())

    assert len(refused.value.problems) == 100
    assert refused.value.message.endswith("\n… и ещё ошибок: 70")


def test_importing_pairs_into_one_bot_never_touches_another_bots_pairs(bot, other_bot):
    theirs = qa_add(bot=other_bot, question="Как оплатить заказ?", answer="Только наличными.")

    qa_import_csv(bot=bot, data=EXCEL_RU.encode())
    qa_add(bot=bot, question="Как оплатить заказ?", answer="Только картой.")

    theirs.refresh_from_db()
    assert (theirs.text, theirs.history.count()) == ("Только наличными.", 1)
    assert Entry.objects.filter(bot=other_bot).count() == 1


def test_importqa_prints_what_it_did(bot, tmp_path, capsys):
    path = tmp_path / "faq.csv"
    path.write_bytes(codecs.BOM_UTF8 + EXCEL_RU.encode())

    call_command("importqa", "demo", str(path), "--no-embed")

    assert f"{path}: создано 2, обновлено 0, без изменений 0, отключено 0" in capsys.readouterr().out


def test_importqa_fails_with_the_list_of_bad_rows(bot, tmp_path):
    path = tmp_path / "faq.csv"
    path.write_bytes(BAD_CSV.encode("cp1251"))

    with pytest.raises(CommandError, match="строка 7: пустой ответ\nстрока 8"):
        call_command("importqa", "demo", str(path), "--no-embed")
    assert not Entry.objects.filter(bot=bot).exists()
