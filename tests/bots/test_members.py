"""Members: an owner invites by e-mail (a signed link that expires and works once), changes roles and
removes people; the last owner stays; every change is in the bot's history."""

from __future__ import annotations

import re

import pytest
from django.contrib.admin.models import LogEntry

from bots.members import MembersError, invitation_create, membership_remove_by, membership_role_set
from bots.models import Invitation, Membership

pytestmark = pytest.mark.django_db(transaction=True)  # the e-mail goes after commit

LINK = re.compile(r"https?://\S+/accounts/invite/[^/\s]+/")
MEMBERS = "/admin/bots/bot/{}/members/"


def _history(bot) -> list[str]:
    return list(LogEntry.objects.filter(object_id=str(bot.pk), content_type__model="bot")
                .order_by("pk").values_list("change_message", flat=True))


def _path(link: str) -> str:
    return "/" + link.split("/", 3)[3]


def test_an_invited_operator_sets_a_password_and_lands_in_the_inbox(client, owner, bot, smtp_server):
    client.force_login(owner)
    response = client.post(MEMBERS.format(bot.pk), {"action": "invite", "email": "Anna@Shop.example",
                                                   "role": "operator"}, follow=True)
    assert "Приглашение отправлено на Anna@shop.example" in response.content.decode()  # the domain lower-cased
    [mail] = smtp_server.wait_for(1)
    assert mail["To"] == "Anna@shop.example" or mail["X-Envelope-To"].lower() == "anna@shop.example"
    found = LINK.search(mail.get_content())
    assert found is not None
    link = found.group(0)
    client.logout()
    page = client.get(_path(link)).content.decode()
    assert "Демо-магазин" in page and "оператор" in page
    short = client.post(_path(link), {"password1": "123", "password2": "123"})
    assert short.status_code == 400 and not Membership.objects.filter(role="operator").exists()
    done = client.post(_path(link), {"password1": "pw-anna-123!", "password2": "pw-anna-123!"})
    assert done.status_code == 302
    membership = Membership.objects.get(bot=bot, role="operator")
    assert membership.user.username == "Anna@shop.example" and not membership.user.is_staff
    assert client.get("/").url == "/inbox/"
    again = client.get(_path(link))
    assert again.status_code == 410 and "уже вошли" in again.content.decode()
    assert _history(bot) == ["Приглашение: Anna@shop.example — оператор",
                             "Anna@shop.example принял приглашение: оператор"]


def test_a_link_for_an_existing_account_needs_that_account_signed_in(client, owner, other_owner, bot, smtp_server):
    _invitation, link = invitation_create(bot=bot, email=other_owner.username, role="owner", invited_by=owner)
    page = client.get(_path(link))
    assert "войдите" in page.content.decode().lower()
    refused = client.post(_path(link), {"password1": "hijack-pass-1", "password2": "hijack-pass-1"})
    assert refused.status_code == 400
    other_owner.refresh_from_db()
    assert other_owner.check_password("pw-other-1")  # a link never sets an existing account's password
    client.force_login(owner)
    wrong = client.post(_path(link))
    assert wrong.status_code == 400 and "вы вошли как" in wrong.content.decode()
    client.force_login(other_owner)
    assert client.post(_path(link)).status_code == 302
    assert Membership.objects.get(bot=bot, user=other_owner).role == "owner"


def test_expired_tampered_and_revoked_links_are_refused_and_change_nothing(client, owner, bot, settings):
    invitation, link = invitation_create(bot=bot, email="x@shop.example", role="operator", invited_by=owner)
    tampered = link[:-3] + ("A" if link[-3] != "A" else "B") + link[-2:]
    assert "повреждена" in client.get(_path(tampered)).content.decode()
    settings.INVITE_MAX_AGE_DAYS = -1
    expired = client.post(_path(link), {"password1": "pw-x-12345!", "password2": "pw-x-12345!"})
    assert expired.status_code == 410 and "Срок приглашения истёк" in expired.content.decode()
    settings.INVITE_MAX_AGE_DAYS = 7
    _newer, newer_link = invitation_create(bot=bot, email="x@shop.example", role="owner", invited_by=owner)
    invitation.refresh_from_db()
    assert invitation.revoked_at is not None  # only the newest link works
    assert "отозвано" in client.get(_path(link)).content.decode()
    assert not Membership.objects.filter(user__username="x@shop.example").exists()
    assert client.get(_path(newer_link)).status_code == 200


def test_roles_change_and_members_go_but_the_last_owner_stays(owner, bot):
    from bots.services import membership_add

    operator = membership_add(bot=bot, email="op@shop.example", role="operator", password="pw-op-12345").membership
    own = Membership.objects.get(bot=bot, user=owner)
    with pytest.raises(MembersError, match="единственный владелец"):
        membership_role_set(membership=own, role="operator", actor=owner)
    with pytest.raises(MembersError, match="единственный владелец"):
        membership_remove_by(membership=own, actor=owner)
    promoted = membership_role_set(membership=operator, role="owner", actor=owner)
    assert promoted.role == "owner" and promoted.user.is_staff  # staff follows the role
    membership_role_set(membership=own, role="operator", actor=owner)
    membership_remove_by(membership=Membership.objects.get(bot=bot, user=owner), actor=promoted.user)
    owner.refresh_from_db()
    assert not owner.is_staff and not Membership.objects.filter(user=owner).exists()
    assert _history(bot) == ["op@shop.example: оператор → владелец", "owner@shop.example: владелец → оператор",
                             "Удалён участник: owner@shop.example (оператор)"]


def test_the_members_page_is_the_owners_and_another_bots_is_a_404(client, owner, other_owner, bot, other_bot):
    client.force_login(owner)
    page = client.get(MEMBERS.format(bot.pk))
    assert page.status_code == 200 and "owner@shop.example" in page.content.decode()
    assert client.get(MEMBERS.format(other_bot.pk)).status_code == 404
    assert client.get(MEMBERS.format(10**9)).status_code == 404
    theirs = Membership.objects.get(bot=other_bot)
    client.post(MEMBERS.format(bot.pk), {"action": "remove", "membership": str(theirs.pk)})
    assert Membership.objects.filter(pk=theirs.pk).exists()
    client.post(MEMBERS.format(other_bot.pk), {"action": "invite", "email": "a@b.example", "role": "owner"})
    assert not Invitation.objects.exists()


@pytest.mark.parametrize(("email", "role", "words"), [
    ("not-an-email", "operator", "не адрес"), ("a@b.example", "admin", "Неизвестная роль"),
    ("owner@shop.example", "owner", "уже владелец"),
])
def test_bad_invitations_say_why_and_send_nothing(client, owner, bot, smtp_server, email, role, words):
    client.force_login(owner)
    response = client.post(MEMBERS.format(bot.pk), {"action": "invite", "email": email, "role": role}, follow=True)
    assert words in response.content.decode()
    assert not Invitation.objects.exists() and smtp_server.messages == []
