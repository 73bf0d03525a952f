"""Hybrid search over one bot's knowledge: the single read path the answer chain, the commands and
the benchmarks use. See docs/search.md for the formula and how its constants were calibrated.

One SQL statement gathers candidates from three retrievers (HNSW vector search; full text on the
question's rarest words, misspellings read as the nearest word of the bot's lexicon, a Russian
spelling of a Latin name also in Latin letters; the corrections whose question wordings are nearest
the question) and returns
the raw signals of every candidate (cosine, IDF-weighted word coverage, trigram similarity of the
title and of the deepest heading when it is a question: a FAQ chunk's own question); the fusion into
one 0..1 score happens here in Python, where it can be read, documented and tested. What must stay
true:

- every query is scoped to one bot and to active entries (tenant isolation is tested);
- the vector retriever uses the same cast and predicate as the partial HNSW index of its model
  (migration 0006: half precision), otherwise PostgreSQL silently falls back to an exact scan;
  the cosine every candidate is scored with is computed in full precision from the stored vector;
- the score means the same thing for every question, because `Bot.match_threshold` and
  `Bot.confidence_threshold` are thresholds on it;
- a question in another language than the bot's knowledge («How much does delivery in Moscow
  cost?» to a Russian shop) is scored on its meaning: its words cannot meet the site's, so the
  lexical side may add to its score but never sink it, and its vector is read on the scale of
  cross-language cosines (`cross_language_relevance`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from django.db import connection, transaction

from bots.models import Bot
from knowledge import across, languages, paraphrase
from knowledge.embeddings import COSINE_RANGE, CROSS_LANGUAGE_COSINE_RANGE, DIMENSIONS, get_embedder
from knowledge.models import Entry
from knowledge.paraphrase import Judgement, WordingSignal

# How many candidates each retriever contributes before fusion (they overlap heavily).
VECTOR_CANDIDATES = 30
TEXT_CANDIDATES = 30
# ... and the corrections with a wording (their question, the ones the owner adds, the visitor's)
# the question may paraphrase (cosine >= PARAPHRASE_COSINE, question to question): a wording the
# owner adds in other words than the correction's own text still brings the correction to the
# judge on a site of thousands of entries. Only those: every correction candidate costs its
# wordings' words (five more on every search: +4.3 ms p50, bench/correction_check.py). No
# corrections, no wordings read.
WORDING_CANDIDATES = 5
# The full-text retriever looks for the question's rarest words only: they carry the meaning,
# and a common word would make it rank thousands of rows at 100k entries. All words still count
# in the lexical score of every candidate.
RARE_WORDS = 3
# ...and only words found in at most this many entries: ranking 6,000 matches of a common word
# took 150 ms at 100k entries; such a word cannot single out a passage, the vector search can.
RARE_MAX_DF = 200
# HNSW breadth: recall@10 0.98 against exact search at 100k entries, 0.97 for a 10k-entry bot
# beside them in the same index (bench/search_speed.py, docs/benchmarks.md).
EF_SEARCH = 200
# A query word unknown to the bot's texts is read as the most similar known lexeme at least this
# similar (pg_trgm similarity), credited by that similarity: 'вазврат' -> 'возврат' (0.45).
TYPO_SIMILARITY = 0.4
# A Russian spelling of a Latin name («телеграм», «самсунг») is also looked up letter for letter
# in Latin, where the site writes «Telegram»: the Russian stem 'телегр' reads 'telegr', which
# begins the site's 'telegram' (full credit), or is at least this similar to a Latin word (its
# similarity as credit; a loose reading would let «рецепт» count as 'receipt' and spoil refusals).
# One letter for one (PostgreSQL translate): «ж» -> z, «ч» -> c, «ь»/«ъ» dropped.
TRANSLIT_SIMILARITY = 0.6
_CYRILLIC = "абвгдеёжзийклмнопрстуфхцчшщыэюяьъ"
_LATIN = "abvgdeezziiklmnoprstufhccssyeua"

# Characters no PostgreSQL text can hold (NUL) or encode (lone surrogates), and other controls: a
# query with one of them would fail the whole statement, so they read as spaces.
_UNSTORABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff]")

# Fusion weights of the three relevance signals (they sum to 1), see docs/search.md.
W_VECTOR = 0.6
W_LEXICAL = 0.3
W_TRIGRAM = 0.1
# A question whose rare words the site never uses is probably not about the site ("рецепт борща",
# "PayPal"): its scores shrink by up to this share. Per question, so it never reorders results.
UNKNOWN_PENALTY = 0.3
# Entry factor: weight 0.5 (a page chunk) -> 0.9, weight 1.0 (a correction) -> 1.0.
WEIGHT_BASE = 0.8
WEIGHT_SLOPE = 0.2
# An entry flagged for review, or whose page is, counts this much less (correction memory marks
# the entries behind a corrected answer; an owner can flag a whole page in the admin).
REVIEW_PENALTY = 0.15
BONUS_KINDS = frozenset({Entry.Kind.CORRECTION})
# A correction asked something else than its question is weighed as a page passage: one more
# entry, no owner's priority (measured against 0.8, a Q/A pair's weight: 2/38 near misses answered
# by a correction against 4/38 after 20 corrections, the same paraphrases; docs/benchmarks.md).
ORDINARY_ANSWER_WEIGHT = 0.5

# Thresholds calibrated on demo/cases.jsonl with the default model (bench/retrieval_quality.py,
# docs/search.md): below MATCH the assistant says it has no exact answer; below CONFIDENCE an
# answer goes to the review queue. Bot.match_threshold / confidence_threshold should default to these.
RECOMMENDED_MATCH = 0.485
RECOMMENDED_CONFIDENCE = 0.67


@dataclass(frozen=True)
class Signals:
    """What SQL returns for one candidate: raw, unfused, straight from the database."""

    entry_id: int
    kind: str
    url: str
    title: str
    text: str
    weight: float
    review_needed: bool
    cosine: float | None
    lexical: float
    trigram: float
    unknown: float = 0.0  # share of the question's IDF mass the bot's texts do not know (per query)
    heading_path: str = ""
    heading: float = 0.0  # trigram similarity of the deepest heading when it is a question (a FAQ chunk's)
    page_review: bool = False  # the flag is its page's (an owner flagged the whole page)
    superseded_by: tuple[int, ...] = ()  # active corrections that name this entry as a culprit
    wordings: tuple[WordingSignal, ...] = ()  # a correction's question wordings
    answer_lexemes: frozenset[str] = frozenset()  # a correction's lexemes (question and answer)
    # A correction's standing for this question (knowledge/paraphrase.py): None until judged.
    judgement: Judgement | None = None
    across: bool = False  # the question is in another language than the bot's knowledge (per query)
    across_cosine: float | None = None  # ... and the second model's reading of it (knowledge/across.py)


@dataclass(frozen=True)
class QueryWords:
    """What the statement says of the question itself: its lexemes with their document frequency
    in the bot's texts (None: unknown to them), and how many entries the bot has."""

    lexemes: dict[str, int | None]
    entries_total: int


@dataclass(frozen=True)
class SearchResult:
    """One hit. `components` holds every term of the score, for hit testing and the docs."""

    entry_id: int
    url: str
    title: str
    text: str
    kind: str
    score: float
    components: dict[str, float] = field(default_factory=dict)
    heading_path: str = ""  # "Раздел / Вопрос": the headings the entry's text sits under
    review_needed: bool = False


def search_entries(
    bot: Bot, query: str, *, k: int = 5, query_vector: Sequence[float] | np.ndarray | None = None,
    model_key: str | None = None,
) -> list[SearchResult]:
    """The best `k` active entries of `bot` for `query`, best first, each with a 0..1 score.

    `query_vector` lets a caller embed once and search several times (and keeps embedding time
    out of the search benchmark); it must come from `model_key`'s model (default: settings).
    """
    query = " ".join(_UNSTORABLE.sub(" ", query).split())
    if not query:
        return []
    embedder = get_embedder(model_key)
    vector = embedder.query(query) if query_vector is None else np.asarray(query_vector, dtype=np.float32)
    signals = corrections_judged(query, *fetch_signals(bot.pk, query, vector, model_key=embedder.key))
    if languages.across(query, bot.language):
        second = across.second_cosines(embedder.key, query, signals)
        signals = [replace(s, across=True, across_cosine=second.get(s.entry_id)) for s in signals]
    # Scores first, components only for the k shown: the same order and scores as fusing all.
    scored = sorted(signals, key=lambda s: (-score_of(s, model_key=embedder.key, fix_bonus=bot.fix_bonus), s.entry_id))
    return [fuse(s, model_key=embedder.key, fix_bonus=bot.fix_bonus) for s in scored[:k]]


def corrections_judged(query: str, signals: list[Signals], words: QueryWords | None) -> list[Signals]:
    """Correction memory's rule on this question (knowledge/paraphrase.py): each correction among the
    candidates is judged on its wordings; a vetoed one is dropped (a near miss never gets it), and a
    culprit a correction supersedes counts less only when that correction is this question's
    paraphrase (for every other question it answers as before). A flag an owner set by hand, or a
    page's flag, counts always. Nothing to do, and nothing computed, when no candidate is involved."""
    if words is None or not any(s.kind in BONUS_KINDS or s.superseded_by for s in signals):
        return signals
    judged: list[Signals] = []
    for s in signals:
        if s.kind in BONUS_KINDS:
            verdict = paraphrase.judge(query, words.lexemes, words.entries_total, s.wordings, s.answer_lexemes)
            if verdict.verdict is paraphrase.Verdict.VETO:
                continue
            s = replace(s, judgement=verdict)
        judged.append(s)
    matched = {s.entry_id for s in judged if _has_priority(s)}
    return [
        replace(s, review_needed=s.page_review or not set(s.superseded_by).isdisjoint(matched))
        if s.review_needed and s.superseded_by else s
        for s in judged
    ]


def _has_priority(s: Signals) -> bool:
    """A correction's weight and bonus apply: it is this question's paraphrase (judgement None: the
    rule has not run on it, e.g. signals made by hand for the formula's tests)."""
    if s.kind not in BONUS_KINDS:
        return False
    return s.judgement is None or s.judgement.verdict is paraphrase.Verdict.PARAPHRASE


def is_match(bot: Bot, results: Sequence[SearchResult]) -> bool:
    """Whether the best result is good enough to answer from at all (`Bot.match_threshold`)."""
    return bool(results) and results[0].score >= bot.match_threshold


def is_confident(bot: Bot, results: Sequence[SearchResult]) -> bool:
    """Whether the best result is likely right (`Bot.confidence_threshold`); below it the answer
    goes to the review queue as low confidence."""
    return bool(results) and results[0].score >= bot.confidence_threshold


def rescale_cosine(cosine: float | None, model_key: str) -> float:
    """Cosine -> 0..1 through the model's own floor and ceiling: e5 cosines bunch in 0.8..0.9,
    USE spreads over 0.1..0.8, and one threshold must mean the same for both."""
    if cosine is None:
        return 0.0
    low, high = COSINE_RANGE[model_key]
    return min(1.0, max(0.0, (cosine - low) / (high - low)))


def entry_factor(weight: float, review_needed: bool) -> float:
    factor = WEIGHT_BASE + WEIGHT_SLOPE * weight
    return factor * (1.0 - REVIEW_PENALTY) if review_needed else factor


def score_of(s: Signals, *, model_key: str, fix_bonus: float) -> float:
    """One candidate's score (docs/search.md), rounded as `SearchResult.score`:
    min(1, (0.6 vector + 0.3 lexical + 0.1 max(title trigram, heading trigram)) x entry factor
    x (1 - 0.3 unknown) + fix bonus)."""
    return _fusion(s, model_key=model_key, fix_bonus=fix_bonus)[0]


def cross_language_relevance(cosine: float | None, model_key: str, second: float | None = None) -> float:
    """A question in another language than the passage meets it only through the multilingual
    vectors, and their cross-language cosines run lower (e5-small: an English question and the
    Russian passage answering it 0.80..0.87, against 0.74..0.88 within one language): the cosine
    rescaled through the model's cross-language floor and ceiling; with the second model's reading
    (`second`, knowledge/across.py), their blend through the blend's own window. Measured on English
    questions to the demo shop and the VK Cloud docs (bench/english.py, docs/benchmarks.md)."""
    if cosine is None:
        return 0.0
    if second is not None and model_key in across.BLEND_RANGE:
        low, high = across.BLEND_RANGE[model_key]
        return min(1.0, max(0.0, (across.blend(cosine, second, model_key) - low) / (high - low)))
    low, high = CROSS_LANGUAGE_COSINE_RANGE.get(model_key, COSINE_RANGE[model_key])
    return min(1.0, max(0.0, (cosine - low) / (high - low)))


def relevance_of(s: Signals, vector: float) -> float:
    """The three signals fused. An entry stored a moment ago may have no vector yet (they fill in
    behind the crawl): it is scored on the signals it has, their weights rescaled to sum to 1,
    never as if its cosine were 0 (which would sink every new page below the match threshold).
    Measured: bench/crawl_speed.py, "search while vectors are missing"."""
    title = max(s.trigram, s.heading)  # the title's trigrams, or a FAQ chunk's own question
    if s.cosine is None:
        return (W_LEXICAL * s.lexical + W_TRIGRAM * title) / (W_LEXICAL + W_TRIGRAM)
    return W_VECTOR * vector + W_LEXICAL * s.lexical + W_TRIGRAM * title


def _fusion(s: Signals, *, model_key: str, fix_bonus: float) -> tuple[float, float, float, float, float]:
    """(rounded score, vector term, relevance, entry factor, bonus): the one place the formula lives."""
    priority = _has_priority(s)
    vector = rescale_cosine(s.cosine, model_key)
    added = s.judgement.added_cosine if priority and s.judgement is not None else 0.0
    if added:
        # A paraphrase of a wording the owner added is as near as that wording: a question asked in
        # its words («Курьер по столице бесплатный?») is not scored by the answer's text, which
        # holds the correction's own question (already in its vector) but not the added ones.
        vector = max(vector, rescale_cosine(added, model_key))
    relevance = relevance_of(s, vector)
    if s.across:  # the words may add (a Latin name the site uses: «SSO», «VK Cloud»), never sink it
        vector = cross_language_relevance(s.cosine, model_key, s.across_cosine)
        relevance = max(relevance, vector)
    # A correction that is not this question's paraphrase is one more owner answer, no more.
    weight = s.weight if priority or s.kind not in BONUS_KINDS else min(s.weight, ORDINARY_ANSWER_WEIGHT)
    factor = entry_factor(weight, s.review_needed)
    # Words of another language are unknown to the bot's texts because of the language, not the
    # topic; the words of a wording the owner added are the owner's, whatever the texts say.
    novelty = 1.0 if s.across or added else 1.0 - UNKNOWN_PENALTY * s.unknown
    bonus = fix_bonus if priority else 0.0
    return round(min(1.0, relevance * factor * novelty + bonus), 4), vector, relevance, factor, bonus


def fuse(s: Signals, *, model_key: str, fix_bonus: float) -> SearchResult:
    """One candidate's result: its score (`score_of`) and every term of it."""
    score, vector, relevance, factor, bonus = _fusion(s, model_key=model_key, fix_bonus=fix_bonus)
    components = {
        "vector": round(vector, 4), "cosine": round(s.cosine or 0.0, 4), "lexical": round(s.lexical, 4),
        "trigram": round(s.trigram, 4), "heading": round(s.heading, 4), "relevance": round(relevance, 4),
        "weight": s.weight,
        "entry_factor": round(factor, 4), "review_penalty": REVIEW_PENALTY if s.review_needed else 0.0,
        "unknown": round(s.unknown, 4), "fix_bonus": bonus, "embedded": float(s.cosine is not None),
        "across": float(s.across),
    }
    if s.across_cosine is not None:
        components["across_cosine"] = round(s.across_cosine, 4)
    if s.judgement is not None:
        components["paraphrase"] = round(s.judgement.cosine, 4)
    return SearchResult(
        entry_id=s.entry_id, url=s.url, title=s.title, text=s.text, kind=s.kind,
        score=score, components=components, heading_path=s.heading_path, review_needed=s.review_needed,
    )


def _vector_literal(vector: np.ndarray) -> str:
    """The same text as formatting each float with :.6f (one % operation is ~5x faster)."""
    values = vector.tolist()
    return "[" + ",".join(["%.6f"] * len(values)) % tuple(values) + "]"


def _distance(model_key: str) -> str:
    """Cosine distance in full precision: what every candidate is scored with."""
    dim = DIMENSIONS[model_key]
    return f"(e.embedding::vector({dim}) <=> %(vec)s::vector({dim}))"


def _index_distance(model_key: str) -> str:
    """Cosine distance in half precision, the HNSW index's own expression (migration 0006): half
    the index size of full precision, so twice as much of it stays in memory, for the same recall."""
    dim = DIMENSIONS[model_key]
    return f"(e.embedding::halfvec({dim}) <=> %(vec)s::halfvec({dim}))"


def vector_candidates_sql(model_key: str) -> str:
    """The nearest entries by cosine. The model key and dimension come from our own table of models
    (never from input) and are inlined, so the planner can match the model's partial HNSW index:
    same cast, same `embedding_model = '...'` predicate as migration 0006."""
    return (
        f"SELECT e.id FROM knowledge_entry e "  # noqa: S608
        f"WHERE e.bot_id = %(bot)s AND e.active AND e.embedding_model = '{model_key}' "
        f"ORDER BY {_index_distance(model_key)} LIMIT %(n_vector)s"
    )


def _signals_sql(model_key: str) -> str:
    """The candidate query: four retrievers (entries by vector and by words, corrections by their
    wordings' vectors), their union, and every raw signal of each candidate.

    `lexical` unpacks each candidate's stored tsvector once (`|| ''` makes an in-memory copy;
    OFFSET 0 keeps the subquery from being inlined into every use): @@ on the stored value would
    unpack it, often compressed or out of line, again for each word of the question."""
    distance = _distance(model_key)
    dim = DIMENSIONS[model_key]
    wording_distance = f"(w.embedding::vector({dim}) <=> %(vec)s::vector({dim}))"
    scope = "e.bot_id = %(bot)s AND e.active"
    # Inlined are only our own model key and SQL fragments; every value is a query parameter.
    return f"""
WITH words AS MATERIALIZED (
    SELECT w.word, l.df, translate(w.word, %(cyrillic)s, %(latin)s) AS latin
    FROM unnest(tsvector_to_array(to_tsvector('russian', %(q)s))) AS w(word)
    LEFT JOIN knowledge_lexeme l ON l.bot_id = %(bot)s AND l.lexeme = w.word
),
total AS MATERIALIZED (
    SELECT coalesce(max(df), 0) AS n FROM knowledge_lexeme WHERE bot_id = %(bot)s AND lexeme = ''
),
terms AS MATERIALIZED (
    SELECT quote_literal(w.word)::tsquery AS word_q,
           quote_literal(coalesce(f.lexeme, w.word))::tsquery AS lexeme_q,
           CASE WHEN w.df IS NOT NULL THEN 1.0 ELSE coalesce(f.sim, 0.0) END AS credit,
           coalesce(w.df, f.df, 0) AS df,
           ln(1 + (t.n - coalesce(w.df, f.df, 0) + 0.5) / (coalesce(w.df, f.df, 0) + 0.5)) AS idf
    FROM words w CROSS JOIN total t
    LEFT JOIN LATERAL (
        SELECT m.lexeme, m.df, m.sim FROM (
            SELECT l.lexeme, l.df, similarity(l.lexeme, w.word) AS sim FROM knowledge_lexeme l
            WHERE w.df IS NULL AND l.bot_id = %(bot)s AND l.lexeme %% w.word AND l.lexeme <> ''
            UNION ALL
            SELECT l.lexeme, l.df, CASE WHEN starts_with(l.lexeme, w.latin) THEN 1.0
                                        ELSE similarity(l.lexeme, w.latin) END AS sim
            FROM knowledge_lexeme l
            WHERE w.df IS NULL AND w.latin <> w.word AND l.bot_id = %(bot)s AND l.lexeme %% w.latin
              AND (similarity(l.lexeme, w.latin) >= %(translit_sim)s
                   OR length(w.latin) >= 4 AND starts_with(l.lexeme, w.latin))
        ) m ORDER BY m.sim DESC, m.df DESC LIMIT 1
    ) f ON true
),
q AS MATERIALIZED (
    SELECT (SELECT json_agg(json_build_array(word, df)) FROM words) AS lexemes,
           (SELECT n FROM total) AS entries_total,
           (SELECT string_agg(DISTINCT x::text, ' | ')::tsquery
            FROM (SELECT * FROM terms WHERE df <= %(max_df)s ORDER BY idf DESC LIMIT %(n_rare)s) AS rare,
                 LATERAL (VALUES (word_q), (lexeme_q)) AS v(x)) AS any_words,
           (SELECT sum(idf) FROM terms) AS idf_total,
           coalesce((SELECT sum(idf * (1 - credit)) / nullif(sum(idf), 0) FROM terms), 0) AS unknown
),
by_vector AS MATERIALIZED ({vector_candidates_sql(model_key)}),
by_text AS MATERIALIZED (
    SELECT e.id FROM knowledge_entry e, q
    WHERE {scope} AND e.search_vector @@ q.any_words
    ORDER BY ts_rank_cd(e.search_vector, q.any_words, 1) DESC LIMIT %(n_text)s
),
by_wording AS MATERIALIZED (
    SELECT w.entry_id AS id FROM knowledge_wording w JOIN knowledge_entry e ON e.id = w.entry_id
    WHERE w.bot_id = %(bot)s AND w.embedding_model = '{model_key}' AND {scope} AND e.kind = 'correction'
      AND {wording_distance} <= 1 - %(paraphrase_cosine)s
    GROUP BY w.entry_id ORDER BY min({wording_distance}) LIMIT %(n_wording)s
),
candidates AS (SELECT id FROM by_vector UNION SELECT id FROM by_text UNION SELECT id FROM by_wording),
superseded AS MATERIALIZED (
    SELECT c.id AS by_id, unnest(c.supersedes) AS id FROM knowledge_entry c
    WHERE c.bot_id = %(bot)s AND c.active AND c.kind = 'correction' AND c.supersedes <> '{{}}'
)
SELECT e.id, e.kind, e.url, e.title, e.text, e.weight,
       e.review_needed, coalesce((SELECT p.review_needed FROM knowledge_page p WHERE p.id = e.page_id), false),
       ARRAY(SELECT s.by_id FROM superseded s WHERE s.id = e.id),
       CASE WHEN e.kind = 'correction' THEN (
           SELECT json_agg(json_build_array(
               w.text,
               CASE WHEN w.embedding_model = '{model_key}' THEN 1 - {wording_distance} END,
               (SELECT json_agg(json_build_array(x.word, l.df))
                FROM unnest(tsvector_to_array(to_tsvector('russian', w.text))) AS x(word)
                LEFT JOIN knowledge_lexeme l ON l.bot_id = %(bot)s AND l.lexeme = x.word),
               w.origin <> 'question') ORDER BY w.id)
           FROM knowledge_wording w WHERE w.entry_id = e.id) END AS wordings,
       CASE WHEN e.kind = 'correction' THEN tsvector_to_array(e.search_vector) END AS answer_lexemes,
       q.lexemes, q.entries_total,
       CASE WHEN e.embedding_model = '{model_key}' THEN 1 - {distance} END AS cosine,
       coalesce((SELECT sum(t.idf * CASE WHEN v.sv @@ t.word_q THEN 1.0
                                         WHEN v.sv @@ t.lexeme_q THEN t.credit ELSE 0.0 END)
                  FROM terms t, (SELECT e.search_vector || ''::tsvector AS sv OFFSET 0) AS v)
                / q.idf_total, 0) AS lexical,
       greatest(similarity(e.title, %(q)s), word_similarity(e.title, %(q)s)) AS trigram,
       q.unknown, e.heading_path,
       CASE WHEN e.heading_path LIKE '%%?' THEN similarity(regexp_replace(e.heading_path, '^.* / ', ''), %(q)s)
            ELSE 0 END AS heading
FROM candidates JOIN knowledge_entry e ON e.id = candidates.id CROSS JOIN q
"""  # noqa: S608


def fetch_signals(
    bot_id: int, query: str, vector: np.ndarray, *, model_key: str,
) -> tuple[list[Signals], QueryWords | None]:
    """One round trip: the SET LOCALs and the query go in one statement batch inside a transaction,
    so the settings end with it. Inside a caller's transaction no savepoint is made (they are
    harmless there: no other query of ours depends on them)."""
    params: dict[str, int | float | str] = {
        "bot": bot_id, "q": query, "vec": _vector_literal(vector),
        "n_vector": VECTOR_CANDIDATES, "n_text": TEXT_CANDIDATES, "n_wording": WORDING_CANDIDATES,
        "n_rare": RARE_WORDS, "max_df": RARE_MAX_DF, "paraphrase_cosine": paraphrase.PARAPHRASE_COSINE,
        "cyrillic": _CYRILLIC, "latin": _LATIN, "translit_sim": TRANSLIT_SIMILARITY,
    }
    # enable_seqscan off: the planner prices pg_trgm's `%` far below its real cost and would read a
    # bot's whole lexicon for one misspelt word (48 ms at 16k lexemes, 17 ms by the trigram index,
    # bench/chain_speed.py at 10k entries); every other table access here uses an index anyway.
    settings = (
        f"SET LOCAL hnsw.ef_search = {int(EF_SEARCH)}; SET LOCAL hnsw.iterative_scan = relaxed_order; "
        f"SET LOCAL pg_trgm.similarity_threshold = {TYPO_SIMILARITY}; SET LOCAL jit = off; "
        f"SET LOCAL enable_seqscan = off;"
    )
    with transaction.atomic(savepoint=False), connection.cursor() as cursor:
        cursor.execute(settings + _signals_sql(model_key), params)
        while cursor.nextset():
            pass
        rows = cursor.fetchall()
    signals = [
        Signals(
            entry_id=row[0], kind=row[1], url=row[2], title=row[3], text=row[4], weight=row[5],
            review_needed=row[6] or row[7], page_review=row[7], superseded_by=tuple(row[8]),
            wordings=_wordings(row[9]), answer_lexemes=frozenset(row[10] or ()), cosine=row[13],
            lexical=float(row[14]), trigram=float(row[15]), unknown=float(row[16]), heading_path=row[17],
            heading=float(row[18]),
        )
        for row in rows
    ]
    words = QueryWords(paraphrase.lexemes_from_json(rows[0][11]), int(rows[0][12] or 0)) if rows else None
    return signals, words


def _wordings(rows: list[list[Any]] | None) -> tuple[WordingSignal, ...]:
    return tuple(
        WordingSignal(text=str(text), cosine=None if cosine is None else float(cosine),
                      lexemes=paraphrase.lexemes_from_json(lexemes), added=bool(added))
        for text, cosine, lexemes, added in rows or ()
    )


# The JSON of `manage.py search --json` and of the REST API's search/: a contract scripts parse.
def result_dict(result: SearchResult) -> dict[str, Any]:
    return {
        "entry_id": result.entry_id, "url": result.url, "title": result.title, "score": result.score,
        "kind": result.kind, "review_needed": result.review_needed, "components": result.components,
    }


def answer_dict(bot: Bot, question: str, results: list[SearchResult]) -> dict[str, Any]:
    return {
        "question": question, "answerable": is_match(bot, results),
        "results": [result_dict(r) for r in results],
    }
