"""Hit testing (MaxKB's): one question, the passages search ranks for it with every part of their
score, and the answer the chain would give — a dry run that stores no conversation.

What must stay true:
- the answer is the chain's own (`pipeline.answer` with no history, as the REST API's ask/ with
  record=false and `chain_reply_json` give it): no twin of the chain lives here;
- the passages shown are what retrieval found for the text the chain searched (a greeting before
  the question is stripped by the rules first), with the components knowledge.search returns;
- model calls of a dry run are real calls: they are journaled and billed like any other.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

from django.utils.translation import gettext as _

from answers import pipeline
from behavior.intents import classify
from behavior.labels import intent_label
from bots.models import Bot
from chat.contracts import chain_reply_json
from chat.frames import MAX_QUESTION_CHARS
from knowledge.models import Entry
from knowledge.search import SearchResult, search_entries

HIT_TEST_K: Final = 10
_SPACES: Final = re.compile(r"\s+")


class InsightsError(Exception):
    """Input that was refused; `.message` says why, for the person who typed it."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


# The chain's routes (pipeline `_finish` meta) as the owner reads them.
_ROUTES: Final = {
    "rules": "rules", "model_intent": "model", "order": "order", "sourced": "model", "conversation": "model",
    "retrieval": "search", "no_answer": "no_answer",
}


def reply_route(reply: pipeline.Reply) -> str:
    """rules | search | model | order | no_answer: who decided this reply."""
    if reply.flags.get("unanswered"):
        return "no_answer"
    return _ROUTES.get(str(reply.llm_meta.get("route", "")), "rules" if not reply.sources else "search")


def question_clean(question: Any) -> str:
    """The question as the chain gets it; InsightsError when it is empty or too long."""
    if not isinstance(question, str) or not question.strip():
        raise InsightsError(_("Введите вопрос."))
    question = question.strip()
    if len(question) > MAX_QUESTION_CHARS:
        raise InsightsError(_("Вопрос длиннее %(limit)d символов (в нём %(length)d). Сократите его.")
                            % {"limit": MAX_QUESTION_CHARS, "length": len(question)})
    if "\x00" in question:
        raise InsightsError(_("В вопросе недопустимый символ (NUL)."))
    return question


@dataclass(frozen=True)
class Passage:
    rank: int
    result: SearchResult
    in_prompt: bool  # went into the model's prompt (above the match threshold)
    cited: bool  # the reply's source

    @property
    def kind_label(self) -> str:
        """The entry's kind as a person reads it («фрагмент страницы»), never the stored value."""
        try:
            return str(Entry.Kind(self.result.kind).label)
        except ValueError:
            return self.result.kind


@dataclass(frozen=True)
class HitTest:
    question: str
    searched: str  # the text retrieval looked for
    passages: list[Passage]
    reply: pipeline.Reply
    reply_json: dict[str, Any]
    route: str
    match_threshold: float
    confidence_threshold: float

    @property
    def intent_label(self) -> str:
        return intent_label(self.reply.intent)


def hit_test(*, bot: Bot, question: Any) -> HitTest:
    """Rank the bot's passages for `question` and run the chain on it, storing nothing."""
    question = question_clean(question)
    searched = classify(question).rest or question
    results = search_entries(bot, searched, k=HIT_TEST_K)
    reply = pipeline.answer(bot=bot, text=question, history=[])
    prompt_ids = set(reply.sources)
    passages = [
        Passage(rank=rank, result=result, in_prompt=result.entry_id in prompt_ids,
                cited=result.entry_id == reply.source_entry_id)
        for rank, result in enumerate(results, start=1)
    ]
    return HitTest(
        question=question, searched=searched, passages=passages, reply=reply, reply_json=chain_reply_json(reply),
        route=reply_route(reply), match_threshold=bot.match_threshold, confidence_threshold=bot.confidence_threshold,
    )


def comparable(question: str) -> str:
    """A question as runs are matched by: case and spacing aside."""
    return _SPACES.sub(" ", question.casefold().replace("ё", "е")).strip()
