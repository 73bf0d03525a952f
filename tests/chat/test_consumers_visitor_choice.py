"""«Предлагать выбор до первого сообщения»: the welcome of a visitor with no conversation says
whether the widget offers «Спросить бота» / «Написать оператору» — only when the owner turned it
on, handoff is on and operators work now; never to a visitor coming back to a conversation."""

import datetime as dt

import pytest

from behavior import hours
from bots import services as bot_services
from bots.models import Bot, Holiday
from tests.chat.conftest import in_db

pytestmark = pytest.mark.django_db(transaction=True)


async def test_off_by_default_the_welcome_offers_no_choice(shop, connect):
    assert shop.visitor_choice is False
    welcome = await (await connect(shop)).hello("v_default", started=False)
    assert welcome["conversation_id"] is None and welcome["choice"] is False


async def test_on_with_handoff_the_welcome_offers_the_choice(shop, connect):
    await in_db(bot_services.bot_visitor_choice_set)(bot=shop, on=True)
    assert (await in_db(Bot.objects.get)(pk=shop.pk)).visitor_choice is True
    welcome = await (await connect(shop)).hello("v_new", started=False)
    assert welcome["conversation_id"] is None and welcome["choice"] is True


async def test_the_owner_turning_it_on_reaches_an_open_socket(shop, connect):
    client = await connect(shop)
    assert (await client.hello("v_open", started=False))["choice"] is False
    await in_db(bot_services.bot_visitor_choice_set)(bot=shop, on=True)
    assert (await client.hello("v_open", started=False))["choice"] is True


async def test_a_visitor_coming_back_to_a_conversation_is_not_offered_it(shop, connect):
    await in_db(bot_services.bot_visitor_choice_set)(bot=shop, on=True)
    welcome = await (await connect(shop)).hello("v_back", started=True)
    assert welcome["conversation_id"] is not None and welcome["choice"] is False


async def test_without_handoff_there_is_no_choice(shop, connect):
    await in_db(bot_services.bot_visitor_choice_set)(bot=shop, on=True)
    shop.handoff_enabled = False
    await in_db(bot_services.bot_settings_save)(bot=shop)
    welcome = await (await connect(shop)).hello("v_nohandoff", started=False)
    assert welcome["choice"] is False and welcome["lead_form"] is None


async def test_out_of_working_hours_there_is_no_choice(shop, connect):
    await in_db(bot_services.bot_visitor_choice_set)(bot=shop, on=True)

    def closed_today() -> None:
        bot_services.opening_hours_set(bot=shop, rows=[(0, dt.time(9), dt.time(18))])
        Holiday.objects.create(bot=shop, date=hours.local_now(shop).date())

    await in_db(closed_today)()
    welcome = await (await connect(shop)).hello("v_night", started=False)
    assert welcome["choice"] is False


async def test_choosing_the_operator_starts_a_waiting_conversation(shop, connect):
    await in_db(bot_services.bot_visitor_choice_set)(bot=shop, on=True)
    client = await connect(shop)
    assert (await client.hello("v_choose", started=False))["choice"] is True
    await client.send(type="button", id="operator")
    assert (await client.recv())["message"]["role"] == "system"
    assert await client.recv() == {"type": "state", "state": "waiting_operator"}
    again = await (await connect(shop)).hello("v_choose", started=False)
    assert again["conversation_id"] is not None and again["state"] == "waiting_operator"
    assert again["choice"] is False
