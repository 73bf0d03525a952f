"""Escalation rules (the Behavior layer, docs/architecture.md): when the bot should offer a person by itself.

Four signs that the bot is not helping, each switchable per bot: a thumbs-down, «нет, не то» /
«неверно» (a complaint), the same question rephrased twice in a row, and two «нет точного ответа»
in a row. The chat services ask after storing each bot answer and each rating, and make the offer
at most once per conversation; the rules here only read what happened.

What must stay true: these are pure decisions over the turns they are given (newest first); they
read no rows and write none, so a rule is tested with plain data.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from bots.models import Bot

Reason = Literal["thumbs_down", "complaint", "rephrase", "no_answers"]
# Visitor-message flags the chat services set from the text (chat/friction.py).
COMPLAINT: Final = "complaint"
REPHRASE: Final = "rephrase"


@dataclass(frozen=True)
class Turn:
    """One stored message as the rules see it."""

    role: str  # visitor | bot | operator | system
    flags: dict[str, bool] = field(default_factory=dict)


def _first(turns: Sequence[Turn], role: str, count: int) -> list[Turn]:
    return [turn for turn in turns if turn.role == role][:count]


def after_answer(bot: Bot, turns: Sequence[Turn]) -> Reason | None:
    """Whether the bot answer just stored (the newest bot turn in `turns`) should come with an
    offer of a person; `turns` are the conversation's latest messages, newest first."""
    visitors = _first(turns, "visitor", 2)
    if bot.escalate_on_complaint and visitors and visitors[0].flags.get(COMPLAINT):
        return "complaint"
    if bot.escalate_on_rephrase and len(visitors) == 2 and all(v.flags.get(REPHRASE) for v in visitors):
        return "rephrase"
    answers = _first(turns, "bot", 2)
    if bot.escalate_on_no_answers and len(answers) == 2 and all(a.flags.get("unanswered") for a in answers):
        return "no_answers"
    return None


def after_rating(bot: Bot, rating: int) -> Reason | None:
    """A thumbs-down on a bot answer."""
    return "thumbs_down" if rating < 0 and bot.escalate_on_thumbs_down else None
