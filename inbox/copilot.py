"""The operator's copilot: beside the composer, the knowledge passages for the visitor's last
question (docs/operator-protocol.md, `suggest`), and with a model, a draft reply (`draft`).
Nothing here writes a chat row or reaches the visitor: «Вставить» puts a passage or the draft in
the operator's composer, and the operator sends it.

What must stay true:
- The passages are the bot's own retrieval (`answers.pipeline.knowledge_for`: the chain's search,
  its reading of the text and its cut at the bot's `match`), never a second search: the operator
  sees what the bot would have put in its prompt.
- Every read is scoped by the conversation's bot; the caller has checked the operator may work on
  the conversation (inbox/access.py), so another bot's conversation never gets this far.
- The excerpt is the chain's own (answers/excerpts.py): the part of the entry that answers the
  question, the same words the bot shows without a model.
- A draft is the bot's own answer chain (`pipeline.answer`), so it passes the same source and fact
  checks as any answer a visitor reads; only a model's answer citing a source that gave every fact
  of it is offered, with that source. Anything else is refused, saying why, and offers no text.
  Its model call is journaled and billed to the bot like any answer (route "chat").
"""

from __future__ import annotations

from typing import Any, Final

from django.utils import translation
from django.utils.translation import gettext as _

from answers import excerpts, pipeline
from chat import selectors
from chat.models import Conversation, Message
from knowledge.search import SearchResult
from llm.providers import get_provider

QUESTION_CHARS: Final = 300  # the question the passages answer, as shown above them


def _passage(result: SearchResult, question: str) -> dict[str, Any]:
    heading = result.heading_path.rsplit(" / ", 1)[-1] or result.title
    text = excerpts.excerpt(result.text, question, heading=heading) or excerpts.excerpt(result.text)
    return {"entry_id": result.entry_id, "title": result.title or result.url, "text": text, "url": result.url}


def _question(conversation: Conversation) -> Message | None:
    # «Позовите оператора» or «спасибо» after the question is not what the operator answers.
    recent = selectors.last_visitor_messages(conversation)
    return next((m for m in recent if pipeline.asks_knowledge(m.text)), None)


def suggestions_for(*, conversation: Conversation) -> dict[str, Any]:
    """The `suggestions` frame for `conversation`: its visitor's last question (the latest of their
    last few messages the chain would search for) and the passages the bot's search finds for it,
    best first (empty when there is no question or nothing matched)."""
    message = _question(conversation)
    question = message.text if message else ""
    results = pipeline.knowledge_for(bot=conversation.bot, text=question) if question.strip() else []
    return {
        "type": "suggestions", "conversation_id": conversation.pk,
        "message_id": message.pk if message else None, "question": question[:QUESTION_CHARS],
        "passages": [_passage(result, question) for result in results],
    }


def model_ready(bot: Any) -> bool:
    """Whether the bot has a model to draft with (its own provider or the installation's)."""
    return get_provider(bot).name != "none"


def _refusal(reply: pipeline.Reply) -> str | None:
    """Why the chain's reply is not a draft to offer, in words; None when it is one: a model's
    answer that cites a source which gives every fact of it (answers/checks.py)."""
    meta = reply.llm_meta
    if meta.get("blocked_facts"):
        return _("Черновик не прошёл проверку фактов: в нём было то, чего нет в источнике. "
                 "Ответьте по подсказкам из знаний.")
    if meta.get("route") == "sourced" and reply.links:
        return None
    if meta.get("error") or not meta.get("model"):
        return _("Модель не ответила, черновик не составлен. Ответьте по подсказкам из знаний.")
    if meta.get("route") == "no_answer":
        return _("В знаниях нет ответа на этот вопрос, черновик не составлен.")
    return _("У черновика нет источника в знаниях, поэтому он не предложен. Напишите ответ сами.")


def draft_for(*, conversation: Conversation, language: str) -> dict[str, Any]:
    """The `draft` frame for `conversation`: the bot's answer chain run on the visitor's last
    question with the conversation's history, offered only when it is a checked answer with its
    source; otherwise `ok` false and the reason, in `language`."""
    message = _question(conversation)
    frame: dict[str, Any] = {
        "type": "draft", "conversation_id": conversation.pk, "message_id": message.pk if message else None,
        "question": message.text[:QUESTION_CHARS] if message else "", "ok": False, "text": "", "source": None,
    }
    with translation.override(language):
        if message is None:
            return frame | {"reason": _("Посетитель ещё ничего не спросил.")}
        if not model_ready(conversation.bot):
            return frame | {"reason": _("Модель не подключена, черновик составить нельзя.")}
        reply = pipeline.answer(
            bot=conversation.bot, text=message.text, history=selectors.history_before(message),
            conversation_id=conversation.pk,
        )
        reason = _refusal(reply)
    if reason is not None:
        return frame | {"reason": reason}
    return frame | {"ok": True, "text": reply.text, "source": reply.links[0], "reason": ""}
