"""The speller without a model (knowledge/spelling.py) on a real bot's entries in PostgreSQL: a word
the site uses or a real word is never changed, a typo is read as the word meant, a site word wins."""

from __future__ import annotations

import pytest

from knowledge import spelling
from knowledge.drafts import EntryDraft
from knowledge.models import Entry
from knowledge.services import entry_edit, entry_upsert

pytestmark = pytest.mark.django_db

SITE = [
    ("payment", "Способы оплаты",
     "Оплатить заказ можно картой, через СБП или наличными. Рассрочку подключают в приложении банка-партнёра; "
     "технобонусы списываются при оплате. Сумку для ноутбука упакуем бесплатно."),
    ("delivery", "Доставка по Москве",
     "Курьер привезёт заказ на следующий день. Самовывоз из пункта выдачи СДЭК — бесплатно."),
]


@pytest.fixture
def shop_words(bot):
    for key, title, text in SITE:
        entry_upsert(bot=bot, source=None, draft=EntryDraft(key=key, title=title, text=text, kind=Entry.Kind.QA))
    return bot


def fixed(bot, text: str) -> str:
    return spelling.correct(bot.pk, text).text


def test_no_word_the_site_uses_is_ever_changed(shop_words):
    texts = [f"{title} {text}" for _key, title, text in SITE]

    for text in texts:
        assert spelling.correct(shop_words.pk, text).changes == ()
    for word in spelling.words_of(texts):
        assert fixed(shop_words, word) == word


def test_a_real_word_is_not_changed_even_one_letter_from_a_site_word(shop_words):
    # «парта» is one letter from the site's «карта», «вертолёт» is on no page: both are real words.
    assert spelling.correct(shop_words.pk, "парта и парковка для вертолёта").changes == ()
    assert fixed(shop_words, "скока стоит") == "скока стоит"  # pymorphy3 knows the colloquial word


def test_a_typo_is_read_as_the_word_meant(shop_words):
    spelled = spelling.correct(shop_words.pk, "как поткючить оплту картой?")

    assert spelled.text == "как подключить оплату картой?"
    assert spelled.changes == (("поткючить", "подключить"), ("оплту", "оплату"))


def test_a_reading_says_whether_every_fix_is_a_word_the_site_uses(shop_words):
    # «оплату»: the site writes «оплаты» (the same dictionary form); «пенсионер» is on no page.
    assert spelling.correct(shop_words.pk, "как оплтаить оплту картой?").on_site is True
    assert spelling.correct(shop_words.pk, "скидка пенсонерам").on_site is False
    assert spelling.correct(shop_words.pk, "оплтаить скидку пенсонерам").on_site is False
    assert spelling.correct(shop_words.pk, "оплата картой").on_site is False  # nothing changed


def test_a_site_word_wins_over_a_more_common_word_at_the_same_distance(shop_words):
    # «поткючить» is two edits from «отключить» (commoner in Russian) and from «подключить», whose
    # dictionary form the site uses («подключают»); «сумиа» one from «сумма» and from the site's «сумку».
    assert fixed(shop_words, "поткючить") == "подключить"
    assert fixed(shop_words, "сумиа") == "сумка"


def test_a_site_word_unknown_to_the_dictionary_is_a_candidate(shop_words):
    assert fixed(shop_words, "технобонксы за покупку") == "технобонусы за покупку"


def test_short_words_are_corrected_at_one_edit_only(shop_words):
    assert fixed(shop_words, "курер") == "курьер"  # one edit
    assert fixed(shop_words, "кирьир") == "кирьир"  # six letters, two edits: left alone
    assert fixed(shop_words, "самавывз") == "самовывоз"  # longer: two edits


def test_names_latin_and_numbers_are_left_alone(shop_words):
    text = "Доставка в Масквау и Питербург, iphone 15, оплтаа2, СБПП, мoсква"

    assert spelling.correct(shop_words.pk, text).changes == ()
    assert fixed(shop_words, "Оплтаа картой") == "Оплата картой"  # a sentence's first word is not a name
    assert fixed(shop_words, "кСолько стоит?") == "сколько стоит?"  # Shift held too long: not a name


def test_a_name_is_read_only_as_a_name_the_site_writes(shop_words):
    assert fixed(shop_words, "доставка по Москвк") == "доставка по Москве"  # the site writes «Москве»
    assert fixed(shop_words, "есть ли Кароль в продаже") == "есть ли Кароль в продаже"  # «король»: not the site's


@pytest.mark.parametrize("text", [
    "оплта " * 1000,  # 5,000 characters
    "🙂🙂🙂",
    "oплата доставкa",  # Latin letters inside Russian words
    "\ud800 оплта",
    "",
    "   \x00\n",
])
def test_bad_input_never_raises(shop_words, text):
    spelled = spelling.correct(shop_words.pk, text)

    assert isinstance(spelled.text, str)
    assert len(spelled.changes) <= spelling.MAX_LOOKUPS


def test_the_site_dictionary_follows_the_entries(shop_words):
    assert fixed(shop_words, "кэшбэкк") != "кэшбэк"  # no page says it yet

    entry, _ = entry_upsert(bot=shop_words, source=None, draft=EntryDraft(
        key="cashback", title="Кэшбэк", text="Кэшбэк 5 % бонусами за каждый заказ.", kind=Entry.Kind.QA))
    assert fixed(shop_words, "кэшбэкк") == "кэшбэк"

    entry_edit(entry=entry, changes={"active": False})
    assert fixed(shop_words, "кэшбэкк") != "кэшбэк"


def test_each_bot_has_its_own_words(shop_words, other_bot):
    assert fixed(shop_words, "технобонксы") == "технобонусы"
    assert fixed(other_bot, "технобонксы") == "технобонксы"
