"""Reviews in: a CSV import that is all or nothing with clear errors, and a signed webhook intake."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from chat.webhooks import sign
from routes.models import CustomerReview, ReviewReplySettings

pytestmark = pytest.mark.django_db

HEADER = "author,rating,text,product,date,source\n"


def _csv(tmp_path, text, name="reviews.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_a_csv_is_imported_and_a_second_import_adds_nothing(shop, tmp_path, capsys):
    path = _csv(tmp_path, HEADER + 'Анна,5,"Всё отлично, спасибо",Платье,2026-11-20,Яндекс Карты\n'
                "Олег,4,Коробка помята,Кроссовки,21.11.2026,Ozon\n")
    call_command("importreviews", shop.slug, path)
    call_command("importreviews", shop.slug, path)
    assert "Импортировано отзывов: 2" in capsys.readouterr().out
    assert sorted(CustomerReview.objects.filter(bot=shop).values_list("author", "rating", "written_on__month")) == [
        ("Анна", 5, 11), ("Олег", 4, 11),
    ]
    assert CustomerReview.objects.count() == 2


def test_a_semicolon_csv_with_a_bom_and_columns_in_any_order_is_read(shop, tmp_path):
    path = tmp_path / "r.csv"
    path.write_bytes("\ufeffsource;date;author;text;rating;product\nWB;2026-11-01;Ира;Хорошо;5;\n".encode())
    call_command("importreviews", shop.slug, str(path))
    assert CustomerReview.objects.get(bot=shop).source == "WB"


def test_a_bad_csv_lists_every_problem_and_saves_nothing(shop, tmp_path):
    path = _csv(tmp_path, HEADER + "Анна,5,Хорошо,Платье,2026-11-20,WB\n"
                ",7,Плохо,,вчера,WB\n"
                "Олег,4,,Кроссовки,2026-11-21,\n")
    with pytest.raises(CommandError) as caught:
        call_command("importreviews", shop.slug, path)
    message = str(caught.value)
    assert "ничего не сохранено" in message
    assert "Строка 3: поле «author» пустое" in message and "Строка 3: оценка «7»" in message
    assert "Строка 3: дата «вчера» не распознана" in message
    assert "Строка 4: поле «text» пустое" in message and "Строка 4: поле «source» пустое" in message
    assert CustomerReview.objects.count() == 0


@pytest.mark.parametrize(("content", "expected"), [
    (b"", "Файл пуст"),
    (b"\xff\xfe\x00bad", "не в кодировке UTF-8"),
    ("author,text\nАнна,Хорошо\n".encode(), "Нет столбцов: rating, date, source"),
    (HEADER.encode(), "нет ни одного отзыва"),
    ((HEADER + "А,5,Т,П,2026-01-01,WB,лишнее\n").encode(), "Строка 2: лишние значения"),
])
def test_broken_files_get_a_clear_error(shop, tmp_path, content, expected):
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    with pytest.raises(CommandError, match=expected):
        call_command("importreviews", shop.slug, str(path))
    assert CustomerReview.objects.count() == 0


def test_an_unknown_bot_or_file_is_a_clear_error(shop, tmp_path):
    with pytest.raises(CommandError, match="Бота с кодом «nope» нет"):
        call_command("importreviews", "nope", _csv(tmp_path, HEADER))
    with pytest.raises(CommandError, match=r"Файла .* нет"):
        call_command("importreviews", shop.slug, str(tmp_path / "missing.csv"))


def _post(client, bot, payload, secret=None, raw=None):
    body = raw if raw is not None else json.dumps(payload, ensure_ascii=False).encode()
    secret = secret or ReviewReplySettings.objects.get_or_create(bot=bot)[0].intake_secret
    return client.post(f"/routes/reviews/{bot.slug}/", data=body, content_type="application/json",
                       headers={"X-Spravka-Signature": sign(secret, body)})


REVIEW = {"author": "Анна", "rating": 5, "text": "Спасибо!", "product": "Платье", "date": "2026-11-20",
          "source": "Яндекс Карты"}


def test_a_signed_review_is_taken_once_and_its_run_is_queued(client, shop, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        first = _post(client, shop, REVIEW)
    again = _post(client, shop, REVIEW)
    assert first.status_code == 201 and first.json()["created"] is True
    assert again.status_code == 200 and again.json() == {"ok": True, "review": first.json()["review"], "created": False}
    assert len(callbacks) == 1  # the run starts once, after commit
    assert CustomerReview.objects.filter(bot=shop).count() == 1


def test_a_wrong_signature_or_bot_is_refused_and_nothing_is_saved(client, shop, other_bot):
    other_secret = ReviewReplySettings.objects.get_or_create(bot=other_bot)[0].intake_secret
    assert _post(client, shop, REVIEW, secret=other_secret).status_code == 401
    unsigned = client.post(f"/routes/reviews/{shop.slug}/", data=b"{}", content_type="application/json")
    assert unsigned.status_code == 401 and "Подпись" in unsigned.json()["error"]
    assert client.post("/routes/reviews/nope/", data=b"{}", content_type="application/json").status_code == 404
    assert client.get(f"/routes/reviews/{shop.slug}/").status_code == 405
    assert CustomerReview.objects.count() == 0


def test_a_signed_but_invalid_review_gets_its_problems(client, shop):
    answer = _post(client, shop, {**REVIEW, "rating": "десять", "text": ""})
    assert answer.status_code == 400
    assert answer.json()["problems"] == [
        "Отзыв: поле «text» пустое.", "Отзыв: оценка «десять» — нужна цифра от 1 до 5.",
    ]
    assert _post(client, shop, None, raw=b"\xffnot json").status_code == 400
    assert _post(client, shop, None, raw=b"[1, 2]").status_code == 400
    assert CustomerReview.objects.count() == 0


@pytest.mark.django_db(transaction=True)
def test_a_review_sent_by_webhook_gets_its_draft_from_a_real_worker(client, shop, fake_llm, celery_worker_thread):
    import time

    from routes.models import RouteRun
    from tests.fakes.messages_api import tool_use, verdict

    fake_llm.script_tool("review_reply", tool_use({"reply": "Анна, спасибо за отзыв о платье!"}))
    fake_llm.script_tool("verdict", verdict(0.9))
    assert _post(client, shop, REVIEW).status_code == 201
    deadline = time.monotonic() + 30
    while not RouteRun.objects.filter(bot=shop, status=RouteRun.Status.WAITING).exists():
        assert time.monotonic() < deadline, list(RouteRun.objects.values("status", "handoff_reason"))
        time.sleep(0.1)
    assert _post(client, shop, REVIEW).status_code == 200
    time.sleep(0.5)
    assert RouteRun.objects.filter(bot=shop).count() == 1  # the same review again starts nothing
