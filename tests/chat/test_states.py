"""The moves of a conversation's state (chat/states.py) on real rows: every allowed move sets and
saves what it should, and nothing else; a move that is not allowed is refused (an error, or False
for one that is made already) and leaves the row as it was. And no module but states.py assigns a
conversation's state."""

from __future__ import annotations

import ast
import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from answers import replies
from chat import states
from chat.exceptions import AlreadyTaken, ConversationClosed
from chat.models import Conversation
from tests.conftest import REPO
from tests.source import app_files

State = Conversation.State
AN_HOUR_AGO = timezone.now() - dt.timedelta(hours=1)


@pytest.fixture
def operator(django_user_model):
    return django_user_model.objects.create_user(
        username="anna@shop.example", email="anna@shop.example", password="pw-anna-1", first_name="Анна"
    )


@pytest.fixture
def colleague(django_user_model):
    return django_user_model.objects.create_user(username="boris@shop.example", password="pw-boris-1")


def _row(conversation: Conversation) -> dict[str, Any]:
    """Everything the database holds for the conversation."""
    return dict(Conversation.objects.filter(pk=conversation.pk).values().get())


def _fresh(conversation: Conversation) -> Conversation:
    return Conversation.objects.select_related("bot").get(pk=conversation.pk)


def _new(bot, visitor_id: str = "v_1") -> Conversation:
    """A conversation the bot answers, with a previous wait's alert and contact-form offer on it
    and an old `updated_at`, so that each move shows what it resets and touches."""
    conversation = Conversation.objects.create(bot=bot, visitor_id=visitor_id)
    Conversation.objects.filter(pk=conversation.pk).update(
        alerted_at=AN_HOUR_AGO, lead_offered_at=AN_HOUR_AGO, outcome="earlier", updated_at=AN_HOUR_AGO
    )
    return _fresh(conversation)


def _waiting(bot) -> Conversation:
    conversation = _new(bot)
    assert states.to_waiting(conversation)
    return _fresh(conversation)


def _held(bot, operator) -> Conversation:
    conversation = _waiting(bot)
    assert states.to_operator(conversation, operator)
    return _fresh(conversation)


def _closed(bot) -> Conversation:
    conversation = _new(bot)
    assert states.to_closed(conversation, outcome="done")
    return _fresh(conversation)


def _just_now(moment: dt.datetime | None) -> bool:
    return moment is not None and timezone.now() - dt.timedelta(minutes=1) < moment <= timezone.now()


# The allowed moves.


def test_asking_for_a_person_starts_the_wait_and_forgets_the_previous_one(db, bot):
    conversation = _new(bot)
    conversation.visitor_name = "не сохраняется"  # only the move's own fields are saved
    before = _row(conversation)
    assert states.can_wait(conversation)
    assert states.to_waiting(conversation) is True
    after = _row(conversation)
    assert after["state"] == State.WAITING_OPERATOR and _just_now(after["waiting_since"])
    assert after["alerted_at"] is None and after["lead_offered_at"] is None and after["assigned_to_id"] is None
    assert _just_now(after["updated_at"])
    changed = {name for name in after if after[name] != before[name]}
    # The first move towards a person is remembered for the overview's live count.
    assert changed == {"state", "waiting_since", "handed_off_at", "alerted_at", "lead_offered_at", "updated_at"}
    assert after["handed_off_at"] == after["waiting_since"]
    assert conversation.state == State.WAITING_OPERATOR  # the caller's instance moved with its row


def test_an_operator_takes_a_waiting_conversation(db, bot, operator):
    conversation = _waiting(bot)
    before = _row(conversation)
    assert states.to_operator(conversation, operator) is True
    after = _row(conversation)
    assert after["state"] == State.OPERATOR and after["assigned_to_id"] == operator.pk
    assert after["waiting_since"] is None
    changed = {name for name in after if after[name] != before[name]}
    assert changed == {"state", "assigned_to_id", "waiting_since", "updated_at"}  # handed off when it started waiting
    assert conversation.assigned_to == operator


def test_an_operator_steps_in_unasked(db, bot, operator):
    conversation = _new(bot)
    assert states.to_operator(conversation, operator) is True
    after = _row(conversation)
    assert after["state"] == State.OPERATOR and after["assigned_to_id"] == operator.pk
    assert after["waiting_since"] is None and _just_now(after["handed_off_at"])


def test_the_holder_hands_the_conversation_back_to_the_bot(db, bot, operator):
    conversation = _held(bot, operator)
    before = _row(conversation)
    assert states.back_to_bot(conversation, operator) is True
    after = _row(conversation)
    assert after["state"] == State.BOT and after["assigned_to_id"] is None and after["waiting_since"] is None
    changed = {name for name in after if after[name] != before[name]}
    assert changed == {"state", "assigned_to_id", "updated_at"}
    assert conversation.bot_answers


def test_any_operator_hands_a_waiting_conversation_back_to_the_bot(db, bot, colleague):
    conversation = _waiting(bot)
    before = _row(conversation)
    assert states.back_to_bot(conversation, colleague) is True
    after = _row(conversation)
    assert after["state"] == State.BOT and after["assigned_to_id"] is None and after["waiting_since"] is None
    changed = {name for name in after if after[name] != before[name]}
    assert changed == {"state", "waiting_since", "updated_at"}


@pytest.mark.parametrize("start", [State.BOT, State.WAITING_OPERATOR, State.OPERATOR])
def test_every_open_state_closes_with_its_outcome(db, bot, operator, start):
    conversation = {State.BOT: _new, State.WAITING_OPERATOR: _waiting}.get(start, lambda b: _held(b, operator))(bot)
    assert conversation.state == start
    before = _row(conversation)
    assert states.to_closed(conversation, outcome="x" * 100) is True
    after = _row(conversation)
    assert after["state"] == State.CLOSED and after["outcome"] == "x" * 64 and _just_now(after["closed_at"])
    assert after["waiting_since"] is None
    assert after["assigned_to_id"] == before["assigned_to_id"]  # who held it stays on the row
    changed = {name for name in after if after[name] != before[name]}
    waited = {"waiting_since"} if start == State.WAITING_OPERATOR else set()
    assert changed == {"state", "outcome", "closed_at", "updated_at", *waited}


def test_closing_without_an_outcome_keeps_the_one_it_has(db, bot):
    conversation = _new(bot)
    assert states.to_closed(conversation) is True
    assert _row(conversation)["outcome"] == "earlier"


def test_catching_up_copies_a_state_onto_a_cached_copy_and_saves_nothing(db, bot):
    conversation = _new(bot)
    before = _row(conversation)
    states.catch_up(conversation, State.WAITING_OPERATOR)
    assert conversation.state == State.WAITING_OPERATOR and not conversation.bot_answers
    assert _row(conversation) == before


# Moves made already: False, and the row as it was.


@pytest.mark.parametrize("held", [False, True], ids=["waiting", "with an operator"])
def test_asking_again_while_a_person_is_awaited_or_present_changes_nothing(db, bot, operator, held):
    conversation = _held(bot, operator) if held else _waiting(bot)
    before = _row(conversation)
    assert not states.can_wait(conversation)
    assert states.to_waiting(conversation) is False
    assert _row(conversation) == before  # the wait is not restarted: the inbox's order stays


def test_taking_ones_own_conversation_again_changes_nothing(db, bot, operator):
    conversation = _held(bot, operator)
    before = _row(conversation)
    assert states.to_operator(conversation, operator) is False
    assert _row(conversation) == before


def test_handing_back_what_the_bot_answers_changes_nothing(db, bot, operator):
    conversation = _new(bot)
    before = _row(conversation)
    assert states.back_to_bot(conversation, operator) is False
    assert _row(conversation) == before


def test_closing_twice_keeps_the_first_close(db, bot):
    conversation = _closed(bot)
    before = _row(conversation)
    assert states.to_closed(conversation, outcome="again") is False
    assert _row(conversation) == before and conversation.outcome == "done"


# Refused moves: the same errors as the services raised before, and the row as it was.


def test_a_closed_conversation_cannot_be_asked_for_a_person(db, bot):
    conversation = _closed(bot)
    before = _row(conversation)
    with pytest.raises(ConversationClosed) as caught:
        states.to_waiting(conversation)
    assert caught.value.code == "closed" and caught.value.message == replies.TEXTS["ru"]["error_closed"]
    with pytest.raises(ConversationClosed):
        states.can_wait(conversation)
    assert _row(conversation) == before and conversation.state == State.CLOSED


@pytest.mark.parametrize("move", [states.to_operator, states.back_to_bot, states.refuse_if_held_by_another])
def test_no_operator_moves_a_closed_conversation(db, bot, operator, move):
    conversation = _closed(bot)
    before = _row(conversation)
    with pytest.raises(ConversationClosed) as caught:
        move(conversation, operator)
    assert caught.value.code == "closed" and caught.value.message == "Разговор уже завершён."
    assert _row(conversation) == before and conversation.state == State.CLOSED


@pytest.mark.parametrize("move", [states.to_operator, states.back_to_bot, states.refuse_if_held_by_another])
def test_a_conversation_another_operator_holds_is_refused_with_the_holders_name(db, bot, operator, colleague, move):
    conversation = _held(bot, operator)
    before = _row(conversation)
    with pytest.raises(AlreadyTaken) as caught:
        move(conversation, colleague)
    assert caught.value.code == "already_taken" and caught.value.holder == "Анна"
    assert _row(conversation) == before and conversation.assigned_to_id == operator.pk


# No module but chat/states.py assigns a conversation's state.

THE_MODULE = REPO / "chat" / "states.py"
# Only a conversation has a `state` field, so any of these writes of one is a conversation's.
WRITES = {"create", "update", "get_or_create", "update_or_create", "bulk_update"}


def _names_state(node: ast.AST) -> bool:
    """A literal "state" in a list, tuple, set or dict key (update_fields, fields, defaults)."""
    if isinstance(node, ast.Dict):
        return any(isinstance(key, ast.Constant) and key.value == "state" for key in node.keys)
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return any(isinstance(item, ast.Constant) and item.value == "state" for item in node.elts)
    return False


def _targets(node: ast.AST) -> Iterator[ast.AST]:
    if isinstance(node, ast.Tuple | ast.List):
        for item in node.elts:
            yield from _targets(item)
    elif isinstance(node, ast.Starred):
        yield from _targets(node.value)
    else:
        yield node


def state_writes(source: str) -> Iterator[tuple[int, str]]:
    """(line, what) for every place in `source` that sets a state: `x.state = …` (alone or in a
    tuple), `setattr(x, "state", …)`, `state=` passed to a write (`create`, `update`, …) or to
    `Conversation(…)`, and "state" among the fields a write saves (`save(update_fields=…)`,
    `bulk_update`, `defaults=`)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in (t for whole in targets for t in _targets(whole)):
                if isinstance(target, ast.Attribute) and target.attr == "state":
                    yield node.lineno, f"assigns {ast.unparse(target)}"
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
        if name == "setattr" and len(node.args) > 1 and isinstance(node.args[1], ast.Constant) \
                and node.args[1].value == "state":
            yield node.lineno, "setattr(…, 'state', …)"
        if name in WRITES or name == "Conversation":
            if any(keyword.arg == "state" for keyword in node.keywords):
                yield node.lineno, f"passes state= to {name}()"
        if name in WRITES or name == "save":
            values = [*node.args[1:], *(keyword.value for keyword in node.keywords)]
            if any(_names_state(value) for value in values):
                yield node.lineno, f"writes the field 'state' with {name}()"


def _app_modules() -> list[Path]:
    return [path for path in app_files() if path != THE_MODULE]


def test_only_chat_states_sets_a_conversations_state():
    modules = _app_modules()
    assert REPO / "chat" / "services.py" in modules and REPO / "chat" / "handoff.py" in modules
    offenders = [
        f"{path.relative_to(REPO)}:{line}: {what}"
        for path in modules for line, what in state_writes(path.read_text(encoding="utf-8"))
    ]
    assert not offenders, (
        "a conversation's state changes only in chat/states.py: call its move (to_waiting, to_operator, "
        "back_to_bot, to_closed), or states.catch_up for a cached copy taking the row's state:\n"
        + "\n".join(offenders)
    )


def test_the_scan_finds_every_way_of_setting_a_state():
    assert len(list(state_writes(THE_MODULE.read_text(encoding="utf-8")))) >= 8  # the moves themselves
    source = """
conversation.state = "closed"
conversation.state, conversation.outcome = State.CLOSED, "done"
setattr(conversation, "state", "bot")
Conversation.objects.filter(pk=1).update(state="closed")
Conversation.objects.create(bot=bot, visitor_id="v", state="operator")
Conversation(bot=bot, state="closed")
Conversation.objects.update_or_create(pk=1, defaults={"state": "bot"})
conversation.save(update_fields=["state", "updated_at"])
Conversation.objects.bulk_update(rows, ["state"])
"""
    assert sorted(line for line, _what in state_writes(source)) == list(range(2, 11))
    reads = """
if conversation.state == State.CLOSED: pass
Conversation.objects.filter(state="closed").exclude(state="bot")
Reply(text="", state=STATE_WAITING_OPERATOR)
ConversationFacts(state=state)
conversation.save(update_fields=["unread", "updated_at"])
state = conversation.state
"""
    assert list(state_writes(reads)) == []
