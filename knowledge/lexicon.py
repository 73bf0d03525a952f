"""The bot's lexicon: each lexeme of its active entries with the number of entries holding it (and
lexeme '' with the number of active entries), which search uses for IDF weights and typo
correction (docs/search.md). It is computed from the entries' stored tsvectors: rebuilt whole
(`lexicon_refresh`) after every embedding pass and while a crawl stores pages (`LexiconRefresher`),
adjusted by one entry (`lexicon_adjust`) when a person writes one, so the next message finds it by
its words. It reads entries and never writes them (knowledge/services.py does, and calls this)."""

from __future__ import annotations

import time

from django.db import connection, transaction

from knowledge.models import Lexeme

# What the lexicon of a bot is (parameters: the bot's id twice): each lexeme of its active entries with
# the number of entries holding it, and lexeme '' with the number of active entries.
_LEXICON_WORDS = (
    "SELECT %s, word, ndoc FROM ts_stat(format("
    "'SELECT search_vector FROM knowledge_entry WHERE bot_id = %%s AND active', %s::bigint))"
)
_LEXICON_SIZE = "SELECT %s, '', count(*) FROM knowledge_entry WHERE bot_id = %s AND active"

LEXICON_LOCK = 7311  # pg_advisory_xact_lock(LEXICON_LOCK, bot_id): one lexicon writer per bot at a time


def lexicon_refresh(*, bot_id: int) -> int:
    """Rebuild the bot's lexicon (lexeme -> number of active entries containing it) that search
    uses for IDF weights and typo correction; returns the number of lexemes. One statement over
    the stored tsvectors, so it costs seconds even at 100k entries; it runs after each embedding
    pass because every content change ends with one. A stale lexicon only shifts weights a little.

    Rebuilds of one bot are serialised (a transaction-level advisory lock, also taken by
    `lexicon_adjust`): a crawl refreshes the lexicon while the embed queue's pass refreshes it too,
    and two delete-then-insert rebuilds side by side would insert the same lexeme twice."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s::int, %s::int)", [LEXICON_LOCK, bot_id])
        cursor.execute("DELETE FROM knowledge_lexeme WHERE bot_id = %s", [bot_id])
        cursor.execute(f"INSERT INTO knowledge_lexeme (bot_id, lexeme, df) {_LEXICON_WORDS}", [bot_id, bot_id])
        count = cursor.rowcount
        cursor.execute(f"INSERT INTO knowledge_lexeme (bot_id, lexeme, df) {_LEXICON_SIZE}", [bot_id, bot_id])
        # Fresh statistics at once: until autovacuum comes round, a new bot's thousands of lexemes
        # are planned as one row, and every word of a question then scans them all (7 ms at 16k).
        cursor.execute("ANALYZE knowledge_lexeme")
    return count


def lexicon_adjust(*, entry_id: int, delta: int) -> None:
    """Count one entry's lexemes in (+1) or out (-1) of its bot's lexicon at once, without the full
    rebuild: an owner's answer must be found by its words on the next message, and a rebuild costs
    seconds at 100k entries. The next `lexicon_refresh` recomputes the exact figures anyway."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s::int, bot_id::int) FROM knowledge_entry WHERE id = %s",
                       [LEXICON_LOCK, entry_id])
        cursor.execute(
            "INSERT INTO knowledge_lexeme (bot_id, lexeme, df) "
            "SELECT e.bot_id, w.word, greatest(%s, 0) FROM knowledge_entry e, "
            "unnest(tsvector_to_array(e.search_vector)) AS w(word) WHERE e.id = %s "
            "UNION ALL SELECT e.bot_id, '', greatest(%s, 0) FROM knowledge_entry e WHERE e.id = %s "
            "ON CONFLICT (bot_id, lexeme) DO UPDATE SET df = greatest(knowledge_lexeme.df + %s, 0)",
            [delta, entry_id, delta, entry_id, delta],
        )
        cursor.execute(
            "DELETE FROM knowledge_lexeme l USING knowledge_entry e "
            "WHERE e.id = %s AND l.bot_id = e.bot_id AND l.df <= 0 AND l.lexeme <> ''",
            [entry_id],
        )


def lexicon_fresh(*, bot_id: int) -> dict[str, int]:
    """The bot's lexicon as a rebuild (`lexicon_refresh`) would write it now, computed without writing
    it: lexeme -> number of active entries holding it ('' -> number of active entries). What the
    stored one (`lexicon_stored`) must equal after every write that adjusts it."""
    with connection.cursor() as cursor:
        cursor.execute(f"{_LEXICON_WORDS} UNION ALL {_LEXICON_SIZE}", [bot_id, bot_id, bot_id, bot_id])
        return {lexeme: df for _bot, lexeme, df in cursor.fetchall()}


def lexicon_stored(*, bot_id: int) -> dict[str, int]:
    """The bot's lexicon as search reads it (lexeme -> document frequency)."""
    return dict(Lexeme.objects.filter(bot_id=bot_id).values_list("lexeme", "df"))


class LexiconRefresher:
    """Keeps the bot's lexicon current while a crawl stores pages, without paying for a rebuild per
    page: at most every `every` seconds, and never more than a tenth of the time (a big bot's
    rebuild takes seconds)."""

    def __init__(self, bot_id: int, every: float = 3.0) -> None:
        self.bot_id, self.every = bot_id, every
        self._next = 0.0
        self.dirty = False

    def changed(self) -> None:
        self.dirty = True
        if time.monotonic() >= self._next:
            self.flush()

    def flush(self) -> None:
        if not self.dirty:
            return
        started = time.monotonic()
        lexicon_refresh(bot_id=self.bot_id)
        took = time.monotonic() - started
        self._next = time.monotonic() + max(self.every, 10 * took)
        self.dirty = False
