"""The visitor's stars for a finished conversation (chat/csat.py) on the real widget socket: asked
when an operator closes it, stored once with that operator, and every bad rating refused in words
with nothing stored."""

from __future__ import annotations

import pytest

from bots.services import bot_operators_set
from chat import handoff, services
from chat.models import Conversation, ConversationRating
from tests.chat.conftest import ORIGIN, in_db

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def operator(django_user_model, shop):
    from bots.models import Membership

    user = django_user_model.objects.create_user(username="anna@shop.example", email="anna@shop.example",
                                                 password="pw-member-123", first_name="Анна")
    Membership.objects.create(bot=shop, user=user, role="operator")
    return user


def _take_and_close(conversation_id, operator):
    handoff.conversation_take(conversation_id=conversation_id, operator=operator)
    handoff.operator_message_send(conversation_id=conversation_id, operator=operator, text="Готово, заказ оформлен.",
                                  client_msg_id="op-1")
    handoff.conversation_finish(conversation_id=conversation_id, operator=operator)


async def _closed_by_operator(client, operator, visitor="v_csat"):
    """A visitor's conversation an operator took, answered and closed; the frames up to the ask."""
    welcome = await client.hello(visitor)
    conversation_id = welcome["conversation_id"]
    await in_db(_take_and_close)(conversation_id, operator)
    seen: list[dict] = []
    while not seen or seen[-1]["type"] != "csat_ask":
        seen.append(await client.recv())
    return conversation_id, seen


async def test_the_operator_closes_and_the_visitor_rates_it_once(shop, connect, operator):
    client = await connect(shop)
    conversation_id, seen = await _closed_by_operator(client, operator)
    assert {"type": "state", "state": "closed"} in seen
    assert seen[-1] == {"type": "csat_ask", "conversation_id": conversation_id}  # after the note and the state
    await client.send(type="csat", conversation_id=conversation_id, stars=4, comment="  Быстро и вежливо  ")
    assert await client.recv() == {"type": "csat_saved", "conversation_id": conversation_id, "stars": 4}
    rating = await in_db(ConversationRating.objects.get)(conversation_id=conversation_id)
    assert (rating.stars, rating.comment, rating.operator_id, rating.operator_name) == (
        4, "Быстро и вежливо", operator.pk, "Анна")
    assert rating.bot_id == shop.pk

    # A second rating is refused and the first stands.
    await client.send(type="csat", conversation_id=conversation_id, stars=1)
    error = await client.recv()
    assert (error["type"], error["code"], error["reason"], error["frame"]) == (
        "error", "csat_refused", "csat_already", "csat")
    assert error["message"] == "Спасибо, этот разговор уже оценён."
    rating = await in_db(ConversationRating.objects.get)(conversation_id=conversation_id)
    assert rating.stars == 4


@pytest.mark.parametrize(
    ("change", "field", "text"),
    [
        ({"stars": 0}, "stars", "Оценка — от 1 до 5 звёзд."),
        ({"stars": 9}, "stars", "Оценка — от 1 до 5 звёзд."),
        ({"stars": "4"}, "stars", "Оценка — от 1 до 5 звёзд."),
        ({"stars": 4.5}, "stars", "Оценка — от 1 до 5 звёзд."),
        ({"stars": True}, "stars", "Оценка — от 1 до 5 звёзд."),
        ({"stars": None}, "stars", "Оценка — от 1 до 5 звёзд."),
        ({"comment": "о" * 1001}, "comment", "Комментарий слишком длинный: не больше 1000 знаков."),
        ({"comment": ["нет"]}, "comment", "Комментарий слишком длинный: не больше 1000 знаков."),
    ],
)
async def test_a_bad_rating_is_refused_in_words_and_nothing_is_stored(shop, connect, operator, change, field, text):
    client = await connect(shop)
    conversation_id, _seen = await _closed_by_operator(client, operator)
    await client.send(**({"type": "csat", "conversation_id": conversation_id, "stars": 5, "comment": ""} | change))
    error = await client.recv()
    assert (error["type"], error["code"], error["field"], error["message"]) == ("error", "csat_refused", field, text)
    assert not await in_db(ConversationRating.objects.exists)()
    # The socket stays usable: the right rating is taken.
    await client.send(type="csat", conversation_id=conversation_id, stars=5)
    assert (await client.recv())["type"] == "csat_saved"


async def test_a_comment_of_exactly_the_limit_is_taken(shop, connect, operator):
    client = await connect(shop)
    conversation_id, _seen = await _closed_by_operator(client, operator)
    await client.send(type="csat", conversation_id=conversation_id, stars=3, comment="о" * 1000)
    assert (await client.recv())["type"] == "csat_saved"


async def test_another_visitor_s_or_another_bot_s_conversation_reads_as_not_found(
    shop, other_bot, connect, operator
):
    client = await connect(shop)
    conversation_id, _seen = await _closed_by_operator(client, operator)
    stranger = await connect(shop)
    await stranger.hello("v_stranger")
    await stranger.send(type="csat", conversation_id=conversation_id, stars=1, comment="плохо")
    error = await stranger.recv()
    assert (error["code"], error["reason"], error["message"]) == (
        "csat_refused", "csat_not_found", "Этот разговор не найден.")

    def other_bot_closed():
        other_bot.allowed_origins = [ORIGIN]
        other_bot.save(update_fields=["allowed_origins"])
        conversation = services.conversation_open(bot=other_bot, visitor_id="v_csat")
        services.conversation_close(conversation=conversation, outcome="x", notify=False)
        return conversation.pk

    foreign_id = await in_db(other_bot_closed)()
    await client.send(type="csat", conversation_id=foreign_id, stars=5)  # the same visitor id, another bot
    assert (await client.recv())["reason"] == "csat_not_found"
    assert not await in_db(ConversationRating.objects.exists)()


async def test_an_open_conversation_cannot_be_rated(shop, connect):
    client = await connect(shop)
    welcome = await client.hello("v_open")
    await client.send(type="csat", conversation_id=welcome["conversation_id"], stars=5)
    error = await client.recv()
    assert (error["code"], error["reason"], error["message"]) == (
        "csat_refused", "csat_not_closed", "Оценить разговор можно, когда он завершён.")
    assert not await in_db(ConversationRating.objects.exists)()


async def test_rating_before_hello_is_refused(shop, connect):
    client = await connect(shop)
    await client.send(type="csat", conversation_id=1, stars=5)
    assert (await client.recv())["code"] == "hello_required"


async def test_an_english_bot_refuses_in_english(shop, connect):
    def english():
        shop.language = "en"
        shop.save(update_fields=["language"])

    await in_db(english)()
    client = await connect(shop)
    welcome = await client.hello("v_en")
    await client.send(type="csat", conversation_id=welcome["conversation_id"], stars=9)
    assert (await client.recv())["message"] == "A rating is 1 to 5 stars."


def test_a_conversation_the_visitor_s_side_closed_asks_nothing_unless_the_owner_wants_it(shop):
    from chat.csat import csat_wanted

    conversation = services.conversation_open(bot=shop, visitor_id="v_quiet")
    services.conversation_close(conversation=conversation, outcome="answered", notify=False)
    conversation = Conversation.objects.select_related("bot").get(pk=conversation.pk)
    assert not csat_wanted(conversation)
    bot_operators_set(bot=shop, sla_minutes=5, csat_after_bot=True)
    conversation = Conversation.objects.select_related("bot").get(pk=conversation.pk)
    assert csat_wanted(conversation)


async def test_a_conversation_the_bot_resolved_asks_for_stars_when_the_owner_wants_it(knowledge, shop, connect):
    from datetime import timedelta

    from django.utils import timezone

    from feedback.outcomes import outcomes_refresh
    from tests.chat.conftest import DELIVERY_QUESTION

    client = await connect(shop)
    welcome = await client.hello("v_resolved")
    await client.ask(DELIVERY_QUESTION, "q1")
    later = timezone.now() + timedelta(hours=1)
    await in_db(outcomes_refresh)(bot=shop, now=later)  # the option is off: the conversation stays open
    assert await client.ws.receive_nothing(timeout=0.5)
    assert (await in_db(Conversation.objects.get)(pk=welcome["conversation_id"])).state == "bot"

    await in_db(bot_operators_set)(bot=shop, sla_minutes=5, csat_after_bot=True)
    await in_db(outcomes_refresh)(bot=shop, now=later)
    assert await client.recv() == {"type": "state", "state": "closed"}
    assert await client.recv() == {"type": "csat_ask", "conversation_id": welcome["conversation_id"]}
    await client.send(type="csat", conversation_id=welcome["conversation_id"], stars=5, comment="Всё понятно")
    assert (await client.recv())["type"] == "csat_saved"
    rating = await in_db(ConversationRating.objects.get)(conversation_id=welcome["conversation_id"])
    assert rating.operator_id is None and rating.operator_name == ""
    conversation = await in_db(Conversation.objects.get)(pk=welcome["conversation_id"])
    assert conversation.outcome == "resolved_by_bot" and conversation.closed_by_id is None


async def test_the_ask_survives_a_reload_until_the_visitor_rates(shop, connect, operator):
    """The ask is a frame: a visitor who reloads (or opens another page of the site) before rating
    still gets the stars, in the welcome, until they rate or a day has passed; nobody else does."""
    first = await connect(shop)
    conversation_id, _ = await _closed_by_operator(first, operator, visitor="v_reload")
    await first.close()
    again = await connect(shop)
    welcome = await again.hello("v_reload", started=False)
    assert (welcome["conversation_id"], welcome["csat"]) == (None, {"conversation_id": conversation_id})
    stranger = await connect(shop)
    assert (await stranger.hello("v_someone_else", started=False))["csat"] is None
    await again.send(type="csat", conversation_id=conversation_id, stars=5)
    assert (await again.recv())["type"] == "csat_saved"
    rated = await connect(shop)
    assert (await rated.hello("v_reload", started=False))["csat"] is None


async def test_a_day_old_ask_or_one_the_visitor_closed_is_not_repeated(shop, connect, operator):
    from datetime import timedelta

    from django.utils import timezone

    client = await connect(shop)
    conversation_id, _ = await _closed_by_operator(client, operator, visitor="v_old")
    day_ago = timezone.now() - timedelta(hours=25)
    await in_db(lambda: Conversation.objects.filter(pk=conversation_id).update(closed_at=day_ago))()
    assert (await (await connect(shop)).hello("v_old", started=False))["csat"] is None
    quiet = await in_db(services.conversation_open)(bot=shop, visitor_id="v_self")
    await in_db(services.conversation_close)(conversation=quiet)  # the visitor's side: nothing was asked
    assert (await (await connect(shop)).hello("v_self", started=False))["csat"] is None
