"""Reads of the knowledge base for the apps above it (review, feedback): they see entries through
these functions, never through the tables. Every read is scoped to one bot."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db import connection
from django.db.models import QuerySet

from bots.models import Bot
from knowledge.models import CrawlRun, Entry, Lexeme, Source
from knowledge.scope import COMPOUND_TAIL, FAMILY_PREFIX, OnSite
from knowledge.services import OWNER_ANSWERS_KINDS


@dataclass(frozen=True)
class EntryCard:
    """What a reviewer sees of a source: enough to judge it and open it."""

    entry_id: int
    kind: str
    title: str
    text: str
    url: str
    review_needed: bool
    active: bool


def entry_cards(*, bot: Bot, entry_ids: Iterable[int]) -> dict[int, EntryCard]:
    ids = [int(i) for i in entry_ids]
    if not ids:
        return {}
    rows = Entry.objects.filter(bot=bot, pk__in=ids).select_related("page").only(
        "pk", "kind", "title", "text", "url", "review_needed", "active", "page__review_needed"
    )
    return {
        e.pk: EntryCard(
            entry_id=e.pk, kind=e.kind, title=e.title, text=e.text, url=e.url, active=e.active,
            review_needed=e.review_needed or bool(e.page and e.page.review_needed),
        )
        for e in rows
    }


def lexicon_counts(*, bot: Bot, lexemes: Iterable[str]) -> tuple[dict[str, int], int]:
    """How many of the bot's active entries hold each of `lexemes` (Snowball 'russian' stems; absent:
    0), and how many entries there are: the lexicon search weighs words by."""
    wanted = {w for w in lexemes if w}
    rows = dict(Lexeme.objects.filter(bot=bot, lexeme__in=[*wanted, ""]).values_list("lexeme", "df"))
    return {w: rows.get(w, 0) for w in wanted}, rows.get("", 0)


def owner_answer(*, bot: Bot, key: str) -> Entry | None:
    """An active owner answer (correction, Q/A) of this bot by its key: the public answer page."""
    if not key or len(key) > 500:
        return None
    return Entry.objects.filter(bot=bot, key=key, active=True, kind__in=OWNER_ANSWERS_KINDS).first()


# --- for the REST API: querysets it pages through, always of one bot ------------------------------

ENTRY_API_FIELDS = ("pk", "bot_id", "kind", "title", "text", "url", "weight", "active", "review_needed",
                    "created_at", "updated_at")


def entries_of(*, bot: Bot) -> QuerySet[Entry]:
    """The bot's entries without their vectors (a vector is 1.5 KB a row, and no reader shows it)."""
    return Entry.objects.filter(bot=bot).only(*ENTRY_API_FIELDS)


def entry_versions(*, entry: Entry) -> QuerySet[Any]:
    """Every version of one entry, newest first (django-simple-history's rows)."""
    return entry.history.all().order_by("-history_id")


def sources_of(*, bot: Bot) -> QuerySet[Source]:
    return Source.objects.filter(bot=bot)


def crawl_runs(*, bot: Bot, run_ids: Iterable[int]) -> dict[int, CrawlRun]:
    return {run.pk: run for run in CrawlRun.objects.filter(bot=bot, pk__in=list(run_ids))}


def latest_run_ids(*, sources: Iterable[Source]) -> dict[int, int]:
    """{source id: its newest crawl run's id}, in one query."""
    rows = (CrawlRun.objects.filter(source__in=list(sources)).order_by("source_id", "-started_at", "-id")
            .distinct("source_id").values_list("source_id", "pk"))
    return dict(rows)


def text_lexemes(*, bot: Bot, texts: list[str]) -> list[dict[str, int | None]]:
    """Each text's lexemes as the bot's search reads them ('russian' configuration), with their
    document frequency in the bot's texts (None: unknown to them). One query for all texts."""
    if not texts:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT t.n, w.word, l.df FROM unnest(%s::text[]) WITH ORDINALITY AS t(body, n), "
            "unnest(tsvector_to_array(to_tsvector('russian', t.body))) AS w(word) "
            "LEFT JOIN knowledge_lexeme l ON l.bot_id = %s AND l.lexeme = w.word",
            [texts, bot.pk],
        )
        rows = cursor.fetchall()
    out: list[dict[str, int | None]] = [{} for _ in texts]
    for n, word, df in rows:
        out[n - 1][word] = df
    return out


def entries_total(*, bot: Bot) -> int:
    """How many active entries the bot's lexicon counts (its lexeme '')."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT coalesce(max(df), 0) FROM knowledge_lexeme WHERE bot_id = %s AND lexeme = ''", [bot.pk])
        row = cursor.fetchone()
    return int(row[0]) if row else 0


def paraphrase_judgements(*, bot: Bot, wordings: list[str], questions: list[str], answer: str = "") -> list[Any]:
    """How a correction with these wordings (and this answer) would be judged for each question
    (knowledge/paraphrase.py: paraphrase, veto or other), before it is stored: the reach an owner sees."""
    import numpy as np

    from knowledge import paraphrase
    from knowledge.embeddings import get_embedder

    if not wordings or not questions:
        return []
    embedder = get_embedder()
    lexemes = text_lexemes(bot=bot, texts=[*wordings, *questions, " ".join([*wordings, answer])])
    answer_lexemes = set(lexemes.pop())
    total = entries_total(bot=bot)
    wording_vectors = np.stack([embedder.query(text) for text in wordings])
    out = []
    for question, question_lexemes in zip(questions, lexemes[len(wordings):], strict=True):
        cosines = wording_vectors @ embedder.query(question)
        signals = [paraphrase.WordingSignal(text=text, cosine=float(cosine), lexemes=words)
                   for text, cosine, words in zip(wordings, cosines, lexemes, strict=False)]
        out.append(paraphrase.judge(question, question_lexemes, total, signals, answer_lexemes))
    return out


def answer_wordings(*, bot: Bot, limit: int) -> list[tuple[int, str]]:
    """(entry id, wording) of the bot's active owner answers (corrections, Q/A pairs), newest first."""
    from knowledge.models import Wording

    rows = Wording.objects.filter(bot=bot, entry__active=True, entry__kind__in=OWNER_ANSWERS_KINDS)
    return list(rows.order_by("-pk").values_list("entry_id", "text")[:limit])


def correction_wordings(*, bot: Bot) -> list[tuple[int, str]]:
    """(entry id, wording) of every active correction of the bot."""
    from knowledge.models import Wording

    rows = Wording.objects.filter(bot=bot, entry__active=True, entry__kind=Entry.Kind.CORRECTION)
    return list(rows.order_by("pk").values_list("entry_id", "text"))


def lexicon_words(*, bot: Bot, words: list[str]) -> dict[str, OnSite]:
    """{word: knowledge.scope.OnSite} for each of `words`: its lexemes as the bot's search reads them
    ('russian' configuration; a stop word has none) with their document frequency in the bot's
    texts (None: unknown), and for an unknown lexeme the bot's stems that may be of its family
    (scope.related: a prefix of it, or beginning with all of it but its last letter, or a tail of a
    compound). One statement for all words; nothing is read for none."""
    wanted = list(dict.fromkeys(w for w in words if w))
    if not wanted:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT t.word, w.lexeme, l.df, CASE WHEN l.df IS NULL THEN ARRAY(
                SELECT k.lexeme FROM knowledge_lexeme k
                WHERE k.bot_id = %(bot)s AND length(w.lexeme) >= %(family)s AND k.lexeme <> '' AND (
                    starts_with(k.lexeme, left(w.lexeme, greatest(length(w.lexeme) - 1, %(family)s)))
                    OR k.lexeme IN (SELECT left(w.lexeme, n) FROM generate_series(%(family)s, length(w.lexeme) - 1) n)
                    OR k.lexeme IN (SELECT right(w.lexeme, n) FROM generate_series(%(tail)s, length(w.lexeme) - 1) n))
                ORDER BY k.lexeme LIMIT 50) END
            FROM unnest(%(words)s::text[]) AS t(word)
            LEFT JOIN LATERAL unnest(tsvector_to_array(to_tsvector('russian', t.word))) AS w(lexeme) ON true
            LEFT JOIN knowledge_lexeme l ON l.bot_id = %(bot)s AND l.lexeme = w.lexeme
            """,
            {"bot": bot.pk, "words": wanted, "family": FAMILY_PREFIX, "tail": COMPOUND_TAIL},
        )
        rows = cursor.fetchall()
    lexemes: dict[str, dict[str, int | None]] = {word: {} for word in wanted}
    relatives: dict[str, list[str]] = {word: [] for word in wanted}
    for word, lexeme, df, related in rows:
        if lexeme is not None:
            lexemes[word][lexeme] = df
            relatives[word] += related or []
    return {word: OnSite(lexemes=lexemes[word], relatives=tuple(relatives[word])) for word in wanted}
