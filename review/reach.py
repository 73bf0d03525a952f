"""A correction's reach, shown before it is saved: which of the bot's recent visitors' questions it
would now answer (they paraphrase one of its wordings, knowledge/paraphrase.py), and which of those
had another answer it would replace. The owner confirms with that list in front of them; `manage.py
correct --json` prints the same lists."""

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


@dataclass(frozen=True)
class ReachRow:
    question: str
    times: int  # how many visitors' messages asked it in these words
    answer_title: str = ""  # what the bot answers it from now ("" when it has no answer)
    answer_url: str = ""


@dataclass(frozen=True)
class Reach:
    would_answer: list[ReachRow] = field(default_factory=list)  # every question the correction takes
    changes: list[ReachRow] = field(default_factory=list)  # those of them that had another answer

    def as_dict(self) -> dict[str, Any]:
        return {"would_answer": [asdict(r) for r in self.would_answer], "changes": [asdict(r) for r in self.changes]}


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
    for item, judgement in zip(asked, judgements, strict=True):
        if judgement.verdict is not Verdict.PARAPHRASE:
            continue
        results = search_entries(bot, item.text, k=1)
        now = results[0] if is_match(bot, results) else None
        row = ReachRow(question=item.text, times=item.times, answer_title=now.title if now else "",
                       answer_url=now.url if now else "")
        would.append(row)
        if now is not None:
            changes.append(row)
    return Reach(would_answer=would, changes=changes)
