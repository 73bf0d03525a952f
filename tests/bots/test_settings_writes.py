"""Bot settings are written in bots/services.py only (docs/architecture.md): the voice with the
thresholds an experiment's winner leaves, the demo shop's bot, and the admin's page. Each write is
checked by the model's rules first and makes open copies of the bot reload after commit."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from bots import freshness
from bots.models import Bot
from bots.services import bot_voice_set

pytestmark = pytest.mark.django_db

VOICE = {"sliders": {"brevity": 5}, "conditions": "Без скидок.", "revision": 3}


def _token_moves(bot_id: int, write, django_capture_on_commit_callbacks) -> bool:
    before = freshness.bot_remember(bot_id=bot_id)
    with django_capture_on_commit_callbacks(execute=True):
        write()
    return freshness.bot_remember(bot_id=bot_id) != before


def test_the_voice_is_stored_alone_and_open_copies_reload(bot, django_capture_on_commit_callbacks):
    stale = Bot.objects.get(pk=bot.pk)
    stale.name = "Имя из старой копии"
    assert _token_moves(bot.pk, lambda: bot_voice_set(bot=stale, voice=VOICE), django_capture_on_commit_callbacks)
    row = Bot.objects.get(pk=bot.pk)
    assert row.voice == VOICE and stale.voice == VOICE
    assert row.name == "Демо-магазин"  # one UPDATE of the voice: the copy's other fields stay unwritten


def test_an_adopted_winner_leaves_its_thresholds_with_the_voice(bot):
    bot_voice_set(bot=bot, voice=VOICE, thresholds={"match_threshold": 0.7, "confidence_threshold": 0.2})
    row = Bot.objects.get(pk=bot.pk)
    assert (row.voice, row.match_threshold, row.confidence_threshold) == (VOICE, 0.7, 0.2)
    assert (bot.match_threshold, bot.confidence_threshold) == (0.7, 0.2)


def test_a_threshold_out_of_range_writes_nothing(bot):
    with pytest.raises(ValidationError):
        bot_voice_set(bot=bot, voice=VOICE, thresholds={"match_threshold": 1.5})
    with pytest.raises(ValueError, match="not a threshold"):
        bot_voice_set(bot=bot, voice=VOICE, thresholds={"fix_bonus": 0.1})
    row = Bot.objects.get(pk=bot.pk)
    assert row.voice == {} and row.match_threshold == bot.match_threshold
