"""What an owner finds in the admin: the index and the sidebar list what an owner works with, the
installation's journals are a superuser's (and refused to an owner who types their address), and
every admin page leads back to the owner's pages. tests/test_admin_walk.py walks every URL."""

from __future__ import annotations

import pytest
from django.contrib import admin

from llm.journal import run_event_record
from llm.models import RunEvent, Usage

pytestmark = pytest.mark.django_db

OWNER_MODELS = {
    "bots.Bot", "bots.ApiKey", "llm.BotLLMSettings",
    "knowledge.Entry", "knowledge.Source", "knowledge.Page", "knowledge.CrawlRun",
    "commerce.CatalogImport", "commerce.CatalogOffer", "commerce.OrderEndpoint", "commerce.OrderLookup",
    "chat.Conversation", "chat.Lead", "chat.WebhookDelivery",
    "review.ReviewItem", "review.Correction", "feedback.Gap", "feedback.Outcome",
    "routes.ReviewReplySettings", "routes.CustomerReview", "routes.RouteRun", "behavior.InvitationRule",
    "inbox.CannedReply", "crm.CrmDelivery",  # owners write their replies; a failed CRM delivery is sent again here
}
SUPERUSERS_ONLY = {"llm.RunEvent", "llm.Usage", "messengers.Connection", "messengers.Delivery",
                   "behavior.InvitationShow"}


def listed(response) -> set[str]:
    return {f"{app['app_label']}.{model['object_name']}" for app in response.context["app_list"]
            for model in app["models"]}


def test_an_owners_index_lists_only_what_an_owner_works_with(client, owner, bot):
    client.force_login(owner)
    assert listed(client.get("/admin/")) == OWNER_MODELS


def test_the_sidebar_of_an_owner_leaves_the_journals_out(client, owner, bot):
    client.force_login(owner)
    page = client.get("/admin/knowledge/entry/").content.decode()
    sidebar = page[page.index('id="nav-sidebar"'):page.index("</nav>", page.index('id="nav-sidebar"'))]
    assert "/admin/knowledge/entry/" in sidebar and "/admin/chat/lead/" in sidebar
    for hidden in SUPERUSERS_ONLY:
        assert f"/admin/{hidden.lower().replace('.', '/')}/" not in sidebar, hidden


def test_a_superuser_still_sees_everything(client, django_user_model, bot):
    root = django_user_model.objects.create_superuser("root", "root@example.com", "pw-root-1")
    client.force_login(root)
    everything = {model._meta.label for model in admin.site._registry}
    assert listed(client.get("/admin/")) == everything
    assert OWNER_MODELS | SUPERUSERS_ONLY <= everything


def test_an_owner_typing_a_hidden_address_is_refused_even_for_their_own_rows(client, owner, bot):
    """Hidden means without permission, not just left out of the menu."""
    run_event_record(bot_id=bot.pk, kind="llm_call", ok=True, purpose="mine-purpose")
    event = RunEvent.objects.get(bot=bot)
    usage = Usage.objects.create(bot=bot, route="answer", purpose="mine-line", provider="fake", model="m")
    client.force_login(owner)
    for label in SUPERUSERS_ONLY:
        app, model = label.lower().split(".")
        assert client.get(f"/admin/{app}/{model}/").status_code == 403, label
    for path in (f"/admin/llm/runevent/{event.pk}/change/", f"/admin/llm/usage/{usage.pk}/change/"):
        missing = path.replace("/change/", "0000/change/")
        assert client.get(path).status_code == client.get(missing).status_code == 403, path  # as for a missing id
    for page in (client.get("/admin/"), client.get("/admin/knowledge/entry/")):
        assert "mine-purpose" not in page.content.decode() and "mine-line" not in page.content.decode()


def test_every_admin_page_leads_back_to_the_owners_pages(client, owner, bot, settings):
    client.force_login(owner)
    for language, words in (("ru", "Кабинет владельца"), ("en", "Owner dashboard")):
        client.cookies[settings.LANGUAGE_COOKIE_NAME] = language
        page = client.get("/admin/knowledge/entry/").content.decode()
        assert f'<a href="/">{words}</a>' in page
        assert "View site" not in page and "Открыть сайт" not in page  # Django's own link, to the same "/"
