"""A question set's row says why it is not as expected (owner/insights/expectations.py): the phrase
it lacks, the other page it came from, a refusal; and the «350 ₽» answer of the demo shop, cited
from a section of the expected page (`…/delivery/moscow/#standard`), is as expected."""

from __future__ import annotations

import pytest
from django.urls import reverse

from bots.models import Membership
from owner.insights import batch
from owner.insights.expectations import PHRASE, REFUSED, SOURCE, expectation_check, phrase_found, same_page
from owner.insights.models import BatchResult
from owner.insights.sets import question_set_save
from tests.chat.conftest import demo_shop, demo_shop_id  # noqa: F401  (the crawled demo site)
from tests.owner.insights.conftest import DELIVERY_QUESTION, UNKNOWN_QUESTION

pytestmark = pytest.mark.django_db


def run_set(bot, text: str):
    """Save the set and run it here, through the real chain (the worker's task calls the same function)."""
    question_set = question_set_save(bot=bot, name="Доставка", text=text)
    run, _created = batch.batch_run_start(question_set=question_set)
    batch.batch_run_execute(run_id=run.pk)
    return question_set, run


def rows_of(page: str) -> list[str]:
    body = page[page.index("<tbody>"):page.index("</tbody>")]
    return body.split("<tr ")[1:]


@pytest.mark.parametrize(("phrase", "answer"), [
    ("350 ₽", "Стоимость — 350\u00a0₽."),
    ("350 ₽", "Стоимость — 350₽."),
    ("350 ₽", "Доставка стоит 350 рублей."),
    ("350 руб.", "Стоимость — 350 ₽."),
    ("от 5 000 ₽", "бесплатно от 5000 ₽"),
    ("бесплатно от 5000 ₽", "Бесплатно от 5\u202f000\u00a0₽"),
    ("Ёлки", "ёлки и елки"),
])
def test_a_phrase_is_found_however_it_is_spaced_and_written(phrase, answer):
    assert phrase_found(phrase, answer)


@pytest.mark.parametrize(("phrase", "answer"), [
    ("350 ₽", "Стоимость — 3 350 ₽."), ("350 ₽", "Стоимость — 3500 ₽."), ("35", "350 ₽"), ("300 ₽", "350 ₽"),
])
def test_a_number_is_a_whole_number(phrase, answer):
    assert not phrase_found(phrase, answer)


def test_a_section_of_the_expected_page_is_that_page():
    page = "http://127.0.0.1:8001/delivery/moscow/"
    assert same_page("http://127.0.0.1:8001/delivery/moscow/#standard", page)
    assert same_page("https://www.shop.example/delivery?utm=1", "http://shop.example/delivery/")
    assert not same_page("http://127.0.0.1:8001/delivery/regions/#table", page)
    assert not same_page("http://127.0.0.1:8002/delivery/moscow/", page)
    assert not same_page("", page)


def test_another_page_is_named_by_its_title_else_by_its_address_without_the_section():
    check = expectation_check(answer="Стоимость — 350 ₽.", route="search", expected_phrase="350 ₽",
                              cited_url="https://shop.example/delivery/regions/#table", cited_title="",
                              expected_url="https://shop.example/delivery/moscow/")
    assert [(r.code, r.text) for r in check.reasons] == [(SOURCE, (
        "ответ взят с другой страницы — https://shop.example/delivery/regions/, "
        "а ожидалась https://shop.example/delivery/moscow/"))]


def test_a_refusal_is_its_own_reason_and_nothing_expected_is_no_verdict():
    refused = expectation_check(answer="К сожалению, точного ответа у меня нет.", route="no_answer", cited_url="",
                                expected_url="https://shop.example/delivery", expected_phrase="350 ₽")
    assert refused.passed is False and [r.code for r in refused.reasons] == [REFUSED]
    assert expectation_check(answer="Привет!", route="rules", cited_url="", expected_url="",
                             expected_phrase="").passed is None


def test_the_demo_shops_350_roubles_from_a_section_of_the_expected_page_is_as_expected(client, owner, demo_shop):  # noqa: F811
    Membership.objects.create(bot=demo_shop, user=owner, role=Membership.Role.OWNER)
    site = demo_shop.site_url.rstrip("/")
    question_set, run = run_set(demo_shop, f"Сколько стоит доставка по Москве? | {site}/delivery/moscow/ | 350 ₽")
    result = BatchResult.objects.get(run=run)
    assert "350 ₽" in result.answer and result.cited_url.startswith(f"{site}/delivery/moscow/#")
    assert result.passed is True
    client.force_login(owner)
    page = client.get(reverse("insights:set", args=[demo_shop.slug, question_set.pk])).content.decode()
    [row] = rows_of(page)
    assert "как ожидалось" in row and "не как ожидалось" not in row
    assert "Как ожидалось: 1 из 1 вопроса с ожиданиями." in page


@pytest.mark.parametrize("lang", ["ru", "en"])
def test_each_row_not_as_expected_names_why(owner_client, shop, knowledge, lang):
    _set, run = run_set(shop, f"{DELIVERY_QUESTION} | 999 ₽\n"
                              f"{DELIVERY_QUESTION} | https://shop.example/return\n"
                              f"{UNKNOWN_QUESTION} | https://shop.example/delivery | 300 ₽\n"
                              f"{DELIVERY_QUESTION} | https://shop.example/delivery/ | 300 ₽")
    page = owner_client.get(reverse("insights:run", args=[shop.slug, run.pk]), HTTP_ACCEPT_LANGUAGE=lang)
    phrase, source, refused, right = rows_of(page.content.decode())
    words = {
        "ru": ("не как ожидалось", "в ответе нет «999 ₽»",
               "ответ взят с другой страницы — «Доставка», а ожидалась https://shop.example/return",
               "бот отказался отвечать («нет точного ответа»), а ответ ожидался", "как ожидалось"),
        "en": ("not as expected", "the answer does not contain “999 ₽”",
               "the answer comes from another page, “Доставка”; https://shop.example/return was expected",
               "the bot declined to answer (“no exact answer”), but an answer was expected", "as expected"),
    }[lang]
    assert f'data-reason="{PHRASE}">{words[1]}<' in phrase and words[0] in phrase
    assert f'data-reason="{SOURCE}">{words[2]}<' in source and "data-reason" not in source.split(words[2])[1]
    assert f'data-reason="{REFUSED}">{words[3]}<' in refused and refused.count("data-reason") == 1
    assert words[4] in right and "data-reason" not in right and words[0] not in right
    assert page.context["passed"] == 1 and page.context["checked"] == 4


def test_a_row_judged_by_the_old_rule_reads_right(owner_client, shop, knowledge):
    """Rows stored before the comparison knew sections keep `passed=False`; the page judges them again."""
    _set, run = run_set(shop, f"{DELIVERY_QUESTION} | https://shop.example/delivery | 300 ₽")
    BatchResult.objects.filter(run=run).update(cited_url="https://shop.example/delivery#price", passed=False)
    page = owner_client.get(reverse("insights:run", args=[shop.slug, run.pk])).content.decode()
    [row] = rows_of(page)
    assert "как ожидалось" in row and "не как ожидалось" not in row
