"""Who gets a waiting conversation: the owner's choice per bot (`Bot.assignment`).

- «Кто первым возьмёт» (first): the conversation waits in every operator's queue until one takes it.
- «По очереди» (in_turn): it goes at once to the operator on hand (inbox/presence.py) who was given
  one longest ago, skipping those who already hold the bot's `operator_open_limit`. When everyone
  is at the limit it waits, and goes to the first operator who frees a place (a close, a return to
  the bot, a transfer) or comes back.
- Either way, with nobody on hand the chat tells the visitor so at once, with the contact form
  (`chat.services._handoff`); the conversation keeps waiting, and whoever comes may still take it.

What must stay true:
- The assignments of one bot are made one at a time (a transaction-level advisory lock per bot),
  so conversations arriving together are spread evenly, each operator one more at most.
- Only a conversation still waiting is given (`chat.handoff.conversation_assign`): one the bot got
  back or an operator took meanwhile is left alone.
- A failure here never fails the visitor's message: the chat sends its signal after commit and logs
  a failing receiver (chat/signals.py); the conversation simply waits for whoever takes it.
"""

from __future__ import annotations

from typing import Any, Final

from django.db import connection, transaction

from bots.models import Bot
from chat import handoff, presence, selectors

LOCK_NAMESPACE: Final = 0x41535347  # pg_advisory_xact_lock's first key: "ASSG", this module's own


def _lock(bot_id: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s::int, %s::int)", [LOCK_NAMESPACE, bot_id])


def _push_on_commit(conversation_id: int, operator_id: int) -> None:
    """After commit, the operator's browsers hear that the conversation is theirs (inbox/push.py)."""
    from inbox import push, tasks

    if push.push_enabled():
        transaction.on_commit(lambda: tasks.push_given.delay(conversation_id, operator_id))


def _next_in_turn(turn: list[Any], held: dict[int, int], limit: int) -> Any | None:
    return next((operator for operator in turn if held[operator.pk] < limit), None)


def waiting_assign(bot: Bot) -> list[int]:
    """Give the bot's waiting conversations, longest wait first, to its operators on hand in turn
    while any has room; the ids given. Nothing when the bot's operators take conversations themselves."""
    if bot.assignment != Bot.Assignment.IN_TURN:
        return []
    given: list[int] = []
    with transaction.atomic():
        _lock(bot.pk)
        turn = list(presence.on_hand(bot))
        held = selectors.held_counts(bot.pk, [operator.pk for operator in turn])
        for conversation_id in selectors.waiting_ids(bot.pk):
            operator = _next_in_turn(turn, held, bot.operator_open_limit)
            if operator is None:
                break
            if not handoff.conversation_assign(conversation_id=conversation_id, operator=operator):
                continue
            given.append(conversation_id)
            _push_on_commit(conversation_id, operator.pk)
            held[operator.pk] += 1
            turn.remove(operator)
            turn.append(operator)
            presence.presence_assigned(operator)
    return given


def conversation_routed(*, bot_id: int) -> None:
    """A conversation of the bot has just started waiting: give it out in turn when the owner chose so."""
    waiting_assign(Bot.objects.get(pk=bot_id))


def bots_assign(bot_ids: set[int]) -> None:
    """An operator came back or freed a place: their bots' waiting conversations go out in turn."""
    for bot in Bot.objects.filter(pk__in=list(bot_ids), assignment=Bot.Assignment.IN_TURN):
        waiting_assign(bot)
