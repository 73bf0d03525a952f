"""Escalation rules as plain decisions over the latest turns (newest first)."""

from behavior.escalation import Turn, after_answer, after_rating
from bots.models import Bot


def _bot(**switches):
    return Bot(name="Магазин", slug="shop", **switches)


def test_a_complaint_offers_a_person():
    turns = [Turn("bot"), Turn("visitor", {"friction": True, "complaint": True}), Turn("bot"), Turn("visitor")]
    assert after_answer(_bot(), turns) == "complaint"
    assert after_answer(_bot(escalate_on_complaint=False), turns) is None


def test_one_rephrase_is_not_enough_two_in_a_row_are():
    once = [Turn("bot"), Turn("visitor", {"rephrase": True}), Turn("bot"), Turn("visitor")]
    twice = [Turn("bot"), Turn("visitor", {"rephrase": True}), Turn("bot"), Turn("visitor", {"rephrase": True})]
    assert after_answer(_bot(), once) is None
    assert after_answer(_bot(), twice) == "rephrase"
    assert after_answer(_bot(escalate_on_rephrase=False), twice) is None


def test_two_no_answers_in_a_row_but_not_with_an_answer_between():
    two = [Turn("bot", {"unanswered": True}), Turn("visitor"), Turn("bot", {"unanswered": True}), Turn("visitor")]
    apart = [Turn("bot", {"unanswered": True}), Turn("visitor"), Turn("bot"), Turn("visitor"),
             Turn("bot", {"unanswered": True})]
    assert after_answer(_bot(), two) == "no_answers"
    assert after_answer(_bot(), apart) is None
    assert after_answer(_bot(escalate_on_no_answers=False), two) is None


def test_a_thumbs_down_offers_a_person_a_thumbs_up_does_not():
    assert after_rating(_bot(), -1) == "thumbs_down"
    assert after_rating(_bot(), 1) is None
    assert after_rating(_bot(escalate_on_thumbs_down=False), -1) is None
