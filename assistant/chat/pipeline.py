"""The answer chain: what the bot says to one visitor message. First version, without a model.

This is the one function that decides what reaches a visitor (DESIGN.md, "The answer chain"):
rules first, then retrieval, then the last word in code. The model-backed version replaces the
retrieval branch; `Reply` and `answer()` are the stable contract that services, the websocket
consumer and `manage.py ask` depend on.

What must stay true:
- A link always comes from a knowledge entry (url + title), never from generated text.
- "No exact answer" is an answer: flags.unanswered, plus the operator button when handoff is on.
- The chain never writes to the database; services store the Reply and apply `state`.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

from assistant.behavior.intents import Intent, classify
from assistant.bots.models import Bot
from assistant.chat import replies
from knowledge.search import SearchResult, search_entries

logger = logging.getLogger("spravka.chat")

EXCERPT_CHARS: Final = 400
SEARCH_K: Final = 5
STATE_WAITING_OPERATOR: Final = "waiting_operator"
_SEARCH_INTENTS: Final = frozenset({"question", "purchase", "read", "product"})
_SENTENCE_END: Final = re.compile(r"(?<=[.!?…])\s+")
_ESCALATION: Final = {"escalation": True}

History = list[tuple[str, str]]  # (role, text), oldest first; role: visitor | bot | operator | system
DeltaSink = Callable[[str], None]


@dataclass
class Reply:
    text: str
    links: list[dict[str, str]]  # [{"url", "title"}], taken from the entry, never from model text
    buttons: list[dict[str, str]]  # [{"id": "operator", "label": "Позвать оператора"}]
    intent: str
    source_entry_id: int | None
    sources: list[int]
    confidence: float | None
    flags: dict[str, bool]  # low_confidence, unanswered, escalation (friction is set by services)
    timings: dict[str, float]  # ms: rules, search, llm, total
    state: str | None = None  # e.g. "waiting_operator"
    llm_meta: dict[str, Any] = field(default_factory=dict)


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 2)


def _canned(intent: str, text: str, *, flags: dict[str, bool] | None = None, state: str | None = None) -> Reply:
    return Reply(
        text=text, links=[], buttons=[], intent=intent, source_entry_id=None, sources=[], confidence=None,
        flags=dict(flags or {}), timings={}, state=state,
    )


def _rule_reply(bot: Bot, intent: Intent) -> Reply | None:
    """Answers decided by rules alone; None when retrieval has to decide."""
    name = intent.name
    if name == "whoami":
        return _canned(name, replies.whoami(bot))
    if name == "operator":
        if bot.handoff_enabled:
            return _canned(name, replies.say(bot, "handoff"), flags=_ESCALATION, state=STATE_WAITING_OPERATOR)
        return _canned(name, replies.handoff_disabled(bot), flags=_ESCALATION)
    if name in {"order", "greeting", "thanks"}:
        return _canned(name, replies.say(bot, name))
    return None


def excerpt(text: str, limit: int = EXCERPT_CHARS) -> str:
    """The first sentences of an entry that fit in `limit` characters; a single sentence that is
    too long is cut at a word boundary with an ellipsis, so a visitor never gets half a word."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    kept = ""
    for sentence in _SENTENCE_END.split(text):
        candidate = f"{kept} {sentence}".strip()
        if len(candidate) > limit:
            break
        kept = candidate
    if kept:
        return kept
    cut = text[:limit].rsplit(" ", 1)[0].rstrip(",;:—- ")
    return f"{cut}…"


def _link(result: SearchResult) -> list[dict[str, str]]:
    if not result.url:
        return []
    return [{"url": result.url, "title": result.title or result.url}]


def _retrieval_reply(bot: Bot, intent: Intent, results: list[SearchResult]) -> Reply:
    """The no-model last word: the best entry if it matches well enough, otherwise an honest
    "no exact answer" with the way to a person."""
    top = results[0] if results else None
    top_score = top.score if top else 0.0
    flags = {"low_confidence": top_score < bot.confidence_threshold}
    sources = [r.entry_id for r in results if r.score >= bot.match_threshold]
    if top is not None and top.score >= bot.match_threshold:
        return Reply(
            text=excerpt(top.text), links=_link(top), buttons=[], intent=intent.name,
            source_entry_id=top.entry_id, sources=sources, confidence=round(top.score, 4),
            flags=flags, timings={}, llm_meta={"route": "retrieval", "kind": top.kind},
        )
    text = replies.say(bot, "no_answer")
    buttons: list[dict[str, str]] = []
    if bot.handoff_enabled:
        text += replies.say(bot, "no_answer_handoff")
        buttons = [replies.operator_button(bot)]
    return Reply(
        text=text, links=[], buttons=buttons, intent=intent.name, source_entry_id=None, sources=sources,
        confidence=round(top_score, 4) if top else None, flags=flags | {"unanswered": True}, timings={},
        llm_meta={"route": "retrieval"},
    )


def answer(*, bot: Bot, text: str, history: History, on_delta: DeltaSink | None = None) -> Reply:
    """The bot's reply to `text`. `history` holds the previous turns (unused without a model);
    `on_delta` receives the text so far while a model streams (never called without one)."""
    started = time.perf_counter()
    intent = classify(text)
    rules_ms = _ms(started)
    reply = _rule_reply(bot, intent)
    search_ms = 0.0
    if reply is None:
        if intent.name not in _SEARCH_INTENTS:  # a new rule the chain does not know yet
            logger.warning("intent %s has no branch in the chain; treated as a question", intent.name)
        search_started = time.perf_counter()
        results = search_entries(bot, intent.rest or text, k=SEARCH_K)
        search_ms = _ms(search_started)
        reply = _retrieval_reply(bot, intent, results)
    reply.llm_meta.setdefault("route", "rules")
    if intent.topic:
        reply.llm_meta["topic"] = intent.topic
    reply.timings = {"rules": rules_ms, "search": search_ms, "llm": 0.0, "total": _ms(started)}
    return reply
