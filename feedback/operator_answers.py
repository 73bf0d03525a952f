"""«Оператор ответил: … Добавить в справку?» (issue on feedback, Gaps): what operators answer in
handed-off conversations, to questions no entry covers, proposed to the owner as Q/A entries. One
click accepts (through correction memory, so the next visitor gets the answer) or edits first.

`operator_answers_refresh` reads operator messages from the bot's cursor on, like `gaps_refresh`,
so the Gaps page, the command and Celery beat may all run it. What is not proposed:
- operators' small talk and holding lines («Здравствуйте!», «Минутку, уточню»): nothing to learn;
- a question the bot now answers from an entry (its best match passes the bot's match threshold):
  an entry covers it; whether that entry says the right thing is the review queue's question.
"""

from __future__ import annotations

import re
from typing import Any, Final

from django.db import transaction
from django.utils import timezone

from behavior import intents
from bots.models import Bot
from chat import selectors as chat_selectors
from feedback.models import Gap, GapCursor, OperatorAnswer
from knowledge.models import Entry
from knowledge.search import is_match, search_entries
from review.exceptions import ReviewError
from review.models import Correction
from review.services import ANSWER_MAX, correction_apply

REFRESH_BATCH: Final = 500
SMALL_TALK: Final = frozenset({"greeting", "thanks", "whoami", "operator"})
# Holding lines an operator types while looking something up: short, and nothing in them to keep.
_HOLDING: Final = re.compile(
    r"(минут|секунд|момент|сейчас (посмотр|уточн|провер|узна)|уточн[юя]|провер[юя]|подождите|ожидайте"
    r"|меня зовут|на связи|чем (я )?могу помочь|подключил)",
    re.IGNORECASE,
)
HOLDING_MAX: Final = 80  # characters: a longer message with «уточню» in it usually says more


class ProposalDecided(ReviewError):
    status = 409
    code = "decided"

    def __init__(self) -> None:
        super().__init__("Это предложение уже решено: обновите страницу.")


def answer_part(text: str) -> str:
    """What in an operator's message is worth an entry: the text without a leading greeting, or ""
    for a greeting, thanks or a holding line (short, no figures: «Минутку, уточню»)."""
    intent = intents.classify(text)
    rest = intent.rest.strip() if intent.rest.strip(" ,.!?—-") else ""
    if intent.name in SMALL_TALK or not rest:
        return ""
    holding = len(rest) <= HOLDING_MAX and _HOLDING.search(rest) and not any(ch.isdigit() for ch in rest)
    return "" if holding else rest


def _covered(bot: Bot, question: str) -> bool:
    """The bot would answer `question` from an entry right now."""
    return is_match(bot, search_entries(bot, question, k=1))


@transaction.atomic
def operator_answers_refresh(*, bot: Bot, limit: int = REFRESH_BATCH) -> int:
    """Propose what operators answered since the last refresh; returns how many proposals were made
    or grew. The cursor row is locked, so two refreshes never read a message twice."""
    cursor, _created = GapCursor.objects.select_for_update().get_or_create(bot=bot)
    replies = chat_selectors.operator_replies_after(bot=bot, after_id=cursor.last_operator_message_id, limit=limit)
    if not replies:
        return 0
    known = {p.question_message_id: p for p in
             OperatorAnswer.objects.filter(bot=bot, question_message_id__in={r.question_id for r in replies})}
    changed: dict[int, OperatorAnswer] = {}
    covered: dict[int, bool] = {}
    for reply in replies:
        text = answer_part(reply.text.strip())
        if not text:
            continue
        proposal = known.get(reply.question_id)
        if proposal is None:
            if reply.question_id not in covered:
                covered[reply.question_id] = _covered(bot, reply.question)
            if covered[reply.question_id]:
                continue
            proposal = OperatorAnswer(
                bot=bot, conversation_id=reply.conversation_id, question_message_id=reply.question_id,
                question=reply.question, answer="", answer_message_ids=[], operator_name=reply.author_name,
                answered_at=reply.answered_at,
            )
            known[reply.question_id] = proposal
        if proposal.status != OperatorAnswer.Status.PROPOSED or reply.message_id in proposal.answer_message_ids:
            continue
        if len(proposal.answer) + len(text) + 1 > ANSWER_MAX:
            continue
        proposal.answer = f"{proposal.answer}\n{text}" if proposal.answer else text
        proposal.answer_message_ids = [*proposal.answer_message_ids, reply.message_id]
        proposal.answered_at = reply.answered_at
        changed[reply.question_id] = proposal
    for proposal in changed.values():
        proposal.save()
    cursor.last_operator_message_id = replies[-1].message_id
    cursor.save(update_fields=["last_operator_message_id"])
    return len(changed)


def _locked_proposal(proposal: OperatorAnswer) -> OperatorAnswer:
    locked = OperatorAnswer.objects.select_for_update().select_related("bot").get(pk=proposal.pk)
    if locked.status != OperatorAnswer.Status.PROPOSED:
        raise ProposalDecided()
    return locked


def operator_answer_accept(*, proposal: OperatorAnswer, question: str, answer: str, user: Any = None) -> OperatorAnswer:
    """«Добавить в справку»: the (possibly edited) question and answer become a Q/A entry through
    correction memory (no culprits: the knowledge was missing). Decided once: a second press, a
    second tab or a double submit gets a clear error and adds nothing."""
    with transaction.atomic():
        locked = _locked_proposal(proposal)
        correction = correction_apply(
            bot=locked.bot, question=question, answer=answer, culprit_ids=[], kind=Entry.Kind.QA, user=user,
            origin=Correction.Origin.OPERATOR,
        )
        locked.status, locked.entry = OperatorAnswer.Status.ACCEPTED, correction.entry
        locked.decided_at = timezone.now()
        locked.save(update_fields=["status", "entry", "decided_at"])
        # The Gaps topic this question is in is answered too: by the same entry.
        Gap.objects.filter(bot=locked.bot, status=Gap.Status.OPEN,
                           questions__message_id=locked.question_message_id).update(
            status=Gap.Status.ANSWERED, entry=correction.entry, answered_at=locked.decided_at,
        )
    return locked


def operator_answer_dismiss(*, proposal: OperatorAnswer) -> OperatorAnswer:
    """«Не нужно»: the proposal leaves the list; nothing is written to the knowledge."""
    with transaction.atomic():
        locked = _locked_proposal(proposal)
        locked.status, locked.decided_at = OperatorAnswer.Status.DISMISSED, timezone.now()
        locked.save(update_fields=["status", "decided_at"])
    return locked


def operator_answer_list(*, bot_ids: list[int], bot_id: int | None = None, limit: int = 50) -> list[OperatorAnswer]:
    """Open proposals, newest first."""
    rows = OperatorAnswer.objects.filter(bot_id__in=bot_ids, status=OperatorAnswer.Status.PROPOSED)
    if bot_id:
        rows = rows.filter(bot_id=bot_id)
    return list(rows.select_related("bot").order_by("-answered_at", "-id")[:limit])
