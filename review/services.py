"""Writes of the review layer: queue items from flagged answers, decisions, and correction memory.

Correction memory (docs/architecture.md) is one function, `correction_apply`, and one transaction: the owner's
answer becomes an Entry (through knowledge.services, the one writer of entries) with its vector, so
the next message finds it, paraphrases included; the entries that produced the wrong answer are
flagged `review_needed` and score lower in search until the owner edits them or clears the flag;
a Correction row links the review item, the new entry and the culprits. `correction_undo` puts
both sides back. The correction is an ordinary source of the answer chain: the model still has to
cite it, the fact check still runs, and the visitor's link leads to its public answer page.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Collection, Sequence
from typing import Any, Final

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from bots.models import Bot
from chat import friction
from chat import selectors as chat_selectors
from knowledge import selectors as knowledge_selectors
from knowledge import services as knowledge_services
from knowledge.models import Entry, Wording
from knowledge.versions import REASON_CORRECTION, REASON_CORRECTION_UNDO, REASON_REVIEW_ITEM, reason_written
from review import signals
from review.exceptions import (
    AlreadyDecided,
    AnswerEmpty,
    AnswerTooLong,
    DecisionUnknown,
    ItemNotFound,
    NotDecided,
    QuestionInvalid,
    WordingTaken,
)
from review.models import Correction, CorrectionCulprit, ReviewItem

# The same limits as an imported Q/A pair (knowledge/importing.py): an answer is a few paragraphs.
ANSWER_MAX: Final = 5000
QUESTION_MAX: Final = 1000
_CONTROL: Final = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2060-\u2064\ufeff]")

_WORD: Final = re.compile(r"\w+")
# How many of a conversation's latest pending items a new flagged answer is compared with.
REPEAT_CANDIDATES: Final = 20
# ... and how many of the bot's latest pending items, for the same question from another conversation.
ELSEWHERE_CANDIDATES: Final = 200
_LOCK_NAMESPACE: Final = 0x52455649  # pg_advisory_xact_lock's first key: "REVI", this module's own

Decision = ReviewItem.Decision


def clean_answer(text: str) -> str:
    text = _CONTROL.sub("", (text or "").replace("\r\n", "\n").replace("\r", "\n")).strip()
    if not text:
        raise AnswerEmpty()
    if len(text) > ANSWER_MAX:
        raise AnswerTooLong(len(text), ANSWER_MAX)
    return text


def clean_question(text: str) -> str:
    text = " ".join(_CONTROL.sub("", text or "").split())
    if not text:
        raise QuestionInvalid(_("Вопрос пустой: напишите, о чём спрашивают посетители."))
    if len(text) > QUESTION_MAX:
        raise QuestionInvalid(ngettext("Вопрос слишком длинный: %(length)s знак при пределе %(limit)s.",
                                       "Вопрос слишком длинный: %(length)s знаков при пределе %(limit)s.",
                                       len(text)) % {"length": len(text), "limit": QUESTION_MAX})
    return text


WORDINGS_MAX: Final = 20  # more ways to ask one question, given at once


def clean_wordings(texts: Sequence[str]) -> list[str]:
    """More ways to ask a question, each checked like the question; empty lines are dropped."""
    wordings = [clean_question(text) for text in texts if text.strip()]
    if len(wordings) > WORDINGS_MAX:
        raise QuestionInvalid(_("Не больше %(n)s формулировок вопроса за раз.") % {"n": WORDINGS_MAX})
    return wordings


def answer_url(bot: Bot, key: str) -> str:
    """The public page of an owner's answer: the link a visitor sees under an answer taken from it."""
    return settings.SPRAVKA_PUBLIC_URL + reverse("review:answer", args=[bot.public_key, key])


# --- queue items ------------------------------------------------------------------------------------


def _words(text: str) -> str:
    return " ".join(_WORD.findall(text.casefold().replace("ё", "е")))


def same_question(first: str, second: str) -> bool:
    """Word for word (case, punctuation and ё aside), or the same in other words by the chat's
    own rephrase rule (the one that raises friction for «the same question asked again»)."""
    a, b = _words(first), _words(second)
    return (bool(a) and a == b) or friction.is_rephrase(first, second)


def _record_locks(conversation_id: int, bot_id: int, question: str) -> None:
    """Two flags of one conversation recorded at once (the receiver and the sweep), or two
    conversations asking the same question at once, must not both find no item and add two: one at a
    time per conversation and per bot and question, to the commit. Both are taken in one statement,
    in that order, before any row lock, so no two recordings wait on each other."""
    words = _words(question) or f"#{conversation_id}"
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_advisory_xact_lock(%s, %s), pg_advisory_xact_lock(%s, hashtext(%s))",
            [_LOCK_NAMESPACE, conversation_id % 2**31, _LOCK_NAMESPACE + 1, f"{bot_id}:{words}"],
        )


def _item_of(answer_id: int) -> ReviewItem | None:
    return (
        ReviewItem.objects.select_for_update()
        .filter(Q(message_id=answer_id) | Q(repeat_ids__contains=[answer_id])).first()
    )


def _repeated(conversation_id: int, question: str) -> ReviewItem | None:
    """The conversation's pending item for the same question, newest first."""
    rows = (
        ReviewItem.objects.select_for_update()
        .filter(conversation_id=conversation_id, status=ReviewItem.Status.PENDING)
        .order_by("-answered_at", "-id")[:REPEAT_CANDIDATES]
    )
    return next((item for item in rows if same_question(item.question, question)), None)




def _asked_elsewhere(bot_id: int, question: str) -> ReviewItem | None:
    """The bot's pending item for the same question word for word (case, punctuation and ё aside)
    from another conversation: several visitors asking it make one item with a count. The candidates
    are read without locks; only the one found is locked (and re-checked)."""
    words = _words(question)
    if not words:
        return None
    rows = (
        ReviewItem.objects.filter(bot_id=bot_id, status=ReviewItem.Status.PENDING)
        .order_by("-answered_at", "-id").only("pk", "question")[:ELSEWHERE_CANDIDATES]
    )
    found = next((item.pk for item in rows if _words(item.question) == words), None)
    if found is None:
        return None
    return ReviewItem.objects.select_for_update().filter(pk=found, status=ReviewItem.Status.PENDING).first()


def _repeat_add(item: ReviewItem, target: chat_selectors.ReviewTarget) -> ReviewItem:
    """Count another flagged answer to the item's question: one UPDATE, no new row, no history
    entry (the item's history records what people decided, not how often visitors asked)."""
    answer = target.answer
    item.repeat_ids = sorted({*item.repeat_ids, answer.pk})
    item.repeats = 1 + len(item.repeat_ids)
    item.last_seen_at = max(item.last_seen_at or item.answered_at, answer.created_at)
    item.reasons = sorted(set(item.reasons) | target.reasons)
    ReviewItem.objects.filter(pk=item.pk).update(
        repeat_ids=item.repeat_ids, repeats=item.repeats, last_seen_at=item.last_seen_at, reasons=item.reasons
    )
    return item


def review_item_record(*, message_id: int) -> ReviewItem | None:
    """Put the answer a flagged message points at into the queue, or add the new reason to its item.
    The same question asked again in the conversation (its answer flagged too), or word for word
    in another conversation, is counted on the pending item the first asking made, with the new
    reasons, instead of queued again.
    Idempotent: the unique `message`, `repeat_ids` and a lock per conversation decide races."""
    target = chat_selectors.review_target(message_id)
    if target is None:
        return None
    answer = target.answer
    with transaction.atomic():
        _record_locks(answer.conversation_id, answer.bot_id, target.question)
        item = _item_of(answer.pk)
        if item is None:
            repeated = (_repeated(answer.conversation_id, target.question)
                        or _asked_elsewhere(answer.bot_id, target.question))
            if repeated is not None:
                return _repeat_add(repeated, target)
            try:
                with transaction.atomic():
                    return ReviewItem.objects.create(
                        bot_id=answer.bot_id, message_id=answer.pk, conversation_id=answer.conversation_id,
                        reasons=sorted(target.reasons), question=target.question, answer=answer.text,
                        confidence=answer.confidence, cited_entry_id=answer.source_entry_id,
                        source_ids=[int(i) for i in answer.sources or []], answered_at=answer.created_at,
                        last_seen_at=answer.created_at,
                    )
            except IntegrityError:
                item = ReviewItem.objects.select_for_update().get(message_id=answer.pk)
        if item.message_id != answer.pk:  # a repeat counted before: its new reasons only
            return _repeat_add(item, target)
        merged = sorted(set(item.reasons) | target.reasons)
        if merged != sorted(item.reasons):
            item.reasons = merged
            item.save(update_fields=["reasons"])
        return item


def review_sweep(*, bot: Bot, since: Any) -> int:
    """Catch-up for flags whose signal was lost (a crashed receiver): re-record every flagged
    message since `since`. Returns how many items it created or updated."""
    done = 0
    for message_id in chat_selectors.flagged_message_ids(bot=bot, since=since):
        if review_item_record(message_id=message_id) is not None:
            done += 1
    return done


def _locked_item(item_id: int, bot_ids: Collection[int]) -> ReviewItem:
    item = ReviewItem.objects.select_for_update().filter(pk=item_id, bot_id__in=list(bot_ids)).first()
    if item is None:  # another tenant's item is as missing as a deleted one
        raise ItemNotFound()
    return item


def review_item_decide(
    *, item_id: int, bot_ids: Collection[int], decision: str, text: str = "", user: Any = None,
    question: str = "", wordings: Sequence[str] = (),
) -> ReviewItem:
    """One decision on one item, in one transaction: «Всё верно» labels it; «Исправить» stores the
    corrected answer through correction memory with the answer's culprits; «Добавить в знания»
    stores the question and the typed answer the same way, without culprits. `question`: the
    question as the owner wrote it (default: the visitor's words, which are kept as one more wording
    when the owner rewrote them); `wordings`: more ways to ask it. The texts are checked before
    anything is locked or written, so a bad one changes nothing."""
    if decision not in Decision.values:
        raise DecisionUnknown(decision)
    answer = clean_answer(text) if decision != Decision.CORRECT else ""
    if decision != Decision.CORRECT:
        question = clean_question(question) if question.strip() else ""
        wordings = clean_wordings(wordings)
    with transaction.atomic():
        item = _locked_item(item_id, bot_ids)
        if item.status != ReviewItem.Status.PENDING:
            raise AlreadyDecided(str(Decision(item.decision).label) if item.decision else "")
        if decision != Decision.CORRECT:
            asked = item.question or item.answer[:200]
            correction = correction_apply(
                bot=item.bot, question=question or asked, answer=answer,
                culprit_ids=item.culprit_ids if decision == Decision.FIXED else [],
                kind=Entry.Kind.CORRECTION if decision == Decision.FIXED else Entry.Kind.QA,
                item=item, user=user, origin=Correction.Origin.REVIEW, wordings=wordings,
                visitor_wording=asked if question else "",
            )
            item.entry_id, item.corrected_text = correction.entry_id, answer
            question_id = chat_selectors.question_id_of(message_id=item.message_id)
            signals.send_on_commit(signals.decision_saved, ReviewItem, bot_id=item.bot_id,
                                   question_id=question_id, entry_id=correction.entry_id)
        item.status, item.decision = ReviewItem.Status.DECIDED, decision
        item.decided_by = user if getattr(user, "pk", None) else None
        item.decided_at = timezone.now()
        item.save()
    return item


def review_item_undo(*, item_id: int, bot_ids: Collection[int], user: Any = None) -> ReviewItem:
    """Take a decision back: the item is pending again and its correction (if any) is undone."""
    with transaction.atomic():
        item = _locked_item(item_id, bot_ids)
        if item.status != ReviewItem.Status.DECIDED:
            raise NotDecided()
        undone = []
        for correction in item.corrections.select_for_update().filter(status=Correction.Status.ACTIVE):
            undone.append(correction_undo(correction=correction, user=user).entry_id)
        if undone:
            signals.send_on_commit(signals.decision_undone, ReviewItem, bot_id=item.bot_id, entry_ids=undone)
        item.status, item.decision, item.corrected_text = ReviewItem.Status.PENDING, "", ""
        item.entry, item.decided_by, item.decided_at = None, None, None
        item.save()
    return item


# --- correction memory ------------------------------------------------------------------------------


def correction_apply(
    *, bot: Bot, question: str, answer: str, culprit_ids: Sequence[int], kind: str = Entry.Kind.CORRECTION,
    item: ReviewItem | None = None, user: Any = None, origin: str = Correction.Origin.REVIEW,
    wordings: Sequence[str] = (), visitor_wording: str = "",
) -> Correction:
    """The owner's answer as knowledge that wins next time (module docstring). `wordings`: more ways
    to ask the question, answered as it is; `visitor_wording`: the visitor's own words when the owner
    rewrote the question (kept as one more wording). A wording another active correction has is
    refused (`WordingTaken`), before anything is written. Culprits of other bots are ignored; the new entry is
    never its own culprit, and the culprits count less only for the correction's own question and
    its paraphrases (knowledge/search.py)."""
    question, answer = clean_question(question), clean_answer(answer)
    extra = [(text, Wording.Origin.OWNER) for text in clean_wordings(wordings)]
    if visitor_wording.strip() and _words(visitor_wording) != _words(question):
        extra.append((clean_question(visitor_wording), Wording.Origin.VISITOR))
    if kind == Entry.Kind.CORRECTION:
        _wordings_free(bot, [question, *(text for text, _origin in extra)])
    key = f"{'fix' if kind == Entry.Kind.CORRECTION else 'qa'}-{uuid.uuid4().hex[:20]}"
    reason = (reason_written(REASON_REVIEW_ITEM, n=item.pk) if item
              else reason_written(REASON_CORRECTION, origin=str(origin)))
    with transaction.atomic():
        flags = knowledge_services.entries_flag_for_review(bot=bot, entry_ids=culprit_ids, reason=reason)
        entry = knowledge_services.entry_create_answer(
            bot=bot, question=question, answer=answer, kind=kind, key=key, url=answer_url(bot, key), reason=reason,
            wordings=extra,
            supersedes=[entry_id for entry_id, _before in flags] if kind == Entry.Kind.CORRECTION else [],
        )
        correction = Correction.objects.create(
            bot=bot, item=item, entry=entry, kind=kind, origin=origin, question=question, answer=answer,
            created_by=user if getattr(user, "pk", None) else None,
        )
        CorrectionCulprit.objects.bulk_create(
            [CorrectionCulprit(correction=correction, entry_id=entry_id, flagged_before=before)
             for entry_id, before in flags]
        )
    return correction


def _wordings_free(bot: Bot, texts: Sequence[str]) -> None:
    """No wording of a new correction may be one an active correction of the bot already has (case,
    «ё» and punctuation aside): the visitor would get whichever of the two search ranks first."""
    mine = {_words(text): text for text in texts}
    for entry_id, text in knowledge_selectors.correction_wordings(bot=bot):
        if _words(text) in mine:
            taken = Correction.objects.filter(bot=bot, entry_id=entry_id).values_list("pk", flat=True).first()
            raise WordingTaken(mine[_words(text)], taken or entry_id)


def correction_undo(*, correction: Correction, user: Any = None) -> Correction:
    """Both sides back: the correction's entry off, each culprit's flag as it was before (unless the
    owner changed it since). The correction row stays, marked undone, with its history."""
    with transaction.atomic():
        locked = Correction.objects.select_for_update().get(pk=correction.pk)
        if locked.status == Correction.Status.UNDONE:
            return locked
        reason = reason_written(REASON_CORRECTION_UNDO, n=locked.pk)
        knowledge_services.entry_withdraw(entry=locked.entry, reason=reason)
        flags = [(link.entry_id, link.flagged_before) for link in locked.culprit_links.all()]
        knowledge_services.entries_review_restore(bot=locked.bot, flags=flags, reason=reason)
        locked.status, locked.undone_at = Correction.Status.UNDONE, timezone.now()
        locked.save(update_fields=["status", "undone_at"])
    return locked
