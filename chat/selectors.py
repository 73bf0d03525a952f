"""Reads of the chat. Every query is scoped by conversation (and so by bot): a message id from
another conversation is simply not found."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Final

from django.db.models import Count, DurationField, Exists, ExpressionWrapper, F, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce, Now

from bots.models import Bot
from chat.friction import is_complaint
from chat.models import Conversation, Lead, Message

RESUME_LAST: Final = 50
# Messages the chain sees as history: enough for "а в Казань?" to make sense, short enough for a prompt.
HISTORY_MESSAGES: Final = 6
_HISTORY_ROLES: Final = (Message.Role.VISITOR, Message.Role.BOT, Message.Role.OPERATOR)


def bot_for_widget(public_key: str) -> Bot | None:
    if not public_key or len(public_key) > 64:
        return None
    return Bot.objects.filter(public_key=public_key).first()


def open_conversation(*, bot: Bot, visitor_id: str) -> Conversation | None:
    return (
        Conversation.objects.select_related("bot").filter(bot=bot, visitor_id=visitor_id)
        .exclude(state=Conversation.State.CLOSED)
        .first()
    )


def message_by_client_id(*, conversation: Conversation, client_msg_id: str) -> Message | None:
    if not client_msg_id:
        return None
    return Message.objects.filter(conversation=conversation, client_msg_id=client_msg_id).first()


def bot_reply_to(message: Message) -> Message | None:
    return Message.objects.filter(reply_to=message, role=Message.Role.BOT).first()


def messages_after(*, conversation: Conversation, last_seen_id: int | None) -> list[Message]:
    """What a reconnecting widget missed: every message after `last_seen_id`, oldest first; the
    last RESUME_LAST messages when the widget has seen nothing yet."""
    messages = Message.objects.filter(conversation=conversation)
    if last_seen_id is not None:
        return list(messages.filter(id__gt=last_seen_id).order_by("id"))
    latest = list(messages.order_by("-id")[:RESUME_LAST])
    return latest[::-1]


def newest_message(conversation: Conversation) -> Message | None:
    return Message.objects.filter(conversation=conversation).order_by("-id").first()


def question_left_unanswered(conversation: Conversation) -> Message | None:
    """The visitor's last word when nobody answered it: the newest message anyone said (system notes
    aside) is the visitor's, written while a person was awaited or present (`to_operator`), and it
    is not itself a request for a person (answering that would hand the conversation over again)."""
    newest = Message.objects.filter(conversation=conversation).exclude(role=Message.Role.SYSTEM).order_by("-id").first()
    if newest is None or newest.role != Message.Role.VISITOR or not newest.flag("to_operator"):
        return None
    return None if newest.intent == "operator" else newest


def owed_after_return(*, message_id: int) -> Message | None:
    """`question_left_unanswered` of its conversation, read again when the bot comes to answer it
    (with the conversation and its bot): None once the conversation is not the bot's, or the
    visitor or anyone else has written since."""
    message = Message.objects.select_related("conversation__bot").filter(pk=message_id).first()
    if message is None or message.conversation.state != Conversation.State.BOT:
        return None
    owed = question_left_unanswered(message.conversation)
    return message if owed is not None and owed.pk == message.pk else None


def last_visitor_messages(conversation: Conversation, limit: int = 5) -> list[Message]:
    """The visitor's latest messages, newest first: where an operator's copilot finds the question."""
    return list(Message.objects.filter(conversation=conversation, role=Message.Role.VISITOR).order_by("-id")[:limit])


def history_before(message: Message, limit: int = HISTORY_MESSAGES) -> list[tuple[str, str]]:
    """The turns before `message`, oldest first, as (role, text); system notes are left out."""
    rows = (
        Message.objects.filter(conversation_id=message.conversation_id, id__lt=message.pk, role__in=_HISTORY_ROLES)
        .order_by("-id")
        .values_list("role", "text")[:limit]
    )
    return [(role, text) for role, text in rows][::-1]


def history_and_last_meta(
    message: Message, limit: int = HISTORY_MESSAGES
) -> tuple[list[tuple[str, str]], dict[str, Any]]:
    """`history_before` and, in the same query, the llm_meta of the message just before `message`
    when the bot wrote it (what that reply waits for: an order number, a second factor), else {}."""
    rows = list(
        Message.objects.filter(conversation_id=message.conversation_id, id__lt=message.pk, role__in=_HISTORY_ROLES)
        .order_by("-id")
        .values_list("role", "text", "llm_meta")[:limit]
    )
    last_meta = rows[0][2] if rows and rows[0][0] == Message.Role.BOT and isinstance(rows[0][2], dict) else {}
    return [(role, text) for role, text, _meta in rows][::-1], last_meta


def latest_and_same(
    conversation: Conversation, *, client_msg_id: str, limit: int = 4
) -> tuple[list[Message], Message | None]:
    """In one query: the latest `limit` messages (newest first, what friction detection compares
    a new message with) and the message already stored with `client_msg_id` (a resend), if any."""
    latest = Message.objects.filter(conversation_id=conversation.pk).order_by("-id").values("id")[:limit]
    wanted = Q(pk__in=Subquery(latest))
    if client_msg_id:
        wanted |= Q(client_msg_id=client_msg_id)
    rows = list(
        Message.objects.filter(wanted, conversation_id=conversation.pk).order_by("-id")
        .only("id", "role", "text", "flags", "client_msg_id")
    )
    same = next((m for m in rows if client_msg_id and m.client_msg_id == client_msg_id), None)
    return [m for m in rows if m is not same][:limit], same


def recent_messages(conversation: Conversation, limit: int = 4) -> list[Message]:
    """The latest messages, newest first: what friction detection compares a new message with."""
    # Through the plain manager: the related manager would re-read each row's deferred conversation_id.
    rows = Message.objects.filter(conversation_id=conversation.pk).order_by("-id")
    return list(rows.only("id", "role", "text", "flags")[:limit])


# --- for the operators' inbox (assistant/inbox) -----------------------------------------------------

INBOX_RECENT: Final = 50
INBOX_WAITING_MAX: Final = 1000
TRANSCRIPT_LAST: Final = 500


def _with_last_messages(conversations: list[Conversation]) -> list[Conversation]:
    """Attach each conversation's bot and `last_message`: one query each for all of them. A bot
    is one shared instance for all its rows, not a copy per row read through a join of its wide
    row (with 500 waiting conversations, that copy was a third of the queue's time)."""
    bots = Bot.objects.in_bulk({c.bot_id for c in conversations})
    ids = [c.last_message_id for c in conversations if getattr(c, "last_message_id", None)]  # type: ignore[attr-defined]
    by_id = Message.objects.in_bulk(ids)
    for conversation in conversations:
        conversation.bot = bots[conversation.bot_id]
        conversation.last_message = by_id.get(getattr(conversation, "last_message_id", None))  # type: ignore[attr-defined]
    return conversations


def _inbox_rows(queryset: QuerySet[Conversation]) -> QuerySet[Conversation]:
    """With each row's last message said by a person or the bot (system notes make a poor preview);
    the bot comes from `_with_last_messages`."""
    last = (
        Message.objects.filter(conversation=OuterRef("pk")).exclude(role=Message.Role.SYSTEM)
        .order_by("-id").values("id")[:1]
    )
    return queryset.select_related("assigned_to").annotate(last_message_id=Subquery(last))


@dataclass(frozen=True)
class InboxQueue:
    waiting: list[Conversation]  # longest waiting first
    mine: list[Conversation]  # held by the operator, latest activity first
    recent: list[Conversation]  # everything else of the operator's bots, latest first

    def all(self) -> list[Conversation]:
        return [*self.waiting, *self.mine, *self.recent]


def inbox_queue(*, bot_ids: Collection[int], operator_id: int, recent: int = INBOX_RECENT) -> InboxQueue:
    """What an operator's inbox lists: every waiting conversation of their bots, the ones they
    hold, and the latest others. Five queries whatever the size of the queue."""
    base = Conversation.objects.filter(bot_id__in=list(bot_ids))
    waiting = list(_inbox_rows(base.filter(state=Conversation.State.WAITING_OPERATOR))
                   .order_by("waiting_since", "pk")[:INBOX_WAITING_MAX])
    held = {"state": Conversation.State.OPERATOR, "assigned_to_id": operator_id}
    mine = list(_inbox_rows(base.filter(**held)).order_by("-updated_at"))
    # Neither waiting nor mine, said as conditions: a list of the ids shown made PostgreSQL
    # compare each row with hundreds of ids.
    others = list(_inbox_rows(base.exclude(state=Conversation.State.WAITING_OPERATOR).exclude(**held))
                  .order_by("-updated_at")[:recent])
    _with_last_messages([*waiting, *mine, *others])
    return InboxQueue(waiting=waiting, mine=mine, recent=others)


def inbox_conversation(*, bot_ids: Collection[int], conversation_id: int) -> Conversation | None:
    """One conversation of these bots, as the inbox shows it; None for any other id."""
    rows = list(_inbox_rows(Conversation.objects.filter(bot_id__in=list(bot_ids), pk=conversation_id)))
    return _with_last_messages(rows)[0] if rows else None


def inbox_conversation_id(*, bot_ids: Collection[int], conversation_id: int) -> int | None:
    """The id when the conversation belongs to one of these bots, else None: one primary-key
    lookup, for an operator's action that needs nothing but the right to act."""
    rows = Conversation.objects.filter(bot_id__in=list(bot_ids), pk=conversation_id).values_list("pk", flat=True)
    return next(iter(rows), None)


def transcript(conversation: Conversation, limit: int = TRANSCRIPT_LAST) -> list[Message]:
    """The conversation's messages, oldest first (the last `limit`)."""
    latest = list(Message.objects.filter(conversation_id=conversation.pk).order_by("-id")[:limit])
    return latest[::-1]


def unanswered_question_ids(messages: list[Message]) -> set[int]:
    """The visitor messages the bot could not answer (their reply said «нет точного ответа»)."""
    return {m.reply_to_id for m in messages if m.role == Message.Role.BOT and m.flag("unanswered") and m.reply_to_id}


def waiting_longer_than_alert() -> list[Conversation]:
    """Waiting conversations past their bot's alert time that no e-mail has gone out for."""
    limit = ExpressionWrapper(F("bot__operator_alert_minutes") * timedelta(minutes=1), output_field=DurationField())
    return list(
        Conversation.objects.filter(state=Conversation.State.WAITING_OPERATOR, alerted_at__isnull=True)
        .annotate(limit=limit)
        .filter(waiting_since__lt=Now() - F("limit"))
        .select_related("bot")
        .order_by("waiting_since")[:500]
    )


def waiting_ids(bot_id: int, *, limit: int = 100) -> list[int]:
    """The bot's conversations waiting for an operator, longest wait first (who is given one next)."""
    waiting = Conversation.objects.filter(bot_id=bot_id, state=Conversation.State.WAITING_OPERATOR)
    return list(waiting.order_by("waiting_since", "pk").values_list("pk", flat=True)[:limit])


def held_counts(bot_id: int, operator_ids: Collection[int]) -> dict[int, int]:
    """How many of the bot's conversations each of these operators holds now (0 for none)."""
    held = (Conversation.objects.filter(bot_id=bot_id, state=Conversation.State.OPERATOR,
                                        assigned_to_id__in=list(operator_ids))
            .values("assigned_to_id").annotate(n=Count("pk")))
    counts = {row["assigned_to_id"]: row["n"] for row in held}
    return {pk: counts.get(pk, 0) for pk in operator_ids}


def leads_for_bots(*, bot_ids: Collection[int]) -> QuerySet[Lead]:
    """The leads of these bots, newest first."""
    return Lead.objects.filter(bot_id__in=list(bot_ids)).select_related("bot", "conversation").order_by("-created_at")
# --- for the layers above chat (review, feedback): flagged answers, gaps, outcomes -----------------
# They read the chat only through these functions (docs/architecture.md, "Apps, lowest first").

_CANNED_ROUTES: Final = frozenset({"rules", "model_intent"})
# Intents that ask nothing: the operator button, a greeting, thanks, «who are you».
NOT_QUESTIONS: Final = frozenset({"operator", "greeting", "thanks", "whoami"})
# How many of the visitor's latest messages the question before a note or an operator's reply is sought in.
QUESTION_LOOKBACK: Final = 5
REVIEW_CONTEXT: Final = 2  # visitor messages shown before the answer under review


def is_canned(message: Message) -> bool:
    """A reply the rules wrote (greeting, «зову оператора»): nothing in it for an owner to correct."""
    return (message.llm_meta or {}).get("route") in _CANNED_ROUTES


@dataclass(frozen=True)
class ReviewTarget:
    """The bot answer a flagged message asks an owner to look at, and why."""

    answer: Message
    question: str
    reasons: frozenset[str]  # low_confidence | friction | escalation


def answer_reasons(answer: Message) -> set[str]:
    reasons = set()
    if answer.flag("low_confidence") or answer.flag("unanswered"):
        reasons.add("low_confidence")
    if answer.flag("friction") or answer.rating < 0:
        reasons.add("friction")
    return reasons


def _answer_before(message: Message) -> Message | None:
    """The latest real (not canned) bot answer before `message` in its conversation."""
    rows = Message.objects.filter(conversation_id=message.conversation_id, role=Message.Role.BOT, id__lt=message.pk)
    for candidate in rows.select_related("reply_to").order_by("-id")[:5]:
        if not is_canned(candidate):
            return candidate
    return None


def review_target(message_id: int) -> ReviewTarget | None:
    """Resolve a flagged message (see chat.signals) to the answer to review. A handoff note or the
    canned «зову оператора» points at the answer before it: that is what did not help. None when
    there is nothing to judge (the first thing the visitor did was to ask for a person)."""
    message = Message.objects.select_related("reply_to").filter(pk=message_id).first()
    if message is None:
        return None
    escalation = message.role == Message.Role.SYSTEM or (message.role == Message.Role.BOT and is_canned(message))
    if escalation and not message.flag("escalation"):
        return None
    answer = _answer_before(message) if escalation else message
    if answer is None or answer.role != Message.Role.BOT:
        return None
    reasons = answer_reasons(answer) | ({"escalation"} if escalation else set())
    question = answer.reply_to.text if answer.reply_to else ""
    # The answer to «нет, не то» is not reviewed on its own: the complaint flagged the answer before it.
    if not reasons or (not escalation and is_complaint(question)):
        return None
    return ReviewTarget(answer=answer, question=question, reasons=frozenset(reasons))


@dataclass(frozen=True)
class AnswerContext:
    before: list[Message]  # the visitor's messages since the previous bot answer, oldest first
    after: Message | None  # what the visitor said next (often the complaint)


def answer_context(answer: Message) -> AnswerContext:
    earlier = list(
        Message.objects.filter(conversation_id=answer.conversation_id, id__lt=answer.pk)
        .exclude(role=Message.Role.SYSTEM).order_by("-id").only("id", "role", "text", "created_at")[:REVIEW_CONTEXT + 1]
    )
    before: list[Message] = []
    for message in earlier:
        if message.role != Message.Role.VISITOR:
            break
        before.append(message)
    after = (
        Message.objects.filter(conversation_id=answer.conversation_id, id__gt=answer.pk, role=Message.Role.VISITOR)
        .order_by("id").only("id", "role", "text", "created_at").first()
    )
    return AnswerContext(before=before[:REVIEW_CONTEXT][::-1], after=after)


def flagged_message_ids(*, bot: Bot, since: datetime) -> list[int]:
    """Flagged bot answers and handoff notes since `since`: the review queue's catch-up sweep."""
    flagged = (
        Q(flags__low_confidence=True) | Q(flags__unanswered=True) | Q(flags__friction=True)
        | Q(flags__escalation=True) | Q(rating__lt=0)
    )
    rows = Message.objects.filter(
        flagged, bot=bot, created_at__gte=since, role__in=[Message.Role.BOT, Message.Role.SYSTEM]
    )
    return list(rows.order_by("id").values_list("id", flat=True))


@dataclass(frozen=True)
class GapQuestion:
    """A visitor question the bot did not answer well: «нет точного ответа», an answer with low
    confidence, or a conversation handed to an operator."""

    message_id: int  # the visitor's question
    trigger_id: int  # the bot answer or handoff note that made it a gap
    text: str
    asked_at: datetime
    reason: str  # unanswered | low_confidence | handoff


def gap_questions_after(*, bot: Bot, after_id: int, limit: int = 500) -> list[GapQuestion]:
    """Gap questions whose trigger message id is above `after_id`, oldest first (a cursor read)."""
    triggers = Message.objects.filter(bot=bot, id__gt=after_id).filter(
        (Q(role=Message.Role.BOT) & (Q(flags__unanswered=True) | Q(flags__low_confidence=True)))
        | (Q(role=Message.Role.SYSTEM) & Q(flags__escalation=True))
    )
    out: list[GapQuestion] = []
    for trigger in triggers.select_related("reply_to").order_by("id")[:limit]:
        if trigger.role == Message.Role.BOT and is_canned(trigger):
            continue
        question = trigger.reply_to if trigger.role == Message.Role.BOT else _question_before(trigger)
        if question is None or question.intent in NOT_QUESTIONS or is_complaint(question.text):
            continue
        reason = (
            "handoff" if trigger.role == Message.Role.SYSTEM
            else "unanswered" if trigger.flag("unanswered") else "low_confidence"
        )
        out.append(GapQuestion(message_id=question.pk, trigger_id=trigger.pk, text=question.text,
                               asked_at=question.created_at, reason=reason))
    return out


@dataclass(frozen=True)
class OperatorReply:
    """What an operator wrote in answer to a visitor's question: one message of theirs."""

    message_id: int
    question_id: int
    question: str
    text: str
    author_name: str
    conversation_id: int
    answered_at: datetime


def operator_replies_after(*, bot: Bot, after_id: int, limit: int = 500) -> list[OperatorReply]:
    """Operator messages of `bot` with an id above `after_id`, oldest first (a cursor read), each with
    the visitor's last real question before it (a request for a person, a greeting or thanks is not
    one; as in `_question_before`, only the last QUESTION_LOOKBACK visitor messages are looked at);
    messages with no such question are left out. Two statements however many replies: the
    question's id is a subquery of the first, the questions' texts are the second."""
    rows = list(
        Message.objects.filter(bot=bot, id__gt=after_id, role=Message.Role.OPERATOR)
        .annotate(question_id=_question_before_id())
        .only("id", "text", "author_name", "conversation_id", "created_at").order_by("id")[:limit]
    )
    ids = {row.question_id for row in rows if row.question_id is not None}
    questions = Message.objects.only("id", "text").in_bulk(ids) if ids else {}
    out: list[OperatorReply] = []
    for message in rows:
        question = questions.get(message.question_id)
        if question is None or is_complaint(question.text):
            continue
        out.append(OperatorReply(
            message_id=message.pk, question_id=question.pk, question=question.text, text=message.text,
            author_name=message.author_name, conversation_id=message.conversation_id, answered_at=message.created_at,
        ))
    return out


def _question_before_id() -> Subquery:
    """`_question_before` as a subquery of a query over messages: the id of the newest visitor
    message before the outer one that is a question, among the last QUESTION_LOOKBACK ones."""
    visitor = Message.Role.VISITOR
    # The oldest of the lookback window (none when there are fewer): its id bounds the search.
    window = Message.objects.filter(
        conversation_id=OuterRef(OuterRef("conversation_id")), id__lt=OuterRef(OuterRef("pk")), role=visitor
    ).order_by("-id").values("id")[QUESTION_LOOKBACK - 1:QUESTION_LOOKBACK]
    questions = (
        Message.objects.filter(conversation_id=OuterRef("conversation_id"), id__lt=OuterRef("pk"), role=visitor)
        .exclude(intent__in=NOT_QUESTIONS).filter(id__gte=Coalesce(Subquery(window), 0)).order_by("-id")
    )
    return Subquery(questions.values("id")[:1])


def last_message_id(*, bot: Bot) -> int:
    return Message.objects.filter(bot=bot).order_by("-id").values_list("id", flat=True).first() or 0


def _question_before(note: Message) -> Message | None:
    """The visitor's last real question before a handoff note or an operator's message («позовите
    оператора» is not one)."""
    rows = Message.objects.filter(conversation_id=note.conversation_id, id__lt=note.pk, role=Message.Role.VISITOR)
    for message in rows.order_by("-id")[:QUESTION_LOOKBACK]:
        if message.intent not in NOT_QUESTIONS:
            return message
    return None


@dataclass(frozen=True)
class ConversationFacts:
    """What happened in one conversation, for its outcome."""

    conversation_id: int
    started_at: datetime
    state: str
    outcome: str  # as chat stored it ("" when nobody set one)
    visitor_messages: int
    bot_answers: int
    operator_messages: int
    handed_off: bool
    last_answer_unanswered: bool
    lead: bool = False  # the visitor left a contact in the widget's form


def conversation_facts(*, bot: Bot, updated_before: datetime, updated_after: datetime) -> list[ConversationFacts]:
    """Conversations of `bot` last updated in (updated_after, updated_before], with counts."""
    last_bot = Message.objects.filter(conversation=OuterRef("pk"), role=Message.Role.BOT).order_by("-id")
    rows = (
        Conversation.objects.filter(bot=bot, updated_at__gt=updated_after, updated_at__lte=updated_before)
        .annotate(
            n_visitor=Count("messages", filter=Q(messages__role=Message.Role.VISITOR)),
            n_bot=Count("messages", filter=Q(messages__role=Message.Role.BOT)),
            n_operator=Count("messages", filter=Q(messages__role=Message.Role.OPERATOR)),
            n_handoff=Count("messages", filter=Q(messages__role=Message.Role.SYSTEM, messages__flags__escalation=True)),
            last_unanswered=Subquery(last_bot.values("flags__unanswered")[:1]),
            has_lead=Exists(Lead.objects.filter(conversation=OuterRef("pk"))),
        )
        .values_list("pk", "created_at", "state", "outcome", "n_visitor", "n_bot", "n_operator", "n_handoff",
                     "last_unanswered", "has_lead")
    )
    return [
        ConversationFacts(
            conversation_id=pk, started_at=created, state=state, outcome=outcome, visitor_messages=n_visitor,
            bot_answers=n_bot, operator_messages=n_operator, handed_off=bool(n_handoff),
            last_answer_unanswered=bool(unanswered), lead=bool(has_lead),
        )
        for pk, created, state, outcome, n_visitor, n_bot, n_operator, n_handoff, unanswered, has_lead in rows
    ]


def message_by_id(*, bot_id: int, message_id: int) -> Message | None:
    """The message with its conversation (the review queue names the visitor: one query)."""
    return Message.objects.select_related("conversation").filter(pk=message_id, bot_id=bot_id).first()


# --- for the REST API: one bot's conversations, messages and leads --------------------------------


def conversations_of(*, bot: Bot) -> QuerySet[Conversation]:
    return Conversation.objects.filter(bot=bot)


def conversation_messages(*, conversation: Conversation) -> list[Message]:
    """The whole transcript, oldest first."""
    return list(Message.objects.filter(bot_id=conversation.bot_id, conversation=conversation).order_by("id"))


def leads_of(*, bot: Bot) -> QuerySet[Lead]:
    return Lead.objects.filter(bot=bot)


@dataclass(frozen=True)
class ArmCounts:
    """Conversations of one experiment arm and how many of them had each outcome: `answered` — the
    bot answered a question (not a greeting, not «нет точного ответа»); `thumbs_down` — a visitor
    rated an answer «не помогло»; `handoff` — an operator was asked for; `lead` — a contact was left."""

    variant: str
    conversations: int
    answered: int
    thumbs_down: int
    handoff: int
    lead: int


def variant_counts(*, bot: Bot, experiment_id: int) -> dict[str, ArmCounts]:
    """Outcome counts per arm ("a", "b") of experiment `experiment_id`, from the conversations that
    recorded the arm (`Conversation.variant`); one query."""
    prefix = f"{experiment_id}:"
    bot_messages = Message.objects.filter(conversation=OuterRef("pk"), role=Message.Role.BOT)
    answered = bot_messages.exclude(intent__in=NOT_QUESTIONS).exclude(flags__has_key="unanswered")
    handoff = Message.objects.filter(conversation=OuterRef("pk"), role=Message.Role.SYSTEM, flags__escalation=True)
    rows = (
        Conversation.objects.filter(bot=bot, variant__startswith=prefix)
        .annotate(
            was_answered=Exists(answered), was_down=Exists(bot_messages.filter(rating=-1)),
            was_handed=Exists(handoff), had_lead=Exists(Lead.objects.filter(conversation=OuterRef("pk"))),
        )
        .values("variant")
        .annotate(
            n=Count("pk"), n_answered=Count("pk", filter=Q(was_answered=True)),
            n_down=Count("pk", filter=Q(was_down=True)), n_handed=Count("pk", filter=Q(was_handed=True)),
            n_lead=Count("pk", filter=Q(had_lead=True)),
        )
    )
    counts = {arm: ArmCounts(arm, 0, 0, 0, 0, 0) for arm in ("a", "b")}
    for row in rows:
        arm = row["variant"][len(prefix):]
        if arm in counts:
            counts[arm] = ArmCounts(arm, row["n"], row["n_answered"], row["n_down"], row["n_handed"], row["n_lead"])
    return counts
# --- for the owner dashboard: counts over a period, each one indexed aggregate -------------------


def activity_counts(*, bot: Bot, since: datetime) -> dict[str, int]:
    """Conversations started, answers rated thumbs-down and leads left since `since` (three counts,
    each on its own (bot, created_at) index, so they stay fast at tens of thousands of rows)."""
    return {
        "conversations": Conversation.objects.filter(bot=bot, created_at__gte=since).count(),
        "thumbs_down": Message.objects.filter(bot=bot, rating=-1, created_at__gte=since).count(),
        "leads": Lead.objects.filter(bot=bot, created_at__gte=since).count(),
    }


def live_counts(*, bot: Bot, since: datetime) -> dict[str, int]:
    """What happened since `since`, counted as it happens (the outcomes settle later): conversations
    the bot answered with nobody asked for, conversations handed to a person, and the bot's honest
    no-answers. Two aggregates, each on a (bot, created_at) index."""
    started = Conversation.objects.filter(bot=bot, created_at__gte=since).aggregate(
        answered=Count("pk", filter=Q(answered_at__isnull=False, handed_off_at__isnull=True)),
        handed_off=Count("pk", filter=Q(handed_off_at__isnull=False)),
    )
    no_answer = Message.objects.filter(bot=bot, role=Message.Role.BOT, flags__unanswered=True,
                                       created_at__gte=since).count()
    return {"answered": started["answered"], "handed_off": started["handed_off"], "unanswered": no_answer}


@dataclass(frozen=True)
class AskedQuestion:
    text: str
    times: int  # how many visitors' messages asked it in these words


def recent_questions(*, bot: Bot, since: datetime, limit: int = 200) -> list[AskedQuestion]:
    """The bot's visitors' questions since `since`, one row per wording (most asked first): what a
    correction about to be saved is checked against (review/reach.py)."""
    rows = (
        Message.objects.filter(bot=bot, role=Message.Role.VISITOR, created_at__gte=since)
        .exclude(intent__in=NOT_QUESTIONS)
        .values("text").annotate(times=Count("id")).order_by("-times", "text")
    )
    return [AskedQuestion(text=row["text"], times=row["times"]) for row in rows[: limit * 2]
            if 3 <= len(row["text"].strip()) <= 300 and not is_complaint(row["text"])][:limit]


def question_id_of(*, message_id: int) -> int | None:
    """The visitor's question a bot answer replied to (its id), if any."""
    return Message.objects.filter(pk=message_id).values_list("reply_to_id", flat=True).first()


def conversations_by_channel(*, bot: Bot, since: datetime) -> dict[str, int]:
    """How many conversations each channel (the widget, a messenger) started since `since`."""
    rows = (Conversation.objects.filter(bot=bot, created_at__gte=since).values("channel")
            .annotate(count=Count("pk")).order_by())
    return {row["channel"]: row["count"] for row in rows}
