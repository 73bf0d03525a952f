"""The voice a visitor gets: the bot's settings (stored in `Bot.voice`), with the variant of a
running A/B experiment applied for the visitors in its second arm.

`settings_for(bot, visitor_id)` is the one function the chain calls. It reads only the bot row
it is given, so a chat turn costs no query for its voice. The visitor's arm is a stable hash of
the experiment and the visitor id: the same visitor is always in the same arm of one experiment,
and `share` percent of visitors are in arm "b".
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from bots.models import Bot
from voice import dictionary, sliders

# The canned replies an owner may reword (answers/replies.py keys), per language.
CANNED_KEYS: Final = ("greeting", "handoff", "no_answer", "out_of_hours")
# A replies.py key that shows the same moment as an editable one (the out-of-hours text without a form).
CANNED_ALIASES: Final = {"out_of_hours_no_form": "out_of_hours"}
LANGUAGES: Final = ("ru", "en")
CONDITIONS_TITLE: Final = {
    "ru": "Условия владельца сайта (дополнительные правила; правила выше важнее):",
    "en": "The site owner's conditions (extra rules; the rules above come first):",
}
ARMS: Final = ("a", "b")


@dataclass(frozen=True)
class Voice:
    sliders: Mapping[str, int] = field(default_factory=lambda: dict(sliders.DEFAULTS))
    conditions: str = ""
    preferred: tuple[tuple[str, str], ...] = ()
    forbidden: tuple[str, ...] = ()
    replies: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    match_threshold: float | None = None  # a threshold variant's; None: the bot's own
    confidence_threshold: float | None = None
    variant: str = ""  # "<experiment id>:<arm>" while the visitor is in a running experiment

    @property
    def dictionary(self) -> dictionary.Dictionary:
        return dictionary.compiled(self.preferred, self.forbidden)

    def prompt(self, language: str) -> str:
        """The system prompt's voice part: the sliders' lines, then the owner's conditions; "" when
        neither says anything (the bot's prompt stays exactly the rules)."""
        language = language if language in LANGUAGES else "ru"
        parts = []
        lines = sliders.fragments(dict(self.sliders), language)
        if lines:
            parts.append("\n".join([sliders.TONE_TITLE[language], *(f"- {line}" for line in lines)]))
        if self.conditions.strip():
            parts.append(f"{CONDITIONS_TITLE[language]}\n{self.conditions.strip()}")
        return "\n\n".join(parts)

    def canned(self, language: str, key: str) -> str:
        return self.replies.get(language, {}).get(CANNED_ALIASES.get(key, key), "")

    def apply_to(self, bot: Bot) -> Bot:
        """The bot as this voice sees it: a threshold variant's thresholds on an unsaved copy."""
        if self.match_threshold is None and self.confidence_threshold is None:
            return bot
        seen = copy.copy(bot)
        if self.match_threshold is not None:
            seen.match_threshold = self.match_threshold
        if self.confidence_threshold is not None:
            seen.confidence_threshold = self.confidence_threshold
        return seen


def _levels(raw: Any) -> dict[str, int]:
    levels = dict(sliders.DEFAULTS)
    if isinstance(raw, Mapping):
        for key in levels:
            value = raw.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value in sliders.LEVELS:
                levels[key] = value
    return levels


def base_of(stored: Mapping[str, Any] | None) -> Voice:
    """The bot's own voice from its stored JSON (validated when saved; read defensively anyway)."""
    stored = stored or {}
    replies = stored.get("replies") or {}
    return Voice(
        sliders=_levels(stored.get("sliders")),
        conditions=str(stored.get("conditions") or ""),
        preferred=tuple((str(t), str(r)) for t, r in stored.get("preferred") or ()),
        forbidden=tuple(str(w) for w in stored.get("forbidden") or ()),
        replies={lang: {k: str(v) for k, v in (replies.get(lang) or {}).items() if k in CANNED_KEYS and v}
                 for lang in LANGUAGES},
    )


def with_variant(voice: Voice, variant: Mapping[str, Any], label: str) -> Voice:
    """`voice` with a variant's changes: sliders, conditions, thresholds (whatever it holds)."""
    changes: dict[str, Any] = {"variant": label}
    if "sliders" in variant:
        changes["sliders"] = _levels(variant["sliders"])
    if "conditions" in variant:
        changes["conditions"] = str(variant["conditions"] or "")
    for name in ("match_threshold", "confidence_threshold"):
        if variant.get(name) is not None:
            changes[name] = float(variant[name])
    return dataclasses.replace(voice, **changes)


def arm_of(experiment_id: int, share: int, visitor_id: str) -> str:
    """"b" for `share` percent of visitors, "a" for the rest; the same visitor always the same arm."""
    digest = hashlib.sha256(f"{experiment_id}:{visitor_id}".encode()).digest()
    return "b" if int.from_bytes(digest[:8], "big") % 100 < share else "a"


def variant_of(bot: Bot, visitor_id: str | None) -> str:
    """"<experiment id>:<arm>" for a visitor of a bot with a running experiment, else ""."""
    running = (bot.voice or {}).get("experiment")
    if not running or not visitor_id:
        return ""
    return f"{running['id']}:{arm_of(int(running['id']), int(running['share']), visitor_id)}"


def settings_for(bot: Bot, visitor_id: str | None = None) -> Voice:
    """The effective voice of `bot` for this visitor (None: the bot's own, e.g. a preview)."""
    voice = base_of(bot.voice)
    label = variant_of(bot, visitor_id)
    if label.endswith(":b"):
        return with_variant(voice, bot.voice["experiment"].get("b") or {}, label)
    return dataclasses.replace(voice, variant=label) if label else voice


def dictionary_of(bot: Bot) -> dictionary.Dictionary:
    """The bot's dictionary (never part of an experiment), cheap when it is empty."""
    stored = bot.voice or {}
    if not stored.get("preferred") and not stored.get("forbidden"):
        return dictionary.EMPTY
    voice = base_of(stored)
    return voice.dictionary
