"""`/b/<slug>/knowledge/`: sources with their last crawl and «Обойти снова», documents uploaded
through the knowledge layer's import, Q/A pairs added, edited and switched off in place (every
change a version). Bad input is named and nothing saved is lost; another bot's ids are 404."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from knowledge.models import CrawlRun, Entry, Source

pytestmark = pytest.mark.django_db

DELIVERY_MD = "# Доставка\n\nДоставляем по Москве за 1 день, по России — за 3–7 дней. Бесплатно от 5000 ₽.\n".encode()


def qa(bot, question="Есть ли самовывоз?", answer="Да, с Тверской, 1."):
    from knowledge.services import entry_create

    return entry_create(bot=bot, kind="qa", title=question, text=answer)


def test_the_page_shows_sites_with_their_last_crawl_and_the_empty_states(owner_client, bot):
    source = Source.objects.create(bot=bot, kind="site", url="https://shop.example/", title="Магазин")
    CrawlRun.objects.create(bot=bot, source=source, status="done", pages_total=3, pages_done=3, fetched=3)
    html = owner_client.get("/b/demo/knowledge/").content.decode()
    assert "Магазин" in html and "100% · готово" in html and "Обойти снова" in html
    assert "Документов пока нет" in html and "Пар «вопрос — ответ» пока нет" in html


def test_crawl_again_queues_a_run_and_refuses_a_second_while_it_goes(owner_client, bot):
    source = Source.objects.create(bot=bot, kind="site", url="https://shop.example/", title="Магазин")
    assert owner_client.post(f"/b/demo/knowledge/sources/{source.pk}/crawl/")["Location"] == "/b/demo/knowledge/#sites"
    assert CrawlRun.objects.filter(source=source, status="queued").count() == 1
    page = owner_client.post(f"/b/demo/knowledge/sources/{source.pk}/crawl/", follow=True)
    assert "уже идёт" in page.content.decode() and CrawlRun.objects.filter(source=source).count() == 1


def test_a_document_upload_becomes_entries_and_answers_json_to_the_script(owner_client, bot):
    upload = SimpleUploadedFile("Доставка.md", DELIVERY_MD, content_type="text/markdown")
    response = owner_client.post("/b/demo/knowledge/documents/", {"file": upload}, HTTP_ACCEPT="application/json")
    data = response.json()
    assert response.status_code == 200 and data["ok"] and data["created"] >= 1
    assert "«Доставка.md»: создано" in data["message"]
    assert Entry.objects.filter(bot=bot, source__kind="document", text__contains="Бесплатно от 5000").exists()
    assert "Доставка.md" in owner_client.get("/b/demo/knowledge/").content.decode()


def test_a_corrupt_pdf_is_named_and_nothing_is_saved(owner_client, bot):
    qa(bot)
    upload = SimpleUploadedFile("Прайс.pdf", b"%PDF-1.4 this is not really a pdf", content_type="application/pdf")
    response = owner_client.post("/b/demo/knowledge/documents/", {"file": upload}, HTTP_ACCEPT="application/json")
    assert response.status_code == 400 and "«Прайс.pdf» повреждён" in response.json()["message"]
    assert not Source.objects.filter(bot=bot, kind="document").exists() and Entry.objects.filter(bot=bot).count() == 1


def test_an_oversized_upload_is_refused_without_javascript_too(owner_client, bot, settings):
    settings.UPLOAD_MAX_BYTES = 100
    upload = SimpleUploadedFile("big.txt", "Доставка. ".encode() * 50, content_type="text/plain")
    page = owner_client.post("/b/demo/knowledge/documents/", {"file": upload})
    assert page.status_code == 400 and "«big.txt» слишком большой" in page.content.decode()
    assert not Entry.objects.filter(bot=bot).exists()


def test_an_unsupported_file_is_named(owner_client, bot):
    upload = SimpleUploadedFile("photo.png", b"\x89PNG\r\n\x1a\n....", content_type="image/png")
    response = owner_client.post("/b/demo/knowledge/documents/", {"file": upload}, HTTP_ACCEPT="application/json")
    assert response.status_code == 400 and "не поддерживается" in response.json()["message"]


def test_a_qa_pair_is_added_and_listed(owner_client, bot):
    response = owner_client.post("/b/demo/knowledge/qa/", {"question": "Есть ли самовывоз?", "answer": "Да."})
    assert response["Location"] == "/b/demo/knowledge/#qa"
    entry = Entry.objects.get(bot=bot, kind="qa")
    assert entry.title == "Есть ли самовывоз?" and entry.embedding_model  # searchable by meaning at once
    assert "Есть ли самовывоз?" in owner_client.get("/b/demo/knowledge/").content.decode()


def test_an_empty_pair_is_refused_and_what_was_typed_stays(owner_client, bot):
    page = owner_client.post("/b/demo/knowledge/qa/", {"question": "Есть ли самовывоз?", "answer": "   "})
    html = page.content.decode()
    assert page.status_code == 400 and "Напишите ответ." in html and 'value="Есть ли самовывоз?"' in html
    assert not Entry.objects.filter(bot=bot).exists()


def test_the_same_question_twice_names_the_existing_pair(owner_client, bot):
    first = qa(bot)
    page = owner_client.post("/b/demo/knowledge/qa/", {"question": "есть ли самовывоз?", "answer": "Нет."})
    assert page.status_code == 400 and f"запись №{first.pk}" in page.content.decode()
    assert Entry.objects.filter(bot=bot).count() == 1


def test_a_pair_is_edited_in_place_as_a_new_version(owner_client, bot):
    entry = qa(bot)
    prefix = f"qa{entry.pk}"
    response = owner_client.post(f"/b/demo/knowledge/qa/{entry.pk}/", {
        "action": "save", f"{prefix}-question": "Есть ли самовывоз?", f"{prefix}-answer": "Да, с Тверской, 7."})
    assert response["Location"] == f"/b/demo/knowledge/#qa-{entry.pk}"
    entry.refresh_from_db()
    assert entry.text == "Да, с Тверской, 7." and entry.history.count() == 2


def test_an_edit_that_empties_the_answer_is_refused_and_the_old_text_kept(owner_client, bot):
    entry = qa(bot)
    prefix = f"qa{entry.pk}"
    page = owner_client.post(f"/b/demo/knowledge/qa/{entry.pk}/", {
        "action": "save", f"{prefix}-question": "Новый вопрос?", f"{prefix}-answer": ""})
    html = page.content.decode()
    assert page.status_code == 400 and "Напишите ответ." in html and 'value="Новый вопрос?"' in html
    entry.refresh_from_db()
    assert entry.title == "Есть ли самовывоз?" and entry.text == "Да, с Тверской, 1." and entry.history.count() == 1


def test_a_pair_is_switched_off_and_on(owner_client, bot):
    entry = qa(bot)
    owner_client.post(f"/b/demo/knowledge/qa/{entry.pk}/", {"action": "deactivate"})
    entry.refresh_from_db()
    assert not entry.active
    assert "отключена" in owner_client.get("/b/demo/knowledge/").content.decode()
    owner_client.post(f"/b/demo/knowledge/qa/{entry.pk}/", {"action": "activate"})
    entry.refresh_from_db()
    assert entry.active and entry.history.count() == 3


def test_another_tenants_ids_are_404(owner_client, bot, other_bot):
    theirs = qa(other_bot)
    source = Source.objects.create(bot=other_bot, kind="site", url="https://other.example/")
    assert owner_client.post(f"/b/demo/knowledge/qa/{theirs.pk}/", {"action": "deactivate"}).status_code == 404
    assert owner_client.post(f"/b/other/knowledge/qa/{theirs.pk}/", {"action": "deactivate"}).status_code == 404
    assert owner_client.post(f"/b/demo/knowledge/sources/{source.pk}/crawl/").status_code == 404
    assert owner_client.post("/b/other/knowledge/qa/", {"question": "Q?", "answer": "A."}).status_code == 404
    theirs.refresh_from_db()
    assert theirs.active and not CrawlRun.objects.filter(source=source).exists()
    assert not Entry.objects.filter(bot=bot).exists()


def uploaded(bot, name="Доставка.md", data=DELIVERY_MD):
    from knowledge.importing import document_import

    return document_import(bot=bot, filename=name, data=data).source


def lexeme_df(bot, word):
    from knowledge.models import Lexeme

    row = Lexeme.objects.filter(bot=bot, lexeme=word).first()
    return row.df if row else 0


def test_a_document_is_deleted_its_entries_leave_search_and_stay_in_their_history(owner_client, bot):
    from knowledge.indexing import embed_pending
    from knowledge.lexicon import lexicon_refresh
    from knowledge.search import search_entries

    source = uploaded(bot)
    embed_pending(bot_id=bot.pk)
    lexicon_refresh(bot_id=bot.pk)
    chunks = list(Entry.objects.filter(source=source))
    assert chunks and search_entries(bot, "бесплатная доставка от 5000")[0].entry_id in {e.pk for e in chunks}
    assert lexeme_df(bot, "бесплатн") >= 1
    page = owner_client.get("/b/demo/knowledge/").content.decode()
    assert f'action="/b/demo/knowledge/documents/{source.pk}/delete/"' in page
    assert "onsubmit=\"return confirm('Удалить документ «Доставка.md»? Бот перестанет отвечать по нему.')\"" in page

    response = owner_client.post(f"/b/demo/knowledge/documents/{source.pk}/delete/", follow=True)
    assert response.redirect_chain == [("/b/demo/knowledge/#documents", 302)]
    text = response.content.decode()
    assert "Документ «Доставка.md» удалён" in text and "Документов пока нет" in text
    assert not Source.objects.filter(pk=source.pk).exists()
    assert not CrawlRun.objects.filter(source_id=source.pk).exists()
    for entry in chunks:
        entry.refresh_from_db()
        assert not entry.active and entry.source_id is None
        latest = entry.history.order_by("-history_id").first()
        assert latest.active is False and latest.history_change_reason == "dashboard"  # a version, restorable
    assert all(r.entry_id not in {e.pk for e in chunks} for r in search_entries(bot, "бесплатная доставка от 5000"))
    assert lexeme_df(bot, "бесплатн") == 0


def test_a_name_with_quotes_is_escaped_in_the_confirmation(owner_client, bot):
    uploaded(bot, name="It's \"<b>\".md")
    page = owner_client.get("/b/demo/knowledge/").content.decode()
    assert "<b>" not in page
    assert r"return confirm('Удалить документ «It\u0027s \u0022\u003Cb\u003E\u0022.md»?" in page


def test_deleting_needs_a_post_and_a_document_of_this_bot(owner_client, client, bot, other_bot):
    mine, theirs = uploaded(bot), uploaded(other_bot)
    site = Source.objects.create(bot=bot, kind="site", url="https://shop.example/", title="Магазин")
    assert owner_client.get(f"/b/demo/knowledge/documents/{mine.pk}/delete/").status_code == 405
    assert owner_client.post(f"/b/demo/knowledge/documents/{theirs.pk}/delete/").status_code == 404
    assert owner_client.post(f"/b/other/knowledge/documents/{theirs.pk}/delete/").status_code == 404
    assert owner_client.post(f"/b/demo/knowledge/documents/{site.pk}/delete/").status_code == 404  # not a document
    assert owner_client.post("/b/demo/knowledge/documents/999999/delete/").status_code == 404
    client.logout()
    assert client.post(f"/b/demo/knowledge/documents/{mine.pk}/delete/")["Location"].startswith("/accounts/login/")
    assert Source.objects.filter(pk__in=[mine.pk, theirs.pk, site.pk]).count() == 3
    assert Entry.objects.filter(source__in=[mine, theirs], active=True).count() == 2


def test_the_service_refuses_a_source_that_is_not_a_document(bot):
    from knowledge.services import document_delete

    site = Source.objects.create(bot=bot, kind="site", url="https://shop.example/")
    with pytest.raises(ValueError):
        document_delete(source=site)
    assert Source.objects.filter(pk=site.pk).exists()


def test_the_deletion_speaks_english_too(owner_client, bot, settings):
    source = uploaded(bot)
    owner_client.cookies[settings.LANGUAGE_COOKIE_NAME] = "en"
    page = owner_client.get("/b/demo/knowledge/").content.decode()
    assert "return confirm('Delete the document “Доставка.md”? The bot will stop answering from it.')" in page
    done = owner_client.post(f"/b/demo/knowledge/documents/{source.pk}/delete/", follow=True).content.decode()
    assert "Document “Доставка.md” deleted; the bot no longer answers from it (chunks: 1)." in done
