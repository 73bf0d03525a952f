"""The answer chain: what the bot says to one visitor message (docs/architecture.md, "The answer chain").

Rules first, then retrieval and the model, then the last word in code. `Reply` and `answer()` are
the stable contract that services, the websocket consumer and `manage.py ask` depend on.

What must stay true:
- A fact reaches a visitor only with a source: the model names a number from the list the code put
  in the prompt, the link is that entry's url + title, never anything from the model's text, and
  every fact of the answer is found in that entry (checks.py, facts.py); an answer with a fact its
  entry does not give is not shown: the visitor gets that entry's own excerpt instead.
- An answer without a source is conversation: it may state no fact but the bot's own name and
  site; one that does is blocked and becomes "no exact answer".
- A streamed draft shows only what passed the same check (checks.DraftGate): never an unchecked fact.
- Page text cannot change the route: the model may raise operator/order only when the prompt held
  no page text, and no answer repeating the rules is shown.
- A source the model saw and did not cite is never shown as a fallback: the best entry is shown
  only when there was no model at all (none configured, failed, timed out, form still invalid).
- Canned texts are in the reply's language: the visitor's when the bot allows it (replies.py).
- "No exact answer" is an answer: flags.unanswered, plus the operator button when handoff is on.
- The chain writes no chat rows (services store the Reply and apply `state`); model calls and
  filter blocks go to the run journal, which is why services run it outside any transaction.
- The voice (assistant/voice) is the visitor's: `voice.settings_for` gives the sliders, conditions
  and thresholds of their experiment arm; the bot's dictionary words the reply as it leaves the
  chain and every streamed draft (complete sentences only), after the checks, never links or
  citation numbers; a sentence with a forbidden word is dropped and journaled, and a reply left
  empty becomes "no exact answer".
- Typos: with a model, its `fixed` reading gets one more pass; without one, the speller's
  (knowledge/spelling.py: never a word the site uses or a real word), and its reply says what was
  understood. Never a third pass, and a rules turn never runs the speller.
- A person waits: every model call of one turn (a form repair, the typo retry's second pass) is
  over by CHAT_LLM_TIMEOUT after the turn began, however the model behaves (llm/deadline.py).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final

from django.conf import settings

from answers import asked, checks, excerpts, orders, products, prompt, replies
from behavior import hours
from behavior.intents import Intent, classify
from bots.models import Bot
from knowledge import scope, selectors, spelling
from knowledge.search import SearchResult, search_entries
from llm import journal, providers
from llm.base import LLMRequest, LLMResult, Provider
from llm.models import RunEvent
from llm.streaming import TextSink
from llm.structured import NO_SOURCE, complete_with_repair, schema_validator
from voice import dictionary as voice_dictionary
from voice.effective import Voice, settings_for

logger = logging.getLogger("spravka.chat")

EXCERPT_CHARS: Final = excerpts.LIMIT
SEARCH_K: Final = 5
UNDERSTOOD_CHARS: Final = 200  # «Вы имели в виду: …» quotes at most this much of the corrected text
STATE_WAITING_OPERATOR: Final = "waiting_operator"
_SEARCH_INTENTS: Final = frozenset({"question", "purchase", "read", "product"})
# Intents the model may raise over the rules, and only over a plain "question": the rules keep
# false ones out ("костюм для менеджера" is a product), the model picks up what they missed.
_MODEL_RAISED: Final = frozenset({"operator", "order"})
_NOT_WORD: Final = re.compile(r"[^\w]+")
_UNSHOWN: Final = re.compile("[\x00-\x1f\x7f\ud800-\udfff]")  # controls, lone surrogates: not quoted back

History = list[tuple[str, str]]  # (role, text), oldest first; role: visitor | bot | operator | system
DeltaSink = Callable[[str], None]  # receives the whole answer text so far while a model streams


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
    cards: list[dict[str, Any]] = field(default_factory=list)  # product cards, from catalog rows (answers/products.py)


@dataclass(frozen=True)
class ModelAnswer:
    """A reply of the model that passed the form check (so every field has its type)."""

    intent: str
    source: int
    answer: str
    fixed: str
    product_query: str = ""

    @classmethod
    def of(cls, result: LLMResult) -> ModelAnswer | None:
        """None means no model at all: none configured, a failed call, or a form still invalid."""
        if not result.ok or result.data is None:
            return None
        data = result.data
        return cls(intent=data["intent"], source=data["source"], answer=data["answer"].strip(),
                   fixed=data["fixed"].strip(), product_query=data["product_query"].strip())


@dataclass(frozen=True)
class Found:
    """What retrieval found for one text, and the part of it that went into the prompt."""

    results: list[SearchResult]
    sources: list[prompt.Source]

    @property
    def top(self) -> SearchResult | None:
        return self.results[0] if self.results else None

    @property
    def entry_ids(self) -> list[int]:
        return [source.result.entry_id for source in self.sources]


@dataclass
class Turn:
    """One visitor message on its way through the chain, across both passes of the typo retry: the
    inputs that stay the same, and what the passes cost (timings, model calls, blocked facts)."""

    bot: Bot
    history: History
    language: str  # the reply's: canned texts, the rules the model gets
    on_delta: DeltaSink | None = None
    conversation_id: int | None = None
    caller: orders.Caller = field(default_factory=orders.Caller)  # who asks, what the last reply waits for
    # time.monotonic() by which every model call of this turn must be over (CHAT_LLM_TIMEOUT)
    llm_deadline: float | None = None
    timings: dict[str, float] = field(default_factory=lambda: {"rules": 0.0, "search": 0.0, "llm": 0.0})
    calls: list[LLMResult] = field(default_factory=list)
    last: LLMResult | None = None  # what the last model question returned (after any repair)
    repaired: bool = False
    retried_with_fixed: bool = False
    blocked_facts: list[str] = field(default_factory=list)
    voice: Voice = field(default_factory=Voice)  # the visitor's (voice.settings_for)

    @contextmanager
    def timed(self, name: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.timings[name] = self.timings.get(name, 0.0) + _ms(started)


def answer(
    *, bot: Bot, text: str, history: History, on_delta: DeltaSink | None = None, conversation_id: int | None = None,
    caller: orders.Caller | None = None, reading: Reading | None = None,
) -> Reply:
    """The bot's reply to `text`. `history` holds the previous turns, oldest first; `on_delta`
    receives the answer so far while a model streams (only an answer with a valid source streams,
    and the returned Reply always replaces the draft); `conversation_id` labels journal rows;
    `caller` says who asks (order lookups are limited and logged per visitor and address) and
    what the bot's last message waits for (an order number, a second factor); `reading` is what
    `answer_by_rules` made of the same text when it was stored, so the rules and the language check
    run once per turn."""
    started = time.perf_counter()
    caller = caller or orders.Caller()
    read = reading or read_text(bot, text)
    language = caller.awaiting.get("language") or read.language  # an awaited «48213» keeps it
    voice = settings_for(bot, caller.visitor_id or None)
    turn = Turn(
        bot=voice.apply_to(bot), history=history, language=language, on_delta=on_delta,
        conversation_id=conversation_id, caller=caller, llm_deadline=time.monotonic() + settings.CHAT_LLM_TIMEOUT,
        voice=voice,
    )
    reply = _worded(turn, chain(turn, text, retry=True, intent=read.intent))
    reply.timings = {**turn.timings, "total": _ms(started)}
    return reply


@dataclass(frozen=True)
class Reading:
    """What the rules and the language check make of a visitor's text, once per turn: read when the
    message is stored (`answer_by_rules`) and handed on to `answer`."""

    intent: Intent
    language: str


def read_text(bot: Bot, text: str) -> Reading:
    return Reading(intent=classify(text), language=replies.reply_language(bot, text))


def answer_by_rules(*, bot: Bot, text: str) -> tuple[Reading, Reply | None]:
    """What the rules make of `text` (the intent, the language to answer in), and their reply when
    they decide it alone (a greeting, thanks, «вы бот?», a request for a person), exactly as `answer`
    would give it; None when retrieval must run. Reads no rows but the operators' hours (for a
    request for a person), so services can store it in the same transaction as the question."""
    started = time.perf_counter()
    read = read_text(bot, text)
    turn = Turn(bot=bot, history=[], language=read.language)
    _, ruled = _rules(turn, text, read.intent)
    if ruled is not None:
        ruled.timings = {**turn.timings, "total": _ms(started)}
    return read, ruled


def knowledge_for(*, bot: Bot, text: str) -> list[SearchResult]:
    """What step 2 of the chain would put in the prompt for `text`: the same reading (a greeting
    stripped), the same search and the same cut (score >= match, at most prompt.MAX_SOURCES), best
    first. The operators' copilot shows these passages, so it sees exactly what the bot would."""
    read = read_text(bot, text)
    turn = Turn(bot=bot, history=[], language=read.language)
    return [source.result for source in _search(turn, read.intent.rest or text).sources]


def asks_knowledge(text: str) -> bool:
    """Whether the chain would search the knowledge for `text` (not a greeting, thanks, a request
    for a person, an order number): which of a visitor's messages is their question."""
    return classify(text).name in _SEARCH_INTENTS


def _rules(turn: Turn, text: str, intent: Intent | None = None) -> tuple[Intent, Reply | None]:
    """Step 1 of the chain: what the rules make of `text` (unless already read: `intent`), and their
    reply when that is final."""
    if intent is None:
        with turn.timed("rules"):
            intent = classify(text)
    ruled = _rule_reply(turn.bot, intent.name, turn.language)
    return intent, (_finish(turn, ruled, {"route": "rules"}) if ruled is not None else None)


def chain(turn: Turn, text: str, *, retry: bool, intent: Intent | None = None) -> Reply:
    """The answer chain (docs/architecture.md), top to bottom. `retry` allows the one typo retry (never a
    third pass); `intent`: the rules' reading of this very text, when already made."""
    bot, language = turn.bot, turn.language
    intent, ruled = _rules(turn, text, intent)
    if ruled is not None:
        return ruled
    # Order status, from the shop's system and never from a model: the rules found an order
    # question, or the bot's last message asked for the number (or the second factor).
    ordered = _order(turn, text, intent.name)
    if ordered is not None:
        return ordered
    if intent.name not in _SEARCH_INTENTS:  # a new rule the chain does not know yet
        logger.warning("intent %s has no branch in the chain; treated as a question", intent.name)
    found = _search(turn, intent.rest or text)
    ai = _ask_model(turn, text, found, purpose=prompt.PURPOSE if retry else prompt.PURPOSE_FIXED)
    meta: dict[str, Any] = {"topic": intent.topic, "model_intent": ai.intent if ai else None}

    # The model may raise operator/order that the rules missed, only when the rules said "question"
    # and the prompt held no page text: an instruction on a page never moves the conversation.
    if ai and intent.name == "question" and ai.intent in _MODEL_RAISED and not found.sources:
        if ai.intent == "order":
            raised = _order(turn, text, "order", meta | {"model_raised": True})
        else:
            raised = _rule_reply(bot, ai.intent, language)
            raised = raised and _finish(turn, raised, meta | {"route": "model_intent"})
        assert raised is not None
        return raised
    # Products: cards from the catalog rows (answers/products.py); the model may only introduce them.
    offered = _products(turn, text, intent.name, found, ai, meta)
    if offered is not None:
        # No model and no goods: a misspelt topic word («скока стоит дастафка») reads as a product;
        # the speller's reading may be a question the pages answer.
        if retry and ai is None and offered.flags.get("unanswered") and not offered.cards:
            return _spelled(turn, text) or offered
        return offered
    # 1. A valid source number and an answer: the answer, with the link of THAT entry, if that entry
    #    gives every fact of it; otherwise the entry's own words, never the model's.
    if ai and ai.answer and 0 <= ai.source < len(found.sources):
        cited = found.sources[ai.source]
        verdict = checks.check(ai.answer, prompt.cited_known(bot, cited), prompt.secret())
        if verdict.ok:
            reply = _reply(bot, intent.name, found, text=ai.answer, entry=cited.result)
            return _finish(turn, reply, meta | {"route": "sourced", "source_index": ai.source})
        _journal_block(turn, verdict, checked="cited")
        shown = _excerpt_reply(turn, intent.name, found, cited.result, text)
        if shown is not None:
            return _finish(turn, shown, meta | {"route": "retrieval", "kind": cited.result.kind,
                                                "source_index": ai.source, "blocked": "cited"})
        return _finish(turn, _no_answer(bot, intent.name, found, language), meta | {"route": "no_answer"})
    # 2. No source: conversation, no link; blocked when it states any fact but the bot's own name and site.
    if ai and ai.answer and ai.source == NO_SOURCE and "product" not in (intent.name, ai.intent):
        verdict = checks.check(ai.answer, prompt.own_known(bot), prompt.secret())
        if verdict.ok:
            reply = _reply(bot, intent.name, found, text=ai.answer)
            return _finish(turn, reply, meta | {"route": "conversation"})
        _journal_block(turn, verdict, checked="sourceless")
    # Typo retry: the model found nothing, but read the text differently: one more full pass.
    if retry and ai and ai.fixed and _comparable(ai.fixed) != _comparable(text):
        turn.retried_with_fixed = True
        return chain(turn, ai.fixed, retry=False)
    # 3. No model at all: the best entry, if it matches well enough, with its link (among near-ties,
    #    one that gives the kind of fact asked for: asked.py), unless the question is about something
    #    else than that entry, or names what the knowledge never mentions, however close its vector
    #    (knowledge/scope.py; with a model, the model reads the question against every source).
    top = asked.answering(found.results, text, floor=bot.match_threshold) if ai is None else found.top
    if ai is None and top is not None and found.top is not None and found.top.score >= bot.match_threshold:
        off = _off_subject(turn, intent.rest or text, top)
        shown = None if off else _excerpt_reply(turn, intent.name, found, top, text, require_overlap=False)
        if shown is not None:
            # A misspelt word may still find a page, often the wrong one («вгзврат» finds the
            # defects page): when every fix is a word the site uses, the reading as meant answers.
            understood = _spelled(turn, text, on_site_only=True) if retry else None
            if understood is not None:
                return understood
            return _finish(turn, shown, meta | {"route": "retrieval", "kind": top.kind})
        meta["off_subject"] = off or None
    # Typo retry without a model: the text read against the bot's own words and the dictionary
    # (knowledge/spelling.py); one more pass when that changes it, shown only when it answers.
    if retry and ai is None:
        understood = _spelled(turn, text)
        if understood is not None:
            return understood
    # 4. Otherwise: no exact answer, and the way to a person.
    return _finish(turn, _no_answer(bot, intent.name, found, language), meta | {"route": "no_answer"})


# --- the steps' helpers ------------------------------------------------------------------------------


def _spelled(turn: Turn, text: str, *, on_site_only: bool = False) -> Reply | None:
    """The reply to `text` as the speller reads it, led by what was understood («Вы имели в виду:
    …»), when that one more pass answers; None when the speller changes nothing (or, `on_site_only`,
    makes a fix the site never writes) or the pass finds no answer either (the raw text's reply stands)."""
    if not settings.CHAT_SPELLER:
        return None
    with turn.timed("spelling"):
        spelled = spelling.correct(turn.bot.pk, text)
    if not spelled.changes or _comparable(spelled.text) == _comparable(text):
        return None
    if on_site_only and not spelled.on_site:
        return None
    reply = chain(turn, spelled.text, retry=False)
    if reply.flags.get("unanswered"):
        return None
    shown = " ".join(_UNSHOWN.sub(" ", spelled.text).split())
    shown = shown if len(shown) <= UNDERSTOOD_CHARS else shown[:UNDERSTOOD_CHARS] + "…"
    reply.text = replies.say(turn.bot, "understood", language=turn.language, text=shown) + reply.text
    reply.llm_meta["spelling"] = {"understood": spelled.text, "changes": [list(pair) for pair in spelled.changes]}
    return reply


def _rule_reply(bot: Bot, intent: str, language: str) -> Reply | None:
    """Answers decided without retrieval (by the rules, or by the model raising an intent)."""
    if intent == "whoami":
        return _canned(intent, replies.whoami(bot, language=language))
    if intent == "operator":
        if not bot.handoff_enabled:
            return _canned(intent, replies.handoff_disabled(bot, language=language), escalation=True)
        if hours.operators_available(bot):
            text = replies.say(bot, "handoff", language=language)
            return _canned(intent, text, escalation=True, state=STATE_WAITING_OPERATOR)
        # Outside the operators' hours nobody would come: say when they work, offer the contact form.
        schedule = hours.schedule_text(bot, language)
        reply = _canned(intent, replies.out_of_hours(bot, schedule, language=language), escalation=True)
        reply.buttons = replies.handoff_buttons(bot, operators_available=False, language=language)
        return reply
    if intent in {"greeting", "thanks"}:
        return _canned(intent, replies.say(bot, intent, language=language))
    return None


def _canned(intent: str, text: str, *, escalation: bool = False, state: str | None = None) -> Reply:
    return Reply(
        text=text, links=[], buttons=[], intent=intent, source_entry_id=None, sources=[], confidence=None,
        flags={"escalation": True} if escalation else {}, timings={}, state=state,
    )


def _order(turn: Turn, text: str, intent: str, meta: dict[str, Any] | None = None) -> Reply | None:
    """The order route (orders.py) as a Reply: a template filled from the shop's response."""
    said = orders.order_answer(bot=turn.bot, text=text, intent=intent, caller=turn.caller, language=turn.language,
                               conversation_id=turn.conversation_id)
    if said is None:
        return None
    reply = _canned("order", said.text)
    reply.links, reply.buttons = said.links, said.buttons
    return _finish(turn, reply, {**(meta or {}), "route": "order", **said.meta})


def _products(
    turn: Turn, text: str, intent: str, found: Found, ai: ModelAnswer | None, meta: dict[str, Any]
) -> Reply | None:
    """The product route as a Reply: cards copied from the catalog, or the honest no-match."""
    cited = found.sources[ai.source] if ai and 0 <= ai.source < len(found.sources) else None
    view = products.ModelView(ai.intent, ai.answer, ai.product_query, cited) if ai else None
    said = products.product_answer(bot=turn.bot, text=text, intent=intent, model=view, language=turn.language)
    if said is None:
        return None
    if said.blocked is not None:
        _journal_block(turn, said.blocked, checked="cards")
    reply = _reply(turn.bot, "product", found, text=said.text)
    reply.cards, reply.links, reply.buttons = said.cards, said.links, said.buttons
    reply.flags["unanswered"] = said.unanswered
    reply.flags["low_confidence"] = False  # the cards are the catalog's own rows, not a guess from pages
    return _finish(turn, reply, meta | {"route": "product", **said.meta})


def _search(turn: Turn, text: str) -> Found:
    with turn.timed("search"):
        results = search_entries(turn.bot, text, k=SEARCH_K)
    return Found(results=results, sources=prompt.numbered_sources(turn.bot, results))


def _ask_model(turn: Turn, text: str, found: Found, *, purpose: str) -> ModelAnswer | None:
    request = prompt.build_request(
        bot=turn.bot, text=text, history=turn.history, sources=found.sources,
        conversation_id=turn.conversation_id, purpose=purpose, language=turn.language, deadline=turn.llm_deadline,
        voice=turn.voice,
    )
    # Over the month's budget the model is not asked: the chain answers as with no model at all.
    provider = _Recording(providers.provider_within_budget(turn.bot), turn.calls)
    calls_before = len(turn.calls)
    with turn.timed("llm"):
        result = complete_with_repair(
            provider, request, schema_validator(request.schema),
            on_text_delta=_whole_text(turn.on_delta, turn.voice.dictionary),
        )
    turn.last = result
    turn.repaired = turn.repaired or len(turn.calls) - calls_before > 1
    return ModelAnswer.of(result)


def _whole_text(on_delta: DeltaSink | None, words: voice_dictionary.Dictionary) -> TextSink | None:
    """The provider's draft hands over new pieces (already past the checks' gate); the widget wants
    the whole text so far, worded by the bot's dictionary (`Dictionary.draft`: complete sentences)."""
    if on_delta is None:
        return None
    sent: list[str] = []
    shown = [""]

    def sink(piece: str) -> None:
        sent.append(piece)
        draft = words.draft("".join(sent))
        if draft and draft != shown[0]:
            shown[0] = draft
            on_delta(draft)

    return sink


def _reply(bot: Bot, intent: str, found: Found, *, text: str, entry: SearchResult | None = None) -> Reply:
    """A reply after retrieval; with `entry`, it is answered from that entry and carries its link.
    Confidence is that entry's score (else the best one's); low_confidence follows the best score."""
    top_score = found.top.score if found.top else 0.0
    scored = entry or found.top
    return Reply(
        text=text, links=_link(entry) if entry else [], buttons=[], intent=intent,
        source_entry_id=entry.entry_id if entry else None, sources=found.entry_ids,
        confidence=round(scored.score, 4) if scored else None,
        flags={"low_confidence": top_score < bot.confidence_threshold}, timings={},
    )


def _excerpt_reply(
    turn: Turn, intent: str, found: Found, entry: SearchResult, question: str, *, require_overlap: bool = True
) -> Reply | None:
    """The entry's own words for the question (excerpts.py), with its link; in another language
    than the entry's, with a line saying so. None when `require_overlap` and the entry shares no
    word with the question (a blocked answer's entry that is not about the question at all), or
    when nothing of the entry can be shown on its own."""
    if require_overlap and not excerpts.shares_words(question, entry):
        return None
    heading = entry.heading_path.rsplit(" / ", 1)[-1] or entry.title  # what a list's items answer
    text = excerpts.excerpt(entry.text, question, heading=heading)
    if not text:  # nothing the entry says may be shown without what it answers (a bare «Да.»)
        return None
    if replies.text_language(entry.text) not in (None, turn.language):
        text = replies.say(turn.bot, "excerpt_lead", language=turn.language) + text
    return _reply(turn.bot, intent, found, text=text, entry=entry)


def _off_subject(turn: Turn, text: str, entry: SearchResult) -> list[str]:
    """Why `entry` may not be shown for `text` without a model (knowledge/scope.py): the names the
    knowledge never mentions, else the question's subject words when the entry has none of them;
    empty when it may be shown. A question in another language than the knowledge's is not judged
    by the knowledge's words: the embedding model reads across languages, the lexicon does not."""
    if not settings.CHAT_SCOPE_CHECK or replies.text_language(text) not in (None, replies.bot_language(turn.bot)):
        return []
    with turn.timed("search"):
        words = scope.subject_words(text)
        names = scope.names(words)
        unknown = scope.names_unknown(words, selectors.lexicon_words(bot=turn.bot, words=names)) if names else []
        if unknown:
            return unknown
        return [] if excerpts.shares_subject(words, entry) else scope.evidence(words)


def _no_answer(bot: Bot, intent: str, found: Found, language: str) -> Reply:
    reply = _reply(bot, intent, found, text=replies.say(bot, "no_answer", language=language))
    reply.flags["unanswered"] = True
    reply.buttons = replies.handoff_buttons(
        bot, operators_available=hours.operators_available(bot), language=language
    )
    if reply.buttons:
        lead = reply.buttons[0]["id"] == replies.LEAD_BUTTON_ID
        reply.text += replies.say(bot, "no_answer_lead" if lead else "no_answer_handoff", language=language)
    return reply


def _link(result: SearchResult) -> list[dict[str, str]]:
    if not result.url:
        return []
    return [{"url": result.url, "title": result.title or result.url}]


def _journal_block(turn: Turn, verdict: checks.Verdict, *, checked: str) -> None:
    """A blocked answer is journaled with its reason codes and the blocked facts as normalised
    values ("q:45:day"), and whether it was checked against its cited entry or as sourceless:
    never the answer's text."""
    turn.blocked_facts = sorted({*turn.blocked_facts, *verdict.codes})
    journal.run_event_record(
        bot_id=turn.bot.pk, kind=RunEvent.Kind.FILTER_BLOCK, ok=False, route="chat", purpose="answer.facts",
        detail={"codes": verdict.codes, "facts": verdict.keys, "checked": checked},
        conversation_id=turn.conversation_id,
    )


def _worded(turn: Turn, reply: Reply) -> Reply:
    """The reply as the visitor may read it: the bot's dictionary applied (assistant/voice). Every
    sentence dropped for a forbidden word is journaled (the owner's terms, never the text); a reply
    with nothing left becomes "no exact answer", with the way to a person."""
    reply.llm_meta["variant"] = turn.voice.variant or None
    words = turn.voice.dictionary
    if words.empty:
        return reply
    worded = words.word(reply.text)
    if worded.dropped:
        journal.run_event_record(
            bot_id=turn.bot.pk, kind=RunEvent.Kind.FILTER_BLOCK, ok=not worded.emptied, route="chat",
            purpose="voice.forbidden",
            detail={"terms": worded.forbidden, "sentences": worded.dropped, "fallback": worded.emptied,
                    "route": reply.llm_meta.get("route")},
            conversation_id=turn.conversation_id,
        )
    if not worded.emptied:
        reply.text = worded.text
        return reply
    bot, language = turn.bot, turn.language
    fallback = _no_answer(bot, reply.intent, Found(results=[], sources=[]), language)
    reply.text, reply.buttons, reply.links, reply.source_entry_id = fallback.text, fallback.buttons, [], None
    reply.flags = {**reply.flags, "unanswered": True}
    reply.llm_meta["voice_fallback"] = True
    return reply


def _comparable(text: str) -> str:
    """Case, ё and punctuation aside: a "fix" that only adds a question mark is not worth a pass."""
    return " ".join(_NOT_WORD.sub(" ", text.casefold().replace("ё", "е")).split())


def _finish(turn: Turn, reply: Reply, meta: dict[str, Any]) -> Reply:
    """The reply with what the turn cost: provider, model, tokens over every call (repairs and the
    typo retry included), attempts, the last error, and what the checks did."""
    calls, last = turn.calls, turn.last
    reply.llm_meta = {
        **{key: value for key, value in meta.items() if value not in (None, "")},
        "provider": last.provider if last else None,
        "model": last.model if last else None,
        "tokens": {
            "input": sum(c.input_tokens for c in calls), "output": sum(c.output_tokens for c in calls),
            "cache_read": sum(c.cache_read_tokens for c in calls),
            "cache_write": sum(c.cache_write_tokens for c in calls),
        },
        "attempts": sum(c.attempts for c in calls),
        "error": last.error if last else None,
        "repaired": turn.repaired,
        "retried_with_fixed": turn.retried_with_fixed,
        "blocked_facts": turn.blocked_facts,
        "source_index": meta.get("source_index"),
    }
    return reply


class _Recording:
    """The bot's provider, keeping every result it returns: tokens are summed over form repairs
    and both passes, and a pass that made two calls was repaired."""

    name: ClassVar[str] = "recording"
    streams: ClassVar[bool] = True

    def __init__(self, provider: Provider, results: list[LLMResult]) -> None:
        self.provider = provider
        self.bot_id = provider.bot_id
        self.results = results

    def complete_structured(self, request: LLMRequest) -> LLMResult:
        result = self.provider.complete_structured(request)
        self.results.append(result)
        return result

    def stream_structured(self, request: LLMRequest, on_text_delta: TextSink) -> LLMResult:
        result = self.provider.stream_structured(request, on_text_delta)
        self.results.append(result)
        return result


# --- text ----------------------------------------------------------------------------------------------

excerpt = excerpts.excerpt  # re-exported: `manage.py ask` and the tests read excerpts from the chain


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 2)

