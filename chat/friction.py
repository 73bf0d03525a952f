"""Signs that the previous answer did not help: "нет, не то", "вы не поняли", or the same question
asked again in other words. They send the answer to the review queue (docs/architecture.md, "The
answer chain", step 7), so a
false positive costs an owner one glance and a miss costs a wrong answer nobody fixes; the
patterns therefore lean towards phrases aimed at the bot, not every "не" in a sentence."""

from __future__ import annotations

import re
import threading
from typing import Final

import snowballstemmer

REPHRASE_SIMILARITY: Final = 0.5
# Fewer content words than this and two messages are "the same" by accident ("да" / "да").
_MIN_TOKENS: Final = 2

_COMPLAINT: Final = re.compile(
    r"|".join(
        [
            r"^\s*нет\s*[,.!]?\s*(?:это\s+)?не\s+(?:то|так|оно|об\s+этом|про\s+это)\b",
            r"\bэто\s+не\s+(?:то|ответ|ответ\s+на\s+(?:мой\s+)?вопрос)\b",
            r"^\s*(?:не\s+то|неверно|неправильно|не\s+правильно|не\s+верно|мимо|бред|чушь)\s*[.!]*\s*$",
            r"\b(?:это\s+)?(?:неверно|неправильно|не\s+правильно|не\s+верно)\b(?!\s+(?:указан|написан|введ|оформ))",
            r"\b(?:вы|ты)\s+(?:меня\s+)?не\s+(?:поняли|понял|поняла|понимаете|понимаешь|ответили|ответил)\b",
            r"\bне\s+(?:об\s+этом|про\s+это)\s+(?:спрашивал|спрашивала|спрашиваю|спросил|спросила)\b",
            r"\b(?:я\s+)?(?:спрашивал|спрашивала|спрашиваю|спросил|спросила)\s+(?:не\s+об\s+этом|не\s+про\s+это|другое)\b",
            r"\bне\s+(?:помогло|помогли|помогает|отвечаете\s+на\s+(?:мой\s+)?вопрос)\b",
            r"\bвы\s+ошибаетесь\b|\bты\s+ошибаешься\b",
            r"\b(?:that'?s\s+)?(?:not\s+what\s+i\s+(?:asked|meant)|wrong\s+answer)\b|^\s*(?:wrong|no,?\s+that'?s\s+wrong)\b",
            r"\byou\s+(?:did\s+not|didn'?t)\s+(?:understand|answer)\b|\bnot\s+helpful\b",
        ]
    ),
    re.IGNORECASE,
)
_WORD: Final = re.compile(r"[a-zа-я0-9]+", re.IGNORECASE)
_STOP: Final = frozenset(
    "и в во на с со по а но как что у к о об от до для из за же ли бы вы ты я мы мне меня вас вам нам это "
    "то там тут так ещё еще уже или ну да а the a an is are to of in on for and or do does i you it "
    # question words carry the form of a question, not its subject: a rephrase swaps them freely
    "как какой какая какое какие каков какова сколько где когда почему зачем можно есть "
    "how what which where when why can".split()
)


def _yo(text: str) -> str:
    return text.replace("ё", "е").replace("Ё", "Е")


def is_complaint(text: str) -> bool:
    """The visitor says the previous answer is wrong or beside the point."""
    return bool(_COMPLAINT.search(_yo(text)))


_local = threading.local()


def _stemmer(language: str) -> snowballstemmer.Stemmer:
    """This thread's stemmer for `language` (a snowball stemmer is not safe to share between the
    chat's worker threads: it keeps the word it works on in itself)."""
    stemmers: dict[str, snowballstemmer.Stemmer] | None = getattr(_local, "stemmers", None)
    if stemmers is None:
        stemmers = _local.stemmers = {}
    if language not in stemmers:
        stemmers[language] = snowballstemmer.stemmer(language)
    return stemmers[language]


def stems(text: str) -> frozenset[str]:
    """Content-word stems: Russian words through the Russian stemmer, Latin through the English one."""
    words = [w for w in _WORD.findall(_yo(text).lower()) if w not in _STOP]
    out = set()
    for word in words:
        language = "english" if word.isascii() else "russian"
        out.add(_stemmer(language).stemWord(word))
    return frozenset(out)


def similarity(first: str, second: str) -> float:
    """Jaccard similarity of content-word stems, 0..1; 0 for messages too short to compare."""
    a, b = stems(first), stems(second)
    if len(a) < _MIN_TOKENS or len(b) < _MIN_TOKENS:
        return 0.0
    return len(a & b) / len(a | b)


def is_rephrase(previous: str | None, current: str) -> bool:
    """The visitor asks the previous question again, in the same or other words."""
    return previous is not None and similarity(previous, current) >= REPHRASE_SIMILARITY
