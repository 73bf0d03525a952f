"""The states of a conversation and the moves between them. This is the one module that changes
`Conversation.state`, together with the fields that move with it (`assigned_to`, `waiting_since`,
`alerted_at`, `lead_offered_at`, `outcome`, `closed_at`, and `handed_off_at`, set by the first move
towards a person); tests/chat/test_states.py keeps every
other module from assigning a state.

                 to_waiting                        to_operator
        bot ──────────────────▶ waiting_operator ────────────▶ operator
        ▲▲│                             │                      ▲   │
        │└┼── back_to_bot ──────────────┘                      │   │
        │ └────────── to_operator (unasked) ───────────────────┘   │
        └─────────────────── back_to_bot ──────────────────────────┘

    operator ── to_another_operator ──▶ operator (another holder)

    bot | waiting_operator | operator ──── to_closed ────▶ closed (final)

Who makes each move:
- to_waiting: the visitor's side (services): the visitor asks for a person, or the bot's reply
  hands the conversation over. Asking again while a person is awaited or present changes nothing.
- to_operator: the operator's side (handoff): an operator takes the conversation or writes into
  it, from `waiting_operator` or unasked from `bot`. The visitor then learns who answers.
- back_to_bot: the operator's side (handoff): the holder (or any operator, for one still waiting)
  gives it back to the bot, which answers the next message again.
- to_another_operator: the holder (handoff.conversation_transfer) hands it to another operator of
  the same bot; the state stays `operator`, only the holder changes.
- to_closed: either side: the visitor's side (services.conversation_close: `ask`, evaluations),
  the operator's (handoff.conversation_finish). Closed is final: the visitor's next hello opens a
  new conversation.

What must stay true:
- Every move is made on the conversation as read under its row lock (`writes.locked`, `touch`),
  inside the caller's transaction; the caller publishes the change and writes its notes.
- A move that is not allowed changes nothing. A closed conversation refuses every move
  (`ConversationClosed`) but closing, which is a no-op the second time; a conversation another
  operator holds refuses the operators' moves (`AlreadyTaken`, with the holder's name); a move that
  is made already returns False (asking for a person while one is asked for or present, taking
  one's own again, handing back what the bot answers, closing twice).
- `operator` always has the operator it is assigned to (a check constraint), and `waiting_since` is
  set exactly while the conversation waits for one (chat/models.py).
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone
from django.utils.translation import gettext_noop

from chat import frames
from chat.exceptions import AlreadyTaken, ConversationClosed, TransferRefused
from chat.models import Conversation

State = Conversation.State


def can_wait(conversation: Conversation) -> bool:
    """Whether `to_waiting` would move the conversation: only one the bot answers. False while a
    person is already asked for or present; a closed one raises ConversationClosed."""
    if conversation.state == State.CLOSED:
        raise ConversationClosed()
    return conversation.state == State.BOT


def to_waiting(conversation: Conversation, *, form_offered: bool = False) -> bool:
    """bot → waiting_operator: the wait starts now (the inbox sorts and alerts by `waiting_since`),
    and the previous wait's alert and contact-form offer are forgotten (`form_offered`: the caller
    offers the form with this move, so the wait's timeout offers it no more). False, nothing
    changed, when a person is already asked for or present; ConversationClosed when closed."""
    if not can_wait(conversation):
        return False
    conversation.state = State.WAITING_OPERATOR
    conversation.waiting_since = timezone.now()
    conversation.handed_off_at = conversation.handed_off_at or conversation.waiting_since
    conversation.alerted_at = None
    conversation.lead_offered_at = conversation.waiting_since if form_offered else None
    conversation.save(update_fields=["state", "waiting_since", "handed_off_at", "alerted_at", "lead_offered_at",
                                     "updated_at"])
    return True


def refuse_if_held_by_another(conversation: Conversation, operator: Any) -> None:
    """What no operator may do: act on a closed conversation (ConversationClosed, in words the
    operator's socket translates), or on one another operator holds (AlreadyTaken)."""
    if conversation.state == State.CLOSED:
        raise ConversationClosed(gettext_noop("Разговор уже завершён."))  # the socket translates it
    # By id: the row was read under the lock (`writes.locked`), the operator's row after it.
    if conversation.state == State.OPERATOR and conversation.assigned_to_id not in (None, operator.pk):
        raise AlreadyTaken(frames.display_name(conversation.assigned_to))


def to_operator(conversation: Conversation, operator: Any) -> bool:
    """bot | waiting_operator → operator, assigned to `operator`; the wait is over. False, nothing
    changed, when `operator` holds it already; ConversationClosed or AlreadyTaken otherwise."""
    refuse_if_held_by_another(conversation, operator)
    if conversation.state == State.OPERATOR:
        return False
    conversation.state, conversation.assigned_to = State.OPERATOR, operator
    conversation.waiting_since = None
    conversation.handed_off_at = conversation.handed_off_at or timezone.now()
    conversation.save(update_fields=["state", "assigned_to", "waiting_since", "handed_off_at", "updated_at"])
    return True


def back_to_bot(conversation: Conversation, operator: Any) -> bool:
    """waiting_operator | operator → bot, by `operator`: nobody holds it, nobody is awaited. False,
    nothing changed, when the bot answers already; ConversationClosed or AlreadyTaken otherwise."""
    refuse_if_held_by_another(conversation, operator)
    if conversation.state == State.BOT:
        return False
    conversation.state, conversation.assigned_to = State.BOT, None
    conversation.waiting_since = None
    conversation.save(update_fields=["state", "assigned_to", "waiting_since", "updated_at"])
    return True


def to_another_operator(conversation: Conversation, operator: Any, to: Any) -> bool:
    """operator → operator: the holder `operator` hands it to `to` (whom the caller has checked is
    an operator of the bot). False, nothing changed, when `to` is the holder; ConversationClosed,
    AlreadyTaken, or TransferRefused when `operator` does not hold it."""
    refuse_if_held_by_another(conversation, operator)
    if conversation.state != State.OPERATOR:
        raise TransferRefused(gettext_noop("Передать можно только разговор, который вы ведёте: сначала возьмите его."))
    if to.pk == operator.pk:
        return False
    conversation.assigned_to = to
    conversation.save(update_fields=["assigned_to", "updated_at"])
    return True


def to_closed(conversation: Conversation, *, outcome: str = "", by: Any = None) -> bool:
    """bot | waiting_operator | operator → closed, with `outcome` (the first 64 characters; an empty
    one keeps the conversation's) and `by`, the operator who closed it (None: the visitor's side or a
    task). The operator who held it stays on the row. False, nothing changed (neither the outcome
    nor `closed_at`), when it is closed already."""
    if conversation.state == State.CLOSED:
        return False
    conversation.state, conversation.outcome = State.CLOSED, outcome[:64] or conversation.outcome
    conversation.closed_at = timezone.now()
    conversation.waiting_since = None
    conversation.closed_by = by
    conversation.save(update_fields=["state", "outcome", "closed_at", "waiting_since", "closed_by", "updated_at"])
    return True


def catch_up(conversation: Conversation, state: str) -> None:
    """Not a move: a cached copy of a conversation (a caller's instance, a socket's) takes the state
    its row already has, read fresh or heard in an event. Nothing is checked or saved."""
    conversation.state = state
