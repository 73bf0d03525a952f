"""A correction's reach, shown before it is saved: which of the bot's recent visitors' questions it
would now answer (they paraphrase one of its wordings, knowledge/paraphrase.py), which of those had
another answer it would replace, and which close ones it would not take and why (another thing
named, or further in meaning than a paraphrase): the owner adds a wording for one that asks the
same. The owner confirms with those lists in front of them; `manage.py correct --json` prints them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import timedelta
from typing import Any, Final

from django.utils import timezone

from bots.models import Bot
from chat import selectors as chat_selectors
from knowledge import selectors as knowledge_selectors
from knowledge.search import is_match, search_entries

# Visitors' questions of this many last days, at most this many wordings (the most asked first).
REACH_DAYS: Final = 30
REACH_QUESTIONS: Final = 200
# A question not taken is shown when it is at least this close to a wording, just below a
# paraphrase's 0.9 (e5-small: «Квот недостаточно, что делать?» is 0.89 from «У меня не хватает
# квот»), the closest first, at most this many.
CLOSE_COSINE: Final = 0.88
CLOSE_ROWS: Final = 10


@dataclass(frozen=True)
class ReachRow:
    question: str
    times: int  # how many visitors' messages asked it in these words
    answer_title: str = ""  # what the bot answers it from now ("" when it has no answer)
    answer_url: str = ""


@dataclass(frozen=True)
class CloseRow:
    """A visitor's question close to the correction's that it would not take."""

    question: str
    times: int
    other_words: list[str] = field(default_factory=list)  # what one side names and the other does not
    cosine: float = 0.0


@dataclass(frozen=True)
class Reach:
    would_answer: list[ReachRow] = field(default_factory=list)  # every question the correction takes
    changes: list[ReachRow] = field(default_factory=list)  # those of them that had another answer
    not_taken: list[CloseRow] = field(default_factory=list)  # close questions it leaves as they are

    def as_dict(self) -> dict[str, Any]:
        return {"would_answer": [asdict(r) for r in self.would_answer], "changes": [asdict(r) for r in self.changes],
                "not_taken": [asdict(r) for r in self.not_taken]}


def correction_reach(
    *, bot: Bot, question: str, wordings: Sequence[str] = (), answer: str = "", days: int = REACH_DAYS,
    limit: int = REACH_QUESTIONS,
) -> Reach:
    """What a correction of `question` (with `wordings` and `answer`) would answer among the bot's
    recent visitors' questions; nothing is stored."""
    from knowledge.paraphrase import Verdict

    texts = list(dict.fromkeys(" ".join(t.split()) for t in [question, *wordings] if t.strip()))
    asked = chat_selectors.recent_questions(bot=bot, since=timezone.now() - timedelta(days=days), limit=limit)
    judgements = knowledge_selectors.paraphrase_judgements(
        bot=bot, wordings=texts, questions=[a.text for a in asked], answer=answer)
    would: list[ReachRow] = []
    changes: list[ReachRow] = []
    close: list[CloseRow] = []
    for item, judgement in zip(asked, judgements, strict=True):
        if judgement.verdict is not Verdict.PARAPHRASE:
            if judgement.cosine >= CLOSE_COSINE:
                close.append(CloseRow(question=item.text, times=item.times, cosine=round(judgement.cosine, 3),
                                      other_words=_as_written(judgement.unshared, [item.text, *texts])))
            continue
        results = search_entries(bot, item.text, k=1)
        now = results[0] if is_match(bot, results) else None
        row = ReachRow(question=item.text, times=item.times, answer_title=now.title if now else "",
                       answer_url=now.url if now else "")
        would.append(row)
        if now is not None:
            changes.append(row)
    close.sort(key=lambda row: -row.cosine)
    return Reach(would_answer=would, changes=changes, not_taken=close[:CLOSE_ROWS])


def _as_written(lexemes: Sequence[str], texts: Sequence[str]) -> list[str]:
    """The words of `texts` (the question first, then the wordings) that the verdict's lexemes stand
    for, as a person wrote them: «Казань», not «казан»."""
    from knowledge.paraphrase import TOKEN, lexeme_of

    written: dict[str, str] = {}
    for text in texts:
        for token in TOKEN.findall(text):
            written.setdefault(lexeme_of(token), token)
            written.setdefault(token.lower(), token)
    return list(dict.fromkeys(written.get(lexeme, lexeme) for lexeme in lexemes))
