"""The members page: owners and operators, invitations by e-mail, role changes and removals, the
last owner kept, every action in the bot's history on the page, another bot's ids a 404."""

from __future__ import annotations

import pytest

from bots.models import Invitation, Membership
from bots.services import membership_add

pytestmark = pytest.mark.django_db


def test_the_owner_invites_an_operator_and_the_letter_goes(owner_client, bot, smtp_server,
                                                           django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):  # the letter goes after commit
        response = owner_client.post("/b/demo/members/", {"action": "invite", "email": "op@shop.example",
                                                          "role": "operator"}, follow=True)
    page = response.content.decode()
    assert "Приглашение отправлено на op@shop.example" in page
    invitation = Invitation.objects.get(bot=bot)
    assert invitation.role == "operator" and invitation.pending
    (mail,) = smtp_server.wait_for(1)
    assert mail["X-Envelope-To"] == "op@shop.example"
    assert "/accounts/invite/" in mail.get_content()
    assert "Приглашение: op@shop.example — оператор" in page  # the history, on the page


def test_a_bad_email_is_explained(owner_client, bot):
    page = owner_client.post("/b/demo/members/", {"action": "invite", "email": "not-an-address", "role": "operator"},
                             follow=True).content.decode()
    assert "«not-an-address» — не адрес e-mail." in page
    assert not Invitation.objects.exists()


def test_role_change_revoke_and_removal_are_in_the_history(owner_client, bot, smtp_server):
    operator = membership_add(bot=bot, email="op@shop.example", role="operator").membership
    owner_client.post("/b/demo/members/", {"action": "role", "membership": operator.pk, "role": "owner"})
    assert Membership.objects.get(pk=operator.pk).role == "owner"
    owner_client.post("/b/demo/members/", {"action": "invite", "email": "new@shop.example", "role": "operator"})
    invitation = Invitation.objects.get(bot=bot)
    owner_client.post("/b/demo/members/", {"action": "revoke", "invitation": invitation.pk})
    assert not Invitation.objects.get(pk=invitation.pk).pending
    owner_client.post("/b/demo/members/", {"action": "remove", "membership": operator.pk})
    assert not Membership.objects.filter(pk=operator.pk).exists()
    page = owner_client.get("/b/demo/members/").content.decode()
    for line in ("op@shop.example: оператор → владелец", "Приглашение отозвано: new@shop.example",
                 "Удалён участник: op@shop.example (владелец)"):
        assert line in page
    assert "Неотвеченных приглашений нет." in page


def test_the_last_owner_can_be_neither_removed_nor_demoted(owner_client, bot, owner):
    mine = Membership.objects.get(bot=bot, user=owner)
    page = owner_client.post("/b/demo/members/", {"action": "remove", "membership": mine.pk},
                             follow=True).content.decode()
    assert "Это единственный владелец бота: его нельзя удалить." in page
    page = owner_client.post("/b/demo/members/", {"action": "role", "membership": mine.pk, "role": "operator"},
                             follow=True).content.decode()
    assert "Это единственный владелец бота: сначала назначьте другого владельца." in page
    assert Membership.objects.get(pk=mine.pk).role == "owner"


def test_another_bots_member_and_invitation_are_404(owner_client, bot, other_bot, other_owner):
    theirs = Membership.objects.get(bot=other_bot, user=other_owner)
    invitation = Invitation.objects.create(bot=other_bot, email="x@other.example", role="operator")
    assert owner_client.post("/b/demo/members/", {"action": "remove", "membership": theirs.pk}).status_code == 404
    assert owner_client.post("/b/demo/members/", {"action": "role", "membership": theirs.pk,
                                                  "role": "operator"}).status_code == 404
    assert owner_client.post("/b/demo/members/", {"action": "revoke", "invitation": invitation.pk}).status_code == 404
    assert owner_client.get("/b/other/members/").status_code == 404
    assert Membership.objects.get(pk=theirs.pk).role == "owner" and Invitation.objects.get(pk=invitation.pk).pending


def test_an_operator_of_the_bot_cannot_open_the_page(client, bot):
    operator = membership_add(bot=bot, email="op@shop.example", role="operator").membership
    client.force_login(operator.user)
    assert client.get("/b/demo/members/").status_code == 404
