"""Writes of the Voice layer: the only module that decides `Bot.voice` (and, when an experiment's
winner is a threshold, the bot's thresholds); bots/services.py (`bot_voice_set`) stores them.

What must stay true:
- Validation runs before anything is written: a value out of range, a 1 MB «условия», a huge word
  list or an empty term raises VoiceInvalid with every problem named, and the stored voice stays
  as it was.
- Concurrent edits: every save names the revision its form was opened at; a save against an older
  revision raises VoiceConflict and writes nothing (the row is locked while it is compared).
- A running experiment's variant lives next to the settings it changes (`experiment`), so the chain
  reads the whole voice with the bot row; feedback/experiments.py starts and stops it through here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from django.db import transaction
from django.utils.translation import gettext as _

from bots.models import Bot
from bots.services import THRESHOLDS, bot_voice_set
from voice import dictionary, effective, sliders
from voice.exceptions import VoiceConflict, VoiceInvalid

CONDITIONS_MAX_CHARS: Final = 2000
CONDITIONS_MAX_LINES: Final = 20
PREFERRED_MAX: Final = 100
FORBIDDEN_MAX: Final = 300
TERM_MAX: Final = 80
REPLACEMENT_MAX: Final = 120
REPLY_MAX: Final = 500
Errors = dict[str, list[str]]


def _level(raw: Any, label: str, errors: Errors, key: str) -> int:
    text = str(raw).strip() if raw is not None else ""
    if text.lstrip("-").isdigit() and int(text) in sliders.LEVELS:
        return int(text)
    errors.setdefault(key, []).append(
        _("«%(slider)s»: уровень — целое число от 1 до 5, а не «%(value)s».")
        % {"slider": label, "value": text[:20]}
    )
    return sliders.NEUTRAL


def clean_sliders(raw: Mapping[str, Any], errors: Errors, prefix: str = "sliders") -> dict[str, int]:
    return {s.key: _level(raw.get(s.key), str(s.label), errors, f"{prefix}.{s.key}") for s in sliders.SLIDERS}


def clean_conditions(raw: str, errors: Errors, key: str = "conditions") -> str:
    text = "\n".join(line.rstrip() for line in str(raw or "").replace("\r\n", "\n").split("\n")).strip()
    if len(text) > CONDITIONS_MAX_CHARS:
        errors.setdefault(key, []).append(
            _("Условия — не больше %(max)d знаков, а здесь %(n)d. Сократите их.")
            % {"max": CONDITIONS_MAX_CHARS, "n": len(text)}
        )
    lines = [line for line in text.split("\n") if line.strip()]
    if len(lines) > CONDITIONS_MAX_LINES:
        errors.setdefault(key, []).append(
            _("Условия — не больше %(max)d строк, а здесь %(n)d. Оставьте самые важные.")
            % {"max": CONDITIONS_MAX_LINES, "n": len(lines)}
        )
    return text


def _clean_preferred(rows: Sequence[tuple[str, str]], errors: Errors) -> list[list[str]]:
    kept: list[list[str]] = []
    seen: dict[str, int] = {}
    problems: list[str] = []
    rows = [(str(t or ""), str(r or "")) for t, r in rows]
    rows = [(t, r) for t, r in rows if t.strip() or r.strip()]  # a blank row is no row
    if len(rows) > PREFERRED_MAX:
        errors["preferred"] = [_("В словаре не больше %(max)d замен, а здесь %(n)d.") % {"max": PREFERRED_MAX,
                                                                                          "n": len(rows)}]
        return []
    for number, (term, replacement) in enumerate(rows, start=1):
        term, replacement = " ".join(term.split()), " ".join(replacement.split())
        if not term:
            problems.append(_("Строка %(n)d: термин пустой — напишите слово, которое нужно заменить.") % {"n": number})
            continue
        if not replacement:
            problems.append(_("Строка %(n)d: не сказано, на что заменить «%(term)s».") % {"n": number,
                                                                                         "term": term[:TERM_MAX]})
            continue
        if len(term) > TERM_MAX or len(replacement) > REPLACEMENT_MAX:
            problems.append(_("Строка %(n)d: термин — до %(t)d знаков, замена — до %(r)d.")
                            % {"n": number, "t": TERM_MAX, "r": REPLACEMENT_MAX})
            continue
        if not any(ch.isalnum() for ch in term):
            problems.append(_("Строка %(n)d: в термине нет ни одной буквы.") % {"n": number})
            continue
        key = dictionary.normal(term)
        if key in seen:
            problems.append(_("Термин «%(term)s» повторяется в строках %(a)d и %(b)d.")
                            % {"term": term, "a": seen[key], "b": number})
            continue
        seen[key] = number
        kept.append([term, replacement])
    if problems:
        errors["preferred"] = problems
    return kept


def _clean_forbidden(words: Sequence[str], errors: Errors) -> list[str]:
    cleaned = [" ".join(str(w).split()) for w in words]
    cleaned = [w for w in cleaned if w]
    if len(cleaned) > FORBIDDEN_MAX:
        errors["forbidden"] = [_("Запрещённых слов не больше %(max)d, а здесь %(n)d. Оставьте самые важные.")
                               % {"max": FORBIDDEN_MAX, "n": len(cleaned)}]
        return []
    problems, kept, seen = [], [], set()
    for word in cleaned:
        if len(word) > TERM_MAX:
            problems.append(_("Запрещённое слово «%(word)s…» длиннее %(max)d знаков.")
                            % {"word": word[:20], "max": TERM_MAX})
        elif not any(ch.isalnum() for ch in word.rstrip("*")):
            problems.append(_("«%(word)s» — не слово: нужна хотя бы одна буква.") % {"word": word})
        elif dictionary.normal(word) not in seen:
            seen.add(dictionary.normal(word))
            kept.append(word)
    if problems:
        errors["forbidden"] = problems
    return kept


def _clean_replies(raw: Mapping[str, Mapping[str, str]], errors: Errors) -> dict[str, dict[str, str]]:
    cleaned: dict[str, dict[str, str]] = {}
    for language in effective.LANGUAGES:
        for key in effective.CANNED_KEYS:
            text = str((raw.get(language) or {}).get(key) or "").strip()
            if len(text) > REPLY_MAX:
                errors.setdefault(f"replies.{language}.{key}", []).append(
                    _("Ответ — не больше %(max)d знаков, а здесь %(n)d.") % {"max": REPLY_MAX, "n": len(text)}
                )
            elif text:
                cleaned.setdefault(language, {})[key] = text
    return cleaned


def _check_forbidden_use(stored: dict[str, Any], errors: Errors) -> None:
    """The owner's own wordings (replacements, canned replies) may not hold a forbidden word:
    the text would be cut whenever it is shown."""
    words = dictionary.compiled((), tuple(stored["forbidden"]))
    for _term, replacement in stored["preferred"]:
        bad = words.forbidden_in(replacement)
        if bad:
            errors.setdefault("preferred", []).append(
                _("Замена «%(r)s» содержит запрещённое слово «%(w)s».") % {"r": replacement, "w": bad[0]}
            )
    for language, texts in stored["replies"].items():
        for key, text in texts.items():
            bad = words.forbidden_in(text)
            if bad:
                errors.setdefault(f"replies.{language}.{key}", []).append(
                    _("Здесь есть запрещённое слово «%(w)s».") % {"w": bad[0]}
                )


def voice_validate(*, data: Mapping[str, Any]) -> dict[str, Any]:
    """The stored form of what an owner entered (sliders, conditions, preferred, forbidden,
    replies); VoiceInvalid with every problem at once."""
    errors: Errors = {}
    stored = {
        "sliders": clean_sliders(data.get("sliders") or {}, errors),
        "conditions": clean_conditions(data.get("conditions") or "", errors),
        "preferred": _clean_preferred(data.get("preferred") or [], errors),
        "forbidden": _clean_forbidden(data.get("forbidden") or [], errors),
        "replies": _clean_replies(data.get("replies") or {}, errors),
    }
    if not errors:
        _check_forbidden_use(stored, errors)
    if errors:
        raise VoiceInvalid(errors)
    return stored


def revision_of(bot: Bot) -> int:
    return int((bot.voice or {}).get("revision") or 0)


def _locked(bot: Bot) -> Bot:
    return Bot.objects.select_for_update().only("pk", "voice").get(pk=bot.pk)


def voice_save(*, bot: Bot, data: Mapping[str, Any], revision: int) -> dict[str, Any]:
    """Validate and store the bot's voice; `revision` is the one the owner's form was opened at."""
    stored = voice_validate(data=data)
    with transaction.atomic():
        row = _locked(bot)
        if revision_of(row) != revision:
            raise VoiceConflict()
        voice = {**stored, "revision": revision + 1}
        if (row.voice or {}).get("experiment"):
            voice["experiment"] = row.voice["experiment"]
        bot_voice_set(bot=bot, voice=voice)
    return voice


def preview_bot(*, bot: Bot, stored: Mapping[str, Any]) -> Bot:
    """An unsaved copy of `bot` speaking with `stored` (validated) settings, for the preview."""
    import copy

    seen = copy.copy(bot)
    seen.voice = {**stored, "revision": revision_of(bot)}
    return seen


def experiment_attach(*, bot: Bot, experiment_id: int, share: int, variant: Mapping[str, Any]) -> None:
    """Start splitting the bot's visitors: `share` percent get `variant` (feedback/experiments.py)."""
    with transaction.atomic():
        row = _locked(bot)
        voice = {**(row.voice or {}), "experiment": {"id": experiment_id, "share": share, "b": dict(variant)}}
        bot_voice_set(bot=bot, voice=voice)


def experiment_detach(*, bot: Bot, experiment_id: int, adopt: Mapping[str, Any] | None = None) -> None:
    """Stop the split; with `adopt`, the variant's settings become the bot's own (the winner applied).
    Thresholds are the bot's fields; sliders and conditions are its voice."""
    with transaction.atomic():
        row = Bot.objects.select_for_update().get(pk=bot.pk)
        voice = dict(row.voice or {})
        if (voice.get("experiment") or {}).get("id") == experiment_id:
            voice.pop("experiment")
        thresholds: dict[str, float] = {}
        if adopt:
            for name in ("sliders", "conditions"):
                if name in adopt:
                    voice[name] = adopt[name]
            if "sliders" in adopt or "conditions" in adopt:
                voice["revision"] = revision_of(row) + 1
            thresholds = {name: float(adopt[name]) for name in THRESHOLDS if adopt.get(name) is not None}
        bot_voice_set(bot=bot, voice=voice, thresholds=thresholds)
