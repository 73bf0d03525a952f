"""Gaps: questions answered «нет точного ответа», handed to an operator or answered with low
confidence, grouped into topics (feedback/grouping.py). `gaps_refresh` reads the chat from the
bot's cursor on, so it is idempotent and can run from the page, the command and Celery beat alike.

Operator answers proposed as entries («Оператор ответил: … Добавить в справку?») are in
feedback/operator_answers.py; the Gaps page shows both.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any, Final

import numpy as np
from django.db import transaction
from django.db.models import Count, Max, Min, QuerySet
from django.db.models.functions import TruncWeek
from django.utils import timezone
from django.utils.translation import gettext as _

from bots.models import Bot
from chat import selectors as chat_selectors
from feedback import grouping
from feedback.models import Gap, GapCursor, GapQuestion
from knowledge import selectors as knowledge_selectors
from knowledge.embeddings import get_embedder
from knowledge.models import Entry
from review.exceptions import ReviewError
from review.models import Correction
from review.services import correction_apply

REFRESH_BATCH: Final = 500
TITLE_CHARS: Final = 300
TREND_WEEKS: Final = 8


def _topics(bot: Bot, model_key: str, meaning: grouping.Meaning) -> tuple[list[grouping.Topic], dict[int, Gap]]:
    """The bot's gaps as topics; only vectors of the current model take part in meaning."""
    gaps = {gap.pk: gap for gap in Gap.objects.filter(bot=bot)}
    topics: dict[int, grouping.Topic] = {pk: grouping.Topic(key=pk) for pk in gaps}
    rows = GapQuestion.objects.filter(bot=bot).values_list("gap_id", "stems", "vector", "embedding_model", "facet")
    for gap_id, stems, vector, model, facet in rows:
        usable = vector is not None and model == model_key
        topics[gap_id].add(frozenset(stems), meaning.prepare(np.asarray(vector)) if usable else None, facet=facet)
    _learn_from_merges(bot, list(topics.values()))
    return list(topics.values()), gaps


def _learn_from_merges(bot: Bot, topics: list[grouping.Topic]) -> None:
    """Rows the owner merged teach the nouns and adjectives they share, less the words common in the
    bot's knowledge."""
    merged = [t for t in topics if grouping.owner_facets(t) > 1]
    if not merged:
        return
    texts: dict[int, list[str]] = {}
    for gap_id, text in GapQuestion.objects.filter(gap_id__in=[t.key for t in merged]).values_list("gap_id", "text"):
        texts.setdefault(gap_id, []).append(text)
    shared: dict[int, frozenset[str]] = {}
    for topic in merged:
        naming = frozenset().union(*(grouping.naming_stems(text) for text in texts.get(int(topic.key or 0), [])))
        shared[id(topic)] = grouping.merged_stems(topic) & naming
    counts, entries = knowledge_selectors.lexicon_counts(bot=bot, lexemes=frozenset().union(*shared.values()))
    for topic in merged:
        topic.learned_stems = frozenset(w for w in shared[id(topic)] if not grouping.is_common(counts[w], entries))


@transaction.atomic
def gaps_refresh(*, bot: Bot, limit: int = REFRESH_BATCH) -> int:
    """Group the gap questions asked since the last refresh; returns how many were added. The
    cursor row is locked, so two refreshes of one bot never add a question twice."""
    cursor, _created = GapCursor.objects.select_for_update().get_or_create(bot=bot)
    found = chat_selectors.gap_questions_after(bot=bot, after_id=cursor.last_message_id, limit=limit)
    if not found:
        return 0
    embedder = get_embedder()
    meaning = grouping.meaning_for(embedder.key)
    topics, gaps = _topics(bot, embedder.key, meaning)
    known = set(GapQuestion.objects.filter(bot=bot, message_id__in=[q.message_id for q in found])
                .values_list("message_id", flat=True))
    added = 0
    touched: set[int] = set()
    for question in found:
        if question.message_id in known:
            continue
        known.add(question.message_id)
        stems = grouping.stems(question.text)
        vector = embedder.query(question.text)
        prepared = meaning.prepare(vector)
        index = grouping.best_topic(topics, stems, prepared, vector_join=meaning.join)
        if index is None:
            gap = Gap.objects.create(bot=bot, title=question.text[:TITLE_CHARS], first_seen=question.asked_at,
                                     last_seen=question.asked_at)
            gaps[gap.pk] = gap
            topics.append(grouping.Topic(key=gap.pk))
            index = len(topics) - 1
        topic = topics[index]
        topic.add(stems, prepared)
        gap = gaps[int(topic.key or 0)]
        GapQuestion.objects.create(
            bot=bot, gap=gap, message_id=question.message_id, text=question.text, reason=question.reason,
            stems=sorted(stems), vector=vector.tolist(), embedding_model=embedder.key, asked_at=question.asked_at,
        )
        gap.count += 1
        gap.first_seen, gap.last_seen = min(gap.first_seen, question.asked_at), max(gap.last_seen, question.asked_at)
        if gap.status == Gap.Status.ANSWERED and question.asked_at > (gap.answered_at or question.asked_at):
            gap.status = Gap.Status.OPEN  # asked again after the answer: the answer did not cover it
        touched.add(gap.pk)
        added += 1
    for pk in touched:
        gaps[pk].save(update_fields=["count", "first_seen", "last_seen", "status"])
    cursor.last_message_id = found[-1].trigger_id
    cursor.save(update_fields=["last_message_id"])
    return added


def _lock_grouping(bot: Bot) -> None:
    """Serialise with `gaps_refresh` of the same bot: it groups against the rows as they were read."""
    GapCursor.objects.select_for_update().get_or_create(bot=bot)


def _recount(gap: Gap) -> None:
    totals = gap.questions.aggregate(n=Count("id"), first=Min("asked_at"), last=Max("asked_at"))
    gap.count, gap.first_seen, gap.last_seen = totals["n"], totals["first"], totals["last"]
    gap.save(update_fields=["count", "first_seen", "last_seen", "status", "entry", "answered_at", "title"])


@transaction.atomic
def gap_merge(*, target: Gap, others: Sequence[Gap]) -> Gap:
    """«Объединить»: the owner says these rows are one topic. Their questions move to `target` and
    keep the row they came from as their facet: the nouns the rows share are learned, so later
    questions with them join `target` (feedback/grouping.py); the other rows are deleted. The
    merged row is open while any of the rows was open; it keeps the first answer among them."""
    _lock_grouping(target.bot)
    ids = sorted({g.pk for g in others} - {target.pk})
    rows = list(Gap.objects.select_for_update().filter(pk__in=[target.pk, *ids], bot_id=target.bot_id))
    locked = next((g for g in rows if g.pk == target.pk), None)
    merged = [g for g in rows if g.pk != target.pk]
    if locked is None or not ids or len(merged) != len(ids):
        raise ReviewError(_("Выберите хотя бы две темы одного бота, чтобы объединить их."))
    for gap in rows:  # each question keeps the row it was in when the owner merged (its facet)
        GapQuestion.objects.filter(gap=gap, facet__isnull=True).update(facet=gap.pk)
    GapQuestion.objects.filter(gap__in=merged).update(gap=locked)
    if any(g.status == Gap.Status.OPEN for g in merged):
        locked.status = Gap.Status.OPEN
    if locked.entry_id is None:
        answered = next((g for g in merged if g.entry_id), None)
        if answered is not None:
            locked.entry_id, locked.answered_at = answered.entry_id, answered.answered_at
    Gap.objects.filter(pk__in=ids).delete()
    _recount(locked)
    return locked


@transaction.atomic
def gap_question_split(*, question: GapQuestion) -> Gap:
    """«Отделить»: the owner says this question is another topic. It becomes a row of its own (open,
    titled by it) and leaves its row's facets, so its words are no longer taught by that row."""
    _lock_grouping(question.gap.bot)
    source = Gap.objects.select_for_update().get(pk=question.gap_id)
    if source.questions.count() < 2:
        raise ReviewError(_("В этой теме один вопрос: отделять нечего."))
    gap = Gap.objects.create(bot_id=source.bot_id, title=question.text[:TITLE_CHARS], count=1,
                             first_seen=question.asked_at, last_seen=question.asked_at)
    question.gap, question.facet = gap, None
    question.save(update_fields=["gap", "facet"])
    if source.title == question.text[:TITLE_CHARS]:
        first = source.questions.order_by("asked_at", "id").first()
        source.title = first.text[:TITLE_CHARS] if first else source.title
    _recount(source)
    return gap


def gap_keep_apart(*, a: Gap, b: Gap) -> None:
    """«Это разные темы»: the pair is never suggested for a merge again."""
    if a.bot_id != b.bot_id or a.pk == b.pk:
        raise ReviewError(_("Выберите две разные темы одного бота."))
    with transaction.atomic():
        for gap, other in ((a, b), (b, a)):
            locked = Gap.objects.select_for_update().get(pk=gap.pk)
            if other.pk not in locked.kept_apart:
                locked.kept_apart = [*locked.kept_apart, other.pk]
                locked.save(update_fields=["kept_apart"])


def gap_merge_suggestions(*, bot: Bot, limit: int = 10, rows_limit: int = 100) -> list[dict[str, Any]]:
    """«Похоже на одну тему»: open rows of `bot` whose questions are close in meaning
    (grouping.merge_suggestions), for the owner to merge or keep apart; only vectors of the current
    model take part."""
    model_key = get_embedder().key
    meaning = grouping.meaning_for(model_key)
    if meaning.suggest is None:
        return []
    # The rows the Gaps page shows (gap_list's order and limit): loading every open row's vectors
    # on each page view would grow with the bot's whole history.
    shown = Gap.objects.filter(bot=bot, status=Gap.Status.OPEN).order_by("-count", "-last_seen")[:rows_limit]
    gaps = {g.pk: g for g in shown}
    rows: dict[int, list[np.ndarray]] = {pk: [] for pk in gaps}
    for gap_id, vector in (GapQuestion.objects.filter(gap_id__in=list(gaps), embedding_model=model_key,
                                                      vector__isnull=False).values_list("gap_id", "vector")):
        rows[gap_id].append(meaning.prepare(np.asarray(vector)))
    apart = {frozenset((g.pk, other)) for g in gaps.values() for other in g.kept_apart}
    pairs = grouping.merge_suggestions(rows, apart, join=meaning.suggest)[:limit]
    return [{"a": gaps[a], "b": gaps[b], "score": score} for a, b, score in pairs]


def gap_answer(*, gap: Gap, answer: str, user: Any = None) -> Gap:
    """«Ответить»: the topic's question and the owner's answer become a Q/A entry through correction
    memory (no culprits: the knowledge was missing); the gap closes."""
    with transaction.atomic():
        locked = Gap.objects.select_for_update().get(pk=gap.pk)
        correction = correction_apply(
            bot=locked.bot, question=locked.title, answer=answer, culprit_ids=[], kind=Entry.Kind.QA, user=user,
            origin=Correction.Origin.GAP,
        )
        locked.status, locked.entry, locked.answered_at = Gap.Status.ANSWERED, correction.entry, timezone.now()
        locked.save(update_fields=["status", "entry", "answered_at"])
    return locked


def gap_answered_by_review(*, bot_id: int, question_id: int | None, entry_id: int) -> Gap | None:
    """An owner's review decision stored an answer to a question of an open Gap: the Gap is answered
    by that entry (the same state as «Ответить» on the Gaps page)."""
    if question_id is None:
        return None
    with transaction.atomic():
        gap = Gap.objects.select_for_update().filter(
            bot_id=bot_id, questions__message_id=question_id, status=Gap.Status.OPEN).first()
        if gap is None:
            return None
        gap.status, gap.entry_id, gap.answered_at = Gap.Status.ANSWERED, entry_id, timezone.now()
        gap.save(update_fields=["status", "entry", "answered_at"])
    return gap


def gaps_reopened_by_review(*, bot_id: int, entry_ids: Sequence[int]) -> int:
    """A review decision was taken back: the Gaps its answers closed are open again."""
    return Gap.objects.filter(bot_id=bot_id, entry_id__in=list(entry_ids), status=Gap.Status.ANSWERED).update(
        status=Gap.Status.OPEN, entry=None, answered_at=None)


def gap_set_hidden(*, gap: Gap, hidden: bool) -> Gap:
    gap.status = Gap.Status.HIDDEN if hidden else (Gap.Status.ANSWERED if gap.entry_id else Gap.Status.OPEN)
    gap.save(update_fields=["status"])
    return gap


def gap_list(*, bot_ids: list[int], status: str = Gap.Status.OPEN, bot_id: int | None = None,
             limit: int = 100) -> list[dict[str, Any]]:
    """Gaps sorted by count, each with up to three example questions and its weekly trend."""
    gaps = Gap.objects.filter(bot_id__in=bot_ids, status=status).select_related("bot", "entry")
    if bot_id:
        gaps = gaps.filter(bot_id=bot_id)
    rows = list(gaps.order_by("-count", "-last_seen")[:limit])
    ids = [g.pk for g in rows]
    titles = {g.pk: g.title for g in rows}
    examples: dict[int, list[str]] = {}
    questions: dict[int, list[dict[str, Any]]] = {}  # the same examples with their ids, for «Отделить»
    rows_q = GapQuestion.objects.filter(gap_id__in=ids).order_by("-asked_at").values_list("gap_id", "id", "text")
    title_ids: dict[int, int] = {}  # the question the title is, for «Отделить» beside the title
    for gap_id, question_id, text in rows_q:
        if text[:TITLE_CHARS] == titles[gap_id]:
            title_ids[gap_id] = question_id
        bucket = examples.setdefault(gap_id, [])
        if len(bucket) < 3 and text not in bucket and text != titles[gap_id]:
            bucket.append(text)
            questions.setdefault(gap_id, []).append({"id": question_id, "text": text})
    weeks = week_starts(TREND_WEEKS)
    counts: dict[tuple[int, Any], int] = {}
    weekly = (GapQuestion.objects.filter(gap_id__in=ids, asked_at__gte=weeks[0])
              .annotate(week=TruncWeek("asked_at")).values_list("gap_id", "week").annotate(n=Count("id")))
    for gap_id, week, n in weekly:
        counts[(gap_id, week.date())] = n
    return [
        {"gap": g, "examples": examples.get(g.pk, []), "questions": questions.get(g.pk, []),
         "title_id": title_ids.get(g.pk) if g.count > 1 else None,
         "trend": [counts.get((g.pk, w.date()), 0) for w in weeks]}
        for g in rows
    ]


def week_starts(weeks: int) -> list[Any]:
    """Monday 00:00 (current time zone) of the last `weeks` weeks, oldest first, this week last."""
    now = timezone.localtime()
    monday = (now - timedelta(days=now.weekday())).replace(hour=0, minute=0, second=0, microsecond=0)
    return [monday - timedelta(weeks=n) for n in range(weeks - 1, -1, -1)]


def trend_word(trend: list[int]) -> str:
    """↑ / ↓ / = for this week against the week before."""
    if len(trend) < 2 or trend[-1] == trend[-2]:
        return "="
    return "↑" if trend[-1] > trend[-2] else "↓"


def gaps_of(*, bot: Bot) -> QuerySet[Gap]:
    """The bot's gaps in every status, for the REST API (which pages and filters them)."""
    return Gap.objects.filter(bot=bot)
