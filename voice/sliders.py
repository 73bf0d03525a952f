"""The four sliders of the Voice layer and the prompt fragment of each level, per language.

docs/voice.md lists the same texts: a test keeps the two in step. Level 3 is the rules' own tone
(«коротко, вежливо») and adds nothing, so a bot nobody tuned keeps exactly the prompt it had.
The fragments only shape tone and length: whatever they say, the fact check still has the last word.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from django.utils.translation import gettext_lazy as _

LEVELS: Final = (1, 2, 3, 4, 5)
NEUTRAL: Final = 3


@dataclass(frozen=True)
class Slider:
    key: str
    label: object  # lazy gettext
    low: object  # what level 1 means, for the page
    high: object  # what level 5 means
    fragments: dict[str, dict[int, str]]  # language -> level -> the prompt's line ("" for none)
    hint: object = ""  # what the slider changes in the answers, in one line, for the page


SLIDERS: Final[tuple[Slider, ...]] = (
    Slider(
        "formality", _("Формальность"), _("по-дружески"), _("официально"),
        {
            "ru": {
                1: "Общайтесь неформально, как с хорошим знакомым: простыми словами, можно на «ты».",
                2: "Общайтесь дружелюбно и просто, без канцелярских оборотов, на «вы».",
                3: "",
                4: "Держитесь делового тона: на «вы», полными предложениями, без разговорных слов.",
                5: "Держитесь строго официального тона: на «вы», с вежливыми формулами, без шуток и восклицаний.",
            },
            "en": {
                1: "Be informal, like talking to a friend: plain everyday words.",
                2: "Be friendly and simple, without officialese.",
                3: "",
                4: "Keep a businesslike tone: full sentences, no colloquial words.",
                5: "Keep a strictly formal tone: polite formulas, no jokes or exclamation marks.",
            },
        },
        hint=_("Как бот обращается к посетителю: по-дружески, как знакомый, или официально, как в письме."),
    ),
    Slider(
        "empathy", _("Эмпатия"), _("только суть"), _("очень участливо"),
        {
            "ru": {
                1: "Без эмоций и сочувственных фраз: только суть.",
                2: "Сочувствие — только когда посетитель явно расстроен, одной короткой фразой.",
                3: "",
                4: "Проявляйте участие: коротко признайте трудность посетителя, прежде чем отвечать.",
                5: "Будьте очень участливы: поблагодарите за вопрос, признайте чувства посетителя, предложите помощь.",
            },
            "en": {
                1: "No emotions or sympathetic phrases: only the substance.",
                2: "Show sympathy only when the visitor is clearly upset, in one short phrase.",
                3: "",
                4: "Show you care: briefly acknowledge the visitor's trouble before answering.",
                5: "Be very caring: thank them for the question, acknowledge their feelings, offer further help.",
            },
        },
        hint=_("Сколько сочувствия бот добавляет к ответу, когда у посетителя что-то не так."),
    ),
    Slider(
        "brevity", _("Краткость"), _("подробно"), _("одной фразой"),
        {
            "ru": {
                1: "Отвечайте развёрнуто: объясняйте подробно, в нескольких предложениях.",
                2: "Отвечайте достаточно полно: два-четыре предложения.",
                3: "",
                4: "Отвечайте коротко: одно-два предложения.",
                5: "Отвечайте предельно коротко: одно предложение, только главное.",
            },
            "en": {
                1: "Answer at length: explain in detail, in several sentences.",
                2: "Answer fully enough: two to four sentences.",
                3: "",
                4: "Answer briefly: one or two sentences.",
                5: "Answer as briefly as possible: one sentence, only the main point.",
            },
        },
        hint=_("Длина ответа: от подробного объяснения в несколько предложений до одной фразы."),
    ),
    Slider(
        "assertiveness", _("Настойчивость"), _("мягко"), _("настойчиво"),
        {
            "ru": {
                1: "Говорите мягко и осторожно, оставляйте выбор посетителю, ничего не навязывайте.",
                2: "Советуйте ненавязчиво: предлагайте, а не настаивайте.",
                3: "",
                4: "Говорите уверенно и прямо, предлагайте конкретный следующий шаг.",
                5: "Говорите уверенно и настойчиво: давайте ясные рекомендации и всегда называйте следующий шаг.",
            },
            "en": {
                1: "Speak softly and carefully, leave the choice to the visitor, push nothing.",
                2: "Advise unobtrusively: suggest rather than insist.",
                3: "",
                4: "Speak confidently and directly, suggest a concrete next step.",
                5: "Speak confidently and firmly: give clear recommendations and always name the next step.",
            },
        },
        hint=_("Насколько прямо бот советует: от «решать вам» до «сделайте так» со следующим шагом."),
    ),
)
BY_KEY: Final = {slider.key: slider for slider in SLIDERS}
DEFAULTS: Final = {slider.key: NEUTRAL for slider in SLIDERS}
TONE_TITLE: Final = {"ru": "Тон ответов", "en": "Tone of the answers"}


def fragments(levels: dict[str, int], language: str) -> list[str]:
    """The prompt lines for these levels, in the sliders' order; neutral levels add none."""
    language = language if language in ("ru", "en") else "ru"
    lines = [slider.fragments[language][levels.get(slider.key, NEUTRAL)] for slider in SLIDERS]
    return [line for line in lines if line]


def meaning(key: str, level: int, language: str) -> str:
    """What a level means, for the page: its prompt line, or (level 3) the rules' own tone."""
    text = BY_KEY[key].fragments[language if language in ("ru", "en") else "ru"][level]
    if text:
        return text
    return {"ru": "Как в основных правилах: коротко и вежливо.",
            "en": "As in the main rules: brief and polite."}[language if language in ("ru", "en") else "ru"]
