"""The chat prompt: which sources go in and how they are numbered, the rules per language, the
cacheable order of the parts, and the history as alternating messages."""

from __future__ import annotations

import pytest

from assistant.bots.models import Bot
from assistant.chat import prompt
from knowledge.search import SearchResult


def _bot(**fields):
    defaults = {"name": "Ромашка", "slug": "romashka", "site_url": "https://shop.example/", "language": "ru",
                "match_threshold": 0.4}
    return Bot(**(defaults | fields))


def _result(entry_id, score, title="Доставка", text="По Москве — 300 ₽.", url="https://shop.example/delivery"):
    return SearchResult(entry_id=entry_id, url=url, title=title, text=text, kind="qa", score=score)


def test_only_candidates_above_the_match_threshold_are_numbered_best_first():
    results = [_result(1, 0.9), _result(2, 0.5, title="Оплата"), _result(3, 0.39), _result(4, 0.2)]

    sources = prompt.numbered_sources(_bot(), results)

    assert [s.result.entry_id for s in sources] == [1, 2]
    assert prompt.sources_text("ru", sources) == (
        "Источники:\n[0] Доставка: По Москве — 300 ₽.\n[1] Оплата: По Москве — 300 ₽."
    )


def test_at_most_five_sources_each_trimmed():
    results = [_result(n, 0.9, text="слово " * 1000) for n in range(8)]

    sources = prompt.numbered_sources(_bot(), results)

    assert len(sources) == prompt.MAX_SOURCES
    assert all(len(s.shown) <= prompt.SOURCE_CHARS + 1 and s.shown.endswith("слово…") for s in sources)


def test_no_sources_says_so_and_leaves_only_minus_one():
    request = prompt.build_request(bot=_bot(), text="Как дела?", history=[], sources=[])

    assert request.system[-1].text.startswith("Источников по этому вопросу нет")
    assert request.schema["properties"]["source"] == {"type": "integer", "minimum": -1, "maximum": -1}


def test_the_rules_are_the_stable_prefix_and_the_sources_follow(settings):
    settings.CHAT_LLM_TIMEOUT = 5.0
    sources = prompt.numbered_sources(_bot(), [_result(1, 0.9), _result(2, 0.8)])

    request = prompt.build_request(bot=_bot(), text="Сколько стоит доставка?", history=[], sources=sources,
                                   conversation_id=7)

    rules, numbered = request.system
    assert rules.stable and not numbered.stable
    assert rules.text.startswith("Вы — виртуальный помощник «Ромашка» на сайте https://shop.example/.")
    assert "source = -1" in rules.text and "answer пустой" in rules.text
    assert numbered.text.startswith("Источники:\n[0] Доставка")
    assert request.schema["properties"]["source"]["maximum"] == 1
    assert (request.timeout, request.person_waits, request.conversation_id) == (5.0, True, 7)
    assert request.stream_release is not None and request.stream_release({"source": 1})
    assert not request.stream_release({"source": -1}) and not request.stream_release({"source": 2})
    assert (request.route, request.purpose, request.tool_name) == ("chat", "answer", "answer")


def test_the_rules_do_not_change_with_the_question():
    """The stable part must be byte-identical between messages, or the cache never hits."""
    bot = _bot()
    first = prompt.build_request(bot=bot, text="Привет", history=[], sources=[])
    second = prompt.build_request(
        bot=bot, text="Сколько стоит доставка?", history=[("visitor", "Привет")],
        sources=prompt.numbered_sources(bot, [_result(1, 0.9)]),
    )
    assert first.system[0] == second.system[0]


def test_an_english_bot_gets_english_rules():
    bot = _bot(language="en", name="Demo Shop", site_url="")
    request = prompt.build_request(bot=bot, text="Hi", history=[], sources=[])

    assert request.system[0].text.startswith("You are the virtual assistant of Demo Shop. You answer")
    assert request.system[1].text.startswith("There are no sources for this question")
    assert request.tool_description == "The answer to a chat visitor."


def test_both_languages_have_every_text():
    for table in (prompt.RULES, prompt.SOURCES_HEADER, prompt.NO_SOURCES, prompt.TOOL_DESCRIPTION):
        assert set(table) == {"ru", "en"}


@pytest.mark.parametrize(
    ("history", "expected"),
    [
        ([], [("user", "Вопрос")]),
        ([("visitor", "Привет"), ("bot", "Здравствуйте!")], [("user", "Привет"), ("assistant", "Здравствуйте!"),
                                                             ("user", "Вопрос")]),
        ([("bot", "Чем помочь?"), ("system", "заметка"), ("visitor", "Мне нужно")], [("user", "Мне нужно\n\nВопрос")]),
        ([("visitor", "А"), ("bot", "Б"), ("operator", "В")],
         [("user", "А"), ("assistant", "Б\n\nВ"), ("user", "Вопрос")]),
    ],
    ids=["empty", "pair", "leading-bot-and-trailing-visitor", "bot-then-operator"],
)
def test_history_becomes_alternating_messages_that_start_with_the_user(history, expected):
    messages = prompt.messages(history, "Вопрос")
    assert [(m["role"], m["content"]) for m in messages] == expected


def test_a_long_history_turn_is_clipped():
    [first, _answer, _question] = prompt.messages([("visitor", "длинно " * 500), ("bot", "Да")], "Вопрос")
    assert len(first["content"]) <= prompt.HISTORY_CHARS + 1 and first["content"].endswith("…")


def test_known_texts_are_what_the_prompt_states():
    bot = _bot()
    sources = prompt.numbered_sources(bot, [_result(1, 0.9)])
    assert prompt.known_texts(bot, sources) == ["Ромашка", "https://shop.example/", "Доставка: По Москве — 300 ₽."]


def test_clip_keeps_short_text_and_cuts_long_text_at_a_word():
    assert prompt.clip("  коротко \n и ясно ", 100) == "коротко и ясно"
    assert prompt.clip("одно два три четыре", 12) == "одно два…"
