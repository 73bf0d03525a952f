"""Roles that hold in the admin: an operator reads their bot's conversations and changes nothing;
an owner changes only their own bot; staff rights follow the memberships."""

from __future__ import annotations

import pytest
from django.urls import reverse

from bots.models import Bot, Membership
from bots.services import membership_add, membership_remove
from chat import services as chat_services
from chat.models import Conversation
from knowledge.models import Entry
from tests.bots.admin_forms import bot_form_data

pytestmark = pytest.mark.django_db



@pytest.fixture(autouse=True)
def fast_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def operator(bot):
    result = membership_add(bot=bot, email="operator@shop.example", role="operator", password="pw-operator-1")
    return result.membership.user


@pytest.fixture
def staff_operator(operator):
    """An operator someone made staff by hand: the roles must hold all the same."""
    operator.is_staff = True
    operator.save(update_fields=["is_staff"])
    return operator


def test_an_operator_account_is_not_admin_staff_and_the_admin_sends_it_to_log_in(client, operator, bot):
    assert not operator.is_staff
    client.force_login(operator)
    response = client.get(reverse("admin:bots_bot_change", args=[bot.pk]))
    assert response.status_code == 302 and response["Location"].startswith(reverse("admin:login"))


def test_an_operator_cannot_open_or_save_the_bots_settings(client, staff_operator, bot):
    client.force_login(staff_operator)
    assert client.get(reverse("admin:bots_bot_change", args=[bot.pk])).status_code == 403
    response = client.post(reverse("admin:bots_bot_change", args=[bot.pk]), bot_form_data(bot, name="Новое имя"))
    assert response.status_code in (403, 404)
    bot.refresh_from_db()
    assert bot.name == "Демо-магазин"


def test_an_operator_cannot_delete_or_switch_off_entries(client, staff_operator, bot):
    entry = Entry.objects.create(bot=bot, kind="qa", title="Возврат", text="14 дней.")
    client.force_login(staff_operator)
    response = client.post(reverse("admin:knowledge_entry_delete", args=[entry.pk]), {"post": "yes"})
    assert response.status_code in (403, 404)
    response = client.post(reverse("admin:knowledge_entry_changelist"),
                           {"action": "deactivate", "_selected_action": [entry.pk]})
    assert response.status_code == 403
    entry.refresh_from_db()
    assert entry.active


def test_an_operator_reads_their_bots_conversations_and_changes_nothing(client, staff_operator, bot, other_bot):
    mine = chat_services.conversation_open(bot=bot, visitor_id="v-mine")
    theirs = chat_services.conversation_open(bot=other_bot, visitor_id="v-theirs")
    client.force_login(staff_operator)
    listing = client.get(reverse("admin:chat_conversation_changelist")).content.decode()
    assert reverse("admin:chat_conversation_change", args=[mine.pk]) in listing
    assert reverse("admin:chat_conversation_change", args=[theirs.pk]) not in listing
    page = client.get(reverse("admin:chat_conversation_change", args=[mine.pk])).content.decode()
    assert f"#{mine.pk} · " in page and 'name="_save"' not in page
    change = reverse("admin:chat_conversation_change", args=[mine.pk])
    assert client.post(change, {"state": "closed"}).status_code == 403
    assert client.get(reverse("admin:chat_conversation_change", args=[theirs.pk])).status_code == 404
    index = client.get(reverse("admin:index")).content.decode()
    assert reverse("admin:chat_conversation_changelist") in index
    assert reverse("admin:knowledge_entry_changelist") not in index
    assert reverse("admin:bots_bot_changelist") not in index


def test_owning_one_bot_and_operating_another(client, owner, bot, other_bot):
    membership_add(bot=other_bot, email=owner.email, role="operator")
    theirs = chat_services.conversation_open(bot=other_bot, visitor_id="v-operated")
    client.force_login(owner)

    response = client.post(reverse("admin:bots_bot_change", args=[bot.pk]), bot_form_data(bot, name="Новое имя"))
    assert response.status_code == 302, response.content.decode()[-3000:]
    bot.refresh_from_db()
    assert bot.name == "Новое имя"

    assert client.get(reverse("admin:bots_bot_change", args=[other_bot.pk])).status_code == 404
    bots = client.get(reverse("admin:bots_bot_changelist")).content.decode()
    assert "Новое имя" in bots and other_bot.name not in bots
    page = client.get(reverse("admin:chat_conversation_change", args=[theirs.pk])).content.decode()
    assert f"#{theirs.pk} · " in page and 'name="_save"' not in page


def test_another_owners_rows_cannot_be_changed_deleted_or_acted_on(client, owner, bot, other_bot):
    theirs = Entry.objects.create(bot=other_bot, kind="qa", title="Чужое", text="Чужой ответ.")
    missing = theirs.pk + 1000
    client.force_login(owner)
    form = {"bot": bot.pk, "kind": "qa", "title": "x", "heading_path": "", "text": "y", "url": "", "weight": "0.5"}
    for view, data in (("change", form), ("delete", {"post": "yes"})):
        foreign = client.post(reverse(f"admin:knowledge_entry_{view}", args=[theirs.pk]), data)
        absent = client.post(reverse(f"admin:knowledge_entry_{view}", args=[missing]), data)
        assert foreign.status_code == absent.status_code == 404
    client.post(reverse("admin:knowledge_entry_changelist"), {"action": "deactivate", "_selected_action": [theirs.pk]})
    theirs.refresh_from_db()
    assert (theirs.title, theirs.active) == ("Чужое", True)


def test_staff_rights_follow_the_roles(bot, other_bot):
    result = membership_add(bot=bot, email="person@shop.example", role="operator")
    person = result.membership.user
    assert not person.is_staff
    membership_add(bot=other_bot, email="person@shop.example", role="owner")
    person.refresh_from_db()
    assert person.is_staff
    membership_remove(membership=Membership.objects.get(bot=other_bot, user=person))
    person.refresh_from_db()
    assert not person.is_staff


def test_a_superuser_changing_roles_inline_keeps_staff_in_step(client, django_user_model, bot, operator):
    root = django_user_model.objects.create_superuser("root", "root@example.com", "pw-root-1")
    membership = Membership.objects.get(bot=bot, user=operator)
    owner_membership = bot.memberships.get(role="owner")
    client.force_login(root)
    data = {
        **bot_form_data(bot, inlines=("opening_hours", "holidays")),
        "memberships-TOTAL_FORMS": "2", "memberships-INITIAL_FORMS": "2",
        "memberships-MIN_NUM_FORMS": "0", "memberships-MAX_NUM_FORMS": "1000",
        "memberships-0-id": owner_membership.pk, "memberships-0-bot": bot.pk,
        "memberships-0-user": owner_membership.user_id, "memberships-0-role": "owner",
        "memberships-1-id": membership.pk, "memberships-1-bot": bot.pk,
        "memberships-1-user": operator.pk, "memberships-1-role": "owner",
    }
    response = client.post(reverse("admin:bots_bot_change", args=[bot.pk]), data)
    assert response.status_code == 302, response.content.decode()[:3000]
    operator.refresh_from_db()
    assert operator.is_staff
    assert Bot.objects.get(pk=bot.pk).memberships.get(user=operator).role == "owner"


def test_erasing_visitors_is_for_owners_and_only_of_their_own_bots(client, owner, staff_operator, bot, other_bot):
    mine = chat_services.conversation_open(bot=bot, visitor_id="v-mine")
    operated = chat_services.conversation_open(bot=other_bot, visitor_id="v-operated")
    changelist = reverse("admin:chat_conversation_changelist")

    client.force_login(staff_operator)
    assert "erase_visitors" not in client.get(changelist).content.decode()
    client.post(changelist, {"action": "erase_visitors", "_selected_action": [mine.pk]})
    assert Conversation.objects.filter(pk=mine.pk).exists()

    membership_add(bot=other_bot, email=owner.email, role="operator")
    client.force_login(owner)
    client.post(changelist, {"action": "erase_visitors", "_selected_action": [mine.pk, operated.pk]})
    assert not Conversation.objects.filter(pk=mine.pk).exists()
    assert Conversation.objects.filter(pk=operated.pk).exists()
