"""The chain's machine words as a person reads them: the owner's hit testing (owner/insights/testing.py)
and the admin's transcripts (chat/admin.py) show the same label for an intent."""

from __future__ import annotations

from typing import Final

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy

# Every intent a reply can carry (the rules' `INTENT_NAMES`, the model's `structured.INTENTS`, and
# "error" from a failed turn) as the owner reads it; tests/behavior/test_labels.py keeps it complete.
INTENT_LABELS: Final[dict[str, Promise]] = {
    "whoami": gettext_lazy("вопрос о самом боте"),
    "operator": gettext_lazy("просьба позвать оператора"),
    "order": gettext_lazy("вопрос о заказе"),
    "greeting": gettext_lazy("приветствие"),
    "thanks": gettext_lazy("благодарность"),
    "read": gettext_lazy("просьба посоветовать статью"),
    "purchase": gettext_lazy("условия покупки (доставка, оплата, возврат, гарантия)"),
    "product": gettext_lazy("вопрос о товаре"),
    "question": gettext_lazy("вопрос"),
    "smalltalk": gettext_lazy("разговор не по делу"),
    "error": gettext_lazy("сбой при ответе"),
}


def intent_label(intent: str) -> str:
    """An intent as a person reads it in the current language; an unknown one as it is stored."""
    label = INTENT_LABELS.get(intent)
    return str(label) if label is not None else intent
