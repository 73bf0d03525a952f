"""Giving waiting conversations out (inbox/assignment.py): in turn to the operators on hand, skipping
those at their limit and those away, one more each at most; with nobody on hand the visitor gets the
contact form at once; «кто первым возьмёт» leaves the conversation waiting for whoever takes it.
Real widget and operator sockets, real database and channel layer."""

from __future__ import annotations

from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import pytest

from bots.models import Bot
from chat import presence, services
from chat.models import Conversation
from inbox import assignment
from tests.chat.conftest import closing_connections, in_db
from tests.inbox.conftest import _member

pytestmark = pytest.mark.django_db(transaction=True)
AWAY_TEXT = ("Сейчас никого из операторов нет на месте. Оставьте контакт, и мы свяжемся с вами. "
             "Если оператор появится раньше, он ответит здесь.")
AWAY_NO_FORM = "Сейчас никого из операторов нет на месте. Оператор ответит здесь, как только появится."


def _in_turn(bot, **fields):
    Bot.objects.filter(pk=bot.pk).update(assignment=Bot.Assignment.IN_TURN, **fields)


async def _calls_operator(connect, shop, visitor_id):
    """A visitor who pressed «Позвать оператора»: their socket, after the handoff's note and state."""
    visitor = await connect(shop)
    await visitor.hello(visitor_id, started=False)
    await visitor.send(type="button", id="operator")
    assert (await visitor.recv())["message"]["text"].startswith("Оператор подключится")
    assert await visitor.recv() == {"type": "state", "state": "waiting_operator"}
    return visitor


def _holders():
    return dict(Conversation.objects.filter(state=Conversation.State.OPERATOR)
                .values_list("visitor_id", "assigned_to__first_name"))


async def test_conversations_go_in_turn_and_each_operator_hears_theirs(
    shop, connect, connect_operator, operator, second_operator
):
    await in_db(_in_turn)(shop)
    anna, boris = await connect_operator(operator), await connect_operator(second_operator)
    await anna.hello(), await boris.hello()
    assert anna.away is False and boris.away is False
    visitors = [await _calls_operator(connect, shop, f"v_turn_{n}") for n in range(3)]
    told = await visitors[0].recv()
    assert told["message"]["text"] in ("Оператор Анна на связи.", "Оператор Борис на связи.")
    assert await visitors[0].recv() == {"type": "state", "state": "operator"}
    holders = await in_db(_holders)()
    assert Counter(holders.values()) in (Counter({"Анна": 2, "Борис": 1}), Counter({"Анна": 1, "Борис": 2}))
    assert holders["v_turn_0"] != holders["v_turn_1"]  # in turn, not the same one twice
    mine = await anna.conversation("operator")
    assert mine["assigned_to"]["id"] in (operator.pk, second_operator.pk)


async def test_an_operator_at_the_limit_is_skipped_and_a_freed_place_takes_the_next(
    shop, connect, connect_operator, operator, second_operator
):
    await in_db(_in_turn)(shop, operator_open_limit=1)
    anna, boris = await connect_operator(operator), await connect_operator(second_operator)
    await anna.hello(), await boris.hello()
    for n in range(3):
        await _calls_operator(connect, shop, f"v_limit_{n}")
    holders = await in_db(_holders)()
    assert sorted(holders.values()) == ["Анна", "Борис"] and "v_limit_2" not in holders  # the third waits
    first_annas = next(v for v, name in holders.items() if name == "Анна")
    conversation_id = await in_db(lambda: Conversation.objects.get(visitor_id=first_annas).pk)()
    third = await in_db(lambda: Conversation.objects.get(visitor_id="v_limit_2").pk)()
    await anna.send(type="close", conversation_id=conversation_id)
    given = await anna.until("conversation")
    while given["conversation"]["id"] != third or given["conversation"]["state"] != "operator":
        given = await anna.until("conversation")
    assert given["conversation"]["assigned_to"]["id"] == operator.pk
    assert (await in_db(_holders)())["v_limit_2"] == "Анна"


async def test_an_operator_who_said_away_gets_nothing_until_back(
    shop, connect, connect_operator, operator, second_operator
):
    await in_db(_in_turn)(shop)
    anna, boris = await connect_operator(operator), await connect_operator(second_operator)
    await anna.hello(), await boris.hello()
    await anna.send(type="presence", away=True)
    assert await anna.until("presence") == {"type": "presence", "away": True}
    for n in range(3):
        await _calls_operator(connect, shop, f"v_away_{n}")
    assert set((await in_db(_holders)()).values()) == {"Борис"}
    again = await connect_operator(operator)  # a new tab does not undo «Отошла»
    await again.hello()
    assert again.away is True
    await anna.send(type="presence", away=False)
    assert await anna.until("presence") == {"type": "presence", "away": False}
    await _calls_operator(connect, shop, "v_back")
    assert (await in_db(_holders)())["v_back"] == "Анна"  # never given one: her turn first


@pytest.mark.parametrize("policy", ["https://shop.example/privacy/", ""])
async def test_with_nobody_on_hand_the_visitor_hears_so_at_once_and_may_still_be_taken(
    policy, shop, connect, connect_operator, operator
):
    await in_db(lambda: Bot.objects.filter(pk=shop.pk).update(privacy_policy_url=policy))()
    shop.privacy_policy_url = policy
    visitor = await connect(shop)
    await visitor.hello("v_nobody", started=False)
    await visitor.send(type="button", id="operator")
    told = await visitor.recv()
    assert told["message"]["text"] == (AWAY_TEXT if policy else AWAY_NO_FORM)
    assert [b["id"] for b in told["message"]["buttons"]] == (["lead"] if policy else [])
    assert await visitor.recv() == {"type": "state", "state": "waiting_operator"}
    conversation = await in_db(Conversation.objects.get)(visitor_id="v_nobody")
    assert conversation.state == Conversation.State.WAITING_OPERATOR
    assert bool(conversation.lead_offered_at) is bool(policy)  # the wait's timeout offers it no more
    anna = await connect_operator(operator)
    [waiting] = await anna.hello()
    await anna.send(type="take", conversation_id=waiting["id"])
    assert (await anna.conversation("operator"))["assigned_to"]["id"] == operator.pk
    assert (await visitor.recv())["message"]["text"] == "Оператор Анна на связи."


async def test_a_tab_closed_longer_than_the_bots_minutes_is_away(shop, connect, connect_operator, operator):
    from datetime import timedelta

    from django.utils import timezone

    from chat.models import OperatorPresence as Presence

    anna = await connect_operator(operator)
    await anna.hello()
    await anna.ws.disconnect()
    assert [u.pk for u in await in_db(lambda: list(presence.on_hand(shop)))()] == [operator.pk]
    long_ago = timezone.now() - timedelta(minutes=shop.away_after_minutes + 1)
    await in_db(lambda: Presence.objects.filter(user=operator).update(seen_at=long_ago))()
    assert await in_db(lambda: list(presence.on_hand(shop)))() == []
    visitor = await connect(shop)
    await visitor.hello("v_closed_tab", started=False)
    await visitor.send(type="button", id="operator")
    assert (await visitor.recv())["message"]["text"] == AWAY_NO_FORM


async def test_whoever_takes_first_leaves_it_waiting_with_no_form(shop, connect, connect_operator, operator):
    anna = await connect_operator(operator)
    await anna.hello()
    visitor = await _calls_operator(connect, shop, "v_first")
    assert await visitor.ws.receive_nothing(timeout=0.5)
    assert (await anna.conversation("waiting_operator"))["assigned_to"] is None


async def test_a_bad_presence_frame_is_refused_in_words(connect_operator, operator):
    anna = await connect_operator(operator)
    await anna.hello()
    for away in ("yes", None, 1):
        await anna.send(type="presence", away=away)
        error = await anna.until("error")
        assert error["code"] == "bad_frame"
        assert error["message"] == "Не удалось разобрать сообщение: поле «away» должно быть true или false."
    assert await in_db(presence.is_away)(operator) is False


def test_another_bots_operator_on_hand_is_never_given_one(shop, other_bot, operator, other_operator):
    _in_turn(shop)
    presence.presence_seen(other_operator)
    conversation = services.conversation_open(bot=shop, visitor_id="v_tenant")
    services.conversation_handoff(conversation=conversation, reason="button")
    conversation.refresh_from_db()
    assert conversation.state == Conversation.State.WAITING_OPERATOR and conversation.assigned_to_id is None
    presence.presence_seen(operator)
    assert assignment.waiting_assign(Bot.objects.get(pk=shop.pk)) == [conversation.pk]
    conversation.refresh_from_db()
    assert conversation.assigned_to_id == operator.pk


def test_many_arriving_at_once_are_spread_evenly(django_user_model, shop):
    """Twenty conversations asking at the same moment, four operators on hand: five each."""
    _in_turn(shop, operator_open_limit=10)
    team = [_member(django_user_model, shop, f"op{n}@shop.example", "operator", first_name=f"Оп{n}") for n in range(4)]
    for user in team:
        presence.presence_seen(user)
    away = _member(django_user_model, shop, "away@shop.example", "operator", first_name="Отошла")
    presence.presence_away_set(away, away=True)
    conversations = [services.conversation_open(bot=shop, visitor_id=f"v_many_{n}") for n in range(20)]

    def handoff(conversation):
        services.conversation_handoff(conversation=Conversation.objects.get(pk=conversation.pk), reason="button")

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(closing_connections(handoff), conversations))
    holders = Counter(Conversation.objects.filter(bot=shop).values_list("assigned_to__first_name", flat=True))
    assert holders == Counter({"Оп0": 5, "Оп1": 5, "Оп2": 5, "Оп3": 5})
