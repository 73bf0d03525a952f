"""The operator's copilot: beside the composer, the knowledge passages for the visitor's last
question (docs/operator-protocol.md, `suggest`). Reads only; nothing here writes a row or reaches
the visitor: «Вставить» puts a passage in the operator's composer, and the operator sends it.

What must stay true:
- The passages are the bot's own retrieval (`answers.pipeline.knowledge_for`: the chain's search,
  its reading of the text and its cut at the bot's `match`), never a second search: the operator
  sees what the bot would have put in its prompt.
- Every read is scoped by the conversation's bot; the caller has checked the operator may work on
  the conversation (inbox/access.py), so another bot's conversation never gets this far.
- The excerpt is the chain's own (answers/excerpts.py): the part of the entry that answers the
  question, the same words the bot shows without a model.
"""

from __future__ import annotations

from typing import Any, Final

from answers import excerpts, pipeline
from chat import selectors
from chat.models import Conversation
from knowledge.search import SearchResult

QUESTION_CHARS: Final = 300  # the question the passages answer, as shown above them


def _passage(result: SearchResult, question: str) -> dict[str, Any]:
    heading = result.heading_path.rsplit(" / ", 1)[-1] or result.title
    text = excerpts.excerpt(result.text, question, heading=heading) or excerpts.excerpt(result.text)
    return {"entry_id": result.entry_id, "title": result.title or result.url, "text": text, "url": result.url}


def suggestions_for(*, conversation: Conversation) -> dict[str, Any]:
    """The `suggestions` frame for `conversation`: its visitor's last question (the latest of their
    last few messages the chain would search for) and the passages the bot's search finds for it,
    best first (empty when there is no question or nothing matched)."""
    # «Позовите оператора» or «спасибо» after the question is not what the operator answers.
    recent = selectors.last_visitor_messages(conversation)
    message = next((m for m in recent if pipeline.asks_knowledge(m.text)), None)
    question = message.text if message else ""
    results = pipeline.knowledge_for(bot=conversation.bot, text=question) if question.strip() else []
    return {
        "type": "suggestions", "conversation_id": conversation.pk,
        "message_id": message.pk if message else None, "question": question[:QUESTION_CHARS],
        "passages": [_passage(result, question) for result in results],
    }
