"""JSON shapes of a bot reply that other programs rely on: `manage.py ask --json` prints it and the
REST API's ask/ returns it. Exactly the keys text, links [{url, title}], buttons [{id, label}],
cards [{id, name, price, old_price, currency, price_text, old_price_text, available, url, picture}],
intent, source (entry id or null), flags {low_confidence, unanswered, friction, escalation},
timings {rules, search, llm, total} in ms. Add keys only with care: scripts compare them."""

from __future__ import annotations

from typing import Any, Final

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy

from answers.pipeline import Reply
from answers.products import card_json
from chat.models import Message

FLAG_NAMES: Final = ("low_confidence", "unanswered", "friction", "escalation")
# The flags as a person reads them (the admin's transcripts); tests/chat/test_admin_transcript.py
# keeps it complete.
FLAG_LABELS: Final[dict[str, Promise]] = {
    "low_confidence": gettext_lazy("низкая уверенность"),
    "unanswered": gettext_lazy("нет точного ответа"),
    "friction": gettext_lazy("недовольство посетителя"),
    "escalation": gettext_lazy("просьба позвать оператора"),
}


def reply_json(reply: Message) -> dict[str, Any]:
    return {
        "text": reply.text,
        "links": [{"url": link.get("url", ""), "title": link.get("title", "")} for link in reply.links],
        "buttons": [{"id": b.get("id", ""), "label": b.get("label", "")} for b in reply.buttons],
        "cards": [card_json(card) for card in reply.cards or []],
        "intent": reply.intent,
        "source": reply.source_entry_id,
        "flags": {name: reply.flag(name) for name in FLAG_NAMES},
        "timings": dict((reply.llm_meta or {}).get("timings", {})),
    }


def chain_reply_json(reply: Reply) -> dict[str, Any]:
    """The same shape for a reply of the chain that was not stored (a question asked without a
    conversation): what `reply_json` gives for it once stored. Friction needs earlier turns, so a
    lone question never has it."""
    return {
        "text": reply.text,
        "links": [{"url": link.get("url", ""), "title": link.get("title", "")} for link in reply.links],
        "buttons": [{"id": b.get("id", ""), "label": b.get("label", "")} for b in reply.buttons],
        "cards": [card_json(card) for card in reply.cards],
        "intent": reply.intent[:32],
        "source": reply.source_entry_id,
        "flags": {name: bool(reply.flags.get(name)) for name in FLAG_NAMES},
        "timings": dict(reply.timings),
    }
