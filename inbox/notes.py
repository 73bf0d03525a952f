"""Operators' notes in a transcript: the one module that writes a `Note` (tests/test_writers.py).
The bot's other operators see a note at once (the bot's feed, `inbox_note` in the consumer) and
in the transcript; the visitor never does, as no path to a visitor reads notes.

What must stay true:
- A note's text is cleaned like an operator's message (chat.services.clean_text: 1–2000
  characters, no control characters); an empty one is refused with a readable error.
- The caller has checked the operator may see the conversation (`inbox.access`); the note takes
  the conversation's bot, so it is only ever told to that bot's feed.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from chat import events, frames, services
from inbox.models import Note


def note_json(note: Note) -> dict[str, Any]:
    return {"id": note.pk, "author": note.author_name, "text": note.text, "created_at": note.created_at.isoformat()}


def note_add(*, conversation: Any, author: Any, text: str) -> Note:
    """Store the note and tell the bot's feed after commit."""
    text = services.clean_text(text)
    with transaction.atomic():
        note = Note.objects.create(
            bot_id=conversation.bot_id, conversation_id=conversation.pk, author=author,
            author_name=frames.display_name(author), text=text,
        )
        events.publish_to_feed(conversation.bot_id, {
            "type": "inbox.note", "conversation_id": conversation.pk, "note": note_json(note),
        })
    return note


def notes_of(conversation: Any) -> list[Note]:
    return list(Note.objects.filter(conversation_id=conversation.pk).order_by("id"))
