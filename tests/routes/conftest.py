"""Route fixtures: the chat's shop and its knowledge, the fake Messages API (playing a judge too),
a real local receiver for published replies, and reviews."""

from __future__ import annotations

import datetime
from collections.abc import Iterator

import pytest

from tests.chat.conftest import knowledge, shop  # noqa: F401
from tests.fakes import fake_llm  # noqa: F401
from tests.fakes.receiver import Receiver

REVIEWS = [
    ("Анна", 5, "Заказывала платье, пришло на следующий день, сидит отлично. Спасибо!", "Платье льняное"),
    ("Олег", 4, "Хорошие кроссовки, но коробка была помята.", "Кроссовки Run"),
    ("Мария", 5, "Быстрая доставка по Москве, курьер вежливый.", "Сумка"),
    ("Игорь", 5, "Всё понравилось, буду заказывать ещё.", "Рубашка"),
    ("Светлана", 4, "Оплатила через СБП, всё прошло без проблем.", "Шарф"),
    ("Дмитрий", 5, "Отличное качество ткани.", "Брюки"),
    ("Елена", 5, "Вернула товар без вопросов, деньги пришли быстро.", "Куртка"),
    ("Павел", 4, "Размер подошёл, цвет как на фото.", "Футболка"),
    ("Ольга", 5, "Лучший магазин, спасибо менеджеру!", "Платок"),
    ("Сергей", 5, "Доставили вовремя, всё целое. Мой телефон +7 916 555-12-34, перезвоните.", "Ремень"),
]


@pytest.fixture
def reviews(shop):  # noqa: F811
    from routes.reviews import ReviewDraft, reviews_import

    drafts = [
        ReviewDraft(author, rating, text, product, datetime.date(2026, 11, 20), "Яндекс Карты")
        for author, rating, text, product in REVIEWS
    ]
    return reviews_import(bot=shop, drafts=drafts).created


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.stop()
