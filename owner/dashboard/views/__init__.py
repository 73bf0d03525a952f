"""The dashboard's views: thin. Each gets its bot with `owner_bot` (another owner's bot is a 404,
exactly like a missing one), calls one selector or service, and renders."""

from owner.dashboard.views.channels import channel_disconnect, channel_max, channel_telegram, channel_vk, channels
from owner.dashboard.views.crm import crm, crm_check, crm_disconnect, crm_retry
from owner.dashboard.views.home import home, start
from owner.dashboard.views.knowledge import document_remove, document_upload, knowledge, qa_add, qa_edit, source_recrawl
from owner.dashboard.views.overview import overview
from owner.dashboard.views.setup import origins, run_progress, setup, setup_site

__all__ = ["channel_disconnect", "channel_max", "channel_telegram", "channel_vk", "channels", "crm", "crm_check",
           "crm_disconnect", "crm_retry", "document_remove",
           "document_upload", "home", "knowledge", "origins", "overview", "qa_add", "qa_edit", "run_progress", "setup",
           "setup_site", "source_recrawl", "start"]
