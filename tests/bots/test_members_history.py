"""The bot's history (invitations, roles, removals) reads in the reader's language: each line is
written in Russian whoever acts, and shown translated on the admin's history page of the bot and on
the owner's members page; lines written before in an actor's English read right too."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.contenttypes.models import ContentType
from django.urls import reverse
from django.utils import translation

from bots.members import (
    NOTE_ACCEPTED,
    NOTE_INVITED,
    NOTE_REMOVED,
    NOTE_REVOKED,
    NOTE_ROLE_CHANGED,
    history_note,
    invitation_create,
    invitation_revoke,
    membership_role_set,
    note_shown,
    note_written,
)
from bots.models import Bot, Membership

pytestmark = pytest.mark.django_db

CYRILLIC = re.compile("[а-яё]", re.IGNORECASE)

# (stored line, Russian shown, English shown): lines written in Russian, and in an actor's English
# as the code wrote them before every line was written in Russian.
LINES = [
    ("Приглашение: anna@shop.example — оператор", "Приглашение: anna@shop.example — оператор",
     "Invitation: anna@shop.example — operator"),
    ("anna@shop.example принял приглашение: оператор", "anna@shop.example принял приглашение: оператор",
     "anna@shop.example accepted the invitation: operator"),
    ("Приглашение отозвано: anna@shop.example", "Приглашение отозвано: anna@shop.example",
     "Invitation revoked: anna@shop.example"),
    ("op@shop.example: оператор → владелец", "op@shop.example: оператор → владелец",
     "op@shop.example: operator → owner"),
    ("Удалён участник: op@shop.example (владелец)", "Удалён участник: op@shop.example (владелец)",
     "Member removed: op@shop.example (owner)"),
    ("Invitation: anna@shop.example — owner", "Приглашение: anna@shop.example — владелец",
     "Invitation: anna@shop.example — owner"),
    ("op@shop.example: owner → operator", "op@shop.example: владелец → оператор", "op@shop.example: owner → operator"),
    ("Member removed: op@shop.example (operator)", "Удалён участник: op@shop.example (оператор)",
     "Member removed: op@shop.example (operator)"),
]


@pytest.mark.parametrize(("stored", "russian", "english"), LINES, ids=[line[0] for line in LINES])
def test_every_line_reads_in_the_readers_language(stored, russian, english):
    with translation.override("ru"):
        assert note_shown(stored) == russian
    with translation.override("en"):
        assert note_shown(stored) == english


@pytest.mark.parametrize("stored", [
    "Изменены настройки виджета вручную",  # a line of no known form
    "Приглашение: anna@shop.example — стажёр",  # a role that does not exist
    '[{"changed": {"fields": ["name"]}}]',  # the admin's own line: Django translates it itself
])
def test_any_other_line_is_shown_as_it_is(stored):
    for lang in ("ru", "en"):
        with translation.override(lang):
            assert note_shown(stored) == stored


def test_a_line_is_written_in_russian_whoever_acts():
    with translation.override("en"):
        assert note_written(NOTE_INVITED, email="a@shop.example", role="owner") == (
            "Приглашение: a@shop.example — владелец")
        assert note_written(NOTE_ROLE_CHANGED, email="a@shop.example", before="owner", after="operator") == (
            "a@shop.example: владелец → оператор")
        assert note_written(NOTE_ACCEPTED, email="a@shop.example", role="operator").endswith("приглашение: оператор")
        assert note_written(NOTE_REVOKED, email="a@shop.example") == "Приглашение отозвано: a@shop.example"
        assert note_written(NOTE_REMOVED, email="a@shop.example", role="operator") == (
            "Удалён участник: a@shop.example (оператор)")
    with pytest.raises(ValueError):
        note_written("Что-то случилось: %(email)s", email="a@shop.example")


class _Cells(HTMLParser):
    """The last cell (the action's message) of each row of the table in Django's `#change-history`."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[str] = []
        self._table = self._cell = False
        self._row: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if ("id", "change-history") in attrs:  # Django's history page: the div around the table
            self._table = True
        elif self._table and tag == "tr":
            self._row = []
        elif self._table and tag == "td":
            self._cell = True
            self._row.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "td":
            self._cell = False
        elif tag == "tr" and self._table and self._row:
            self.messages.append(" ".join(self._row[-1].split()))
        elif tag == "table":
            self._table = False

    def handle_data(self, data: str) -> None:
        if self._cell:
            self._row[-1] += data


def messages_on_the_page(html: str) -> list[str]:
    parser = _Cells()
    parser.feed(html)
    return parser.messages


@pytest.fixture
def history(bot, owner, django_user_model, django_capture_on_commit_callbacks):
    """An invitation by an owner in English, a role change in Russian, a revoked invitation, and a
    line written in English by the code of before."""
    operator = django_user_model.objects.create_user(username="op@shop.example", email="op@shop.example")
    Membership.objects.create(bot=bot, user=operator, role=Membership.Role.OPERATOR)
    with translation.override("en"), django_capture_on_commit_callbacks(execute=False):
        invitation, _link = invitation_create(bot=bot, email="anna@shop.example", role="operator", invited_by=owner)
    membership_role_set(membership=Membership.objects.get(user=operator), role="owner", actor=owner)
    invitation_revoke(invitation=invitation, actor=owner)
    history_note(bot=bot, actor=owner, message="Invitation: boris@shop.example — owner")
    LogEntry.objects.create(user_id=owner.pk, content_type=ContentType.objects.get_for_model(Bot),
                            object_id=str(bot.pk), object_repr=str(bot), action_flag=CHANGE,
                            change_message='[{"changed": {"fields": ["name"]}}]')
    return bot


def test_the_bots_history_page_reads_in_russian(client, owner, history):
    client.force_login(owner)
    page = client.get(reverse("admin:bots_bot_history", args=[history.pk]), HTTP_ACCEPT_LANGUAGE="ru")
    assert page.status_code == 200
    assert messages_on_the_page(page.content.decode()) == [
        "Приглашение: anna@shop.example — оператор",
        "op@shop.example: оператор → владелец",
        "Приглашение отозвано: anna@shop.example",
        "Приглашение: boris@shop.example — владелец",
        "Изменено имя.",  # the admin's own line, as Django shows it
    ]


def test_the_bots_history_page_has_no_russian_in_english(client, owner, history):
    client.force_login(owner)
    page = client.get(reverse("admin:bots_bot_history", args=[history.pk]), HTTP_ACCEPT_LANGUAGE="en")
    assert page.status_code == 200 and page.headers["Content-Language"] == "en"
    assert messages_on_the_page(page.content.decode()) == [
        "Invitation: anna@shop.example — operator",
        "op@shop.example: operator → owner",
        "Invitation revoked: anna@shop.example",
        "Invitation: boris@shop.example — owner",
        "Changed name.",
    ]
    # Shown translated, kept as written.
    first = LogEntry.objects.filter(object_id=str(history.pk)).order_by("pk").first()
    assert first is not None and first.change_message == "Приглашение: anna@shop.example — оператор"


def test_the_owners_members_page_reads_the_history_in_its_language(history):
    """`bot_history` feeds the owner's members page (insights): its lines come in the active language."""
    from bots.members import bot_history

    with translation.override("en"):
        english = [line.get_change_message() for line in bot_history(bot=history)]
    with translation.override("ru"):
        russian = [line.get_change_message() for line in bot_history(bot=history)]
    assert english[1:] == ["Invitation: boris@shop.example — owner", "Invitation revoked: anna@shop.example",
                           "op@shop.example: operator → owner", "Invitation: anna@shop.example — operator"]
    assert russian[-1] == "Приглашение: anna@shop.example — оператор"
    assert not [line for line in english if CYRILLIC.search(line)]
