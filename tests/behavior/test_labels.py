"""Every intent a reply can carry has a label a person reads (behavior/labels.py)."""

from django.utils import translation

from behavior.intents import INTENT_NAMES
from behavior.labels import INTENT_LABELS, intent_label
from llm.structured import INTENTS


def test_every_intent_of_the_rules_the_model_and_a_failed_turn_has_a_label():
    assert set(INTENT_NAMES) | set(INTENTS) | {"error"} == set(INTENT_LABELS)


def test_a_label_is_in_the_readers_language_and_an_unknown_intent_is_shown_as_stored():
    with translation.override("en"):
        assert intent_label("order") == "a question about an order"
    with translation.override("ru"):
        assert intent_label("order") == "вопрос о заказе"
    assert intent_label("something_new") == "something_new"
