"""Bot settings are written in bots/services.py only (docs/architecture.md): the voice with the
thresholds an experiment's winner leaves, the demo shop's bot, and the admin's page. Each write is
checked by the model's rules first and makes open copies of the bot reload after commit."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from bots import freshness
from bots.models import Bot
from bots.services import bot_settings_save, bot_site_ensure, bot_voice_set
from tests.bots.admin_forms import bot_form_data

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


def test_the_bot_for_a_site_is_created_then_updated_keeping_its_other_settings():
    origins = ["http://127.0.0.1:8001", "http://localhost:8001"]
    bot = bot_site_ensure(slug="shop", name="Магазин", site_url="http://127.0.0.1:8001/", origins=origins,
                          privacy_policy_url="http://127.0.0.1:8001/privacy/")
    assert (bot.name, bot.allowed_origins, bot.privacy_policy_url) == (
        "Магазин", origins, "http://127.0.0.1:8001/privacy/")
    Bot.objects.filter(pk=bot.pk).update(match_threshold=0.9)

    again = bot_site_ensure(slug="shop", name="Магазин 2", site_url="https://shop.example/",
                            origins=["https://shop.example"])
    row = Bot.objects.get(slug="shop")
    assert again.pk == bot.pk and Bot.objects.count() == 1
    assert (row.name, row.site_url, row.allowed_origins, row.privacy_policy_url, row.match_threshold) == (
        "Магазин 2", "https://shop.example/", ["https://shop.example"], "", 0.9)


@pytest.mark.parametrize("bad", [
    {"origins": ["https://shop.example/path"]},
    {"site_url": "javascript:alert(1)"},
    {"privacy_policy_url": "ftp://shop.example/privacy"},
    {"slug": "не код"},
])
def test_a_bad_value_for_a_sites_bot_writes_nothing(bot, bad):
    values = {"slug": "demo", "name": "Другое", "site_url": "https://shop.example/",
              "origins": ["https://shop.example"], **bad}
    with pytest.raises(ValidationError):
        bot_site_ensure(**values)
    row = Bot.objects.get(pk=bot.pk)
    assert (row.name, row.site_url, row.allowed_origins) == ("Демо-магазин", "http://127.0.0.1/", [])
    assert Bot.objects.count() == 1


def test_the_demo_shops_bot_passes_the_models_rules_and_is_made_once(settings):
    from demo.run import DemoPorts, demo_bot_ensure

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    bot = demo_bot_ensure(DemoPorts())
    assert bot.allowed_origins == ["http://127.0.0.1:8001", "http://localhost:8001"]
    assert bot.privacy_policy_url == "http://127.0.0.1:8001/privacy/"
    assert demo_bot_ensure(DemoPorts()).pk == bot.pk and Bot.objects.count() == 1


def test_a_bot_saved_whole_is_inserted_or_updated_and_open_copies_reload(bot, django_capture_on_commit_callbacks):
    new = bot_settings_save(bot=Bot(slug="fresh", name="Новый", site_url="https://fresh.example/"))
    assert Bot.objects.get(slug="fresh").pk == new.pk
    bot.name, bot.handoff_enabled = "Переименован", not bot.handoff_enabled
    assert _token_moves(bot.pk, lambda: bot_settings_save(bot=bot), django_capture_on_commit_callbacks)
    row = Bot.objects.get(pk=bot.pk)
    assert (row.name, row.handoff_enabled) == ("Переименован", bot.handoff_enabled)


def test_the_admins_page_saves_the_bot(client, owner, bot):
    """Through bots/services.py: tests/test_writers.py keeps bots/admin.py from writing a Bot itself."""
    client.force_login(owner)
    response = client.post(reverse("admin:bots_bot_change", args=[bot.pk]), bot_form_data(bot, name="Новое имя"))
    assert response.status_code == 302, response.content.decode()[-3000:]
    assert Bot.objects.get(pk=bot.pk).name == "Новое имя"
