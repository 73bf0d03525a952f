from django.conf import settings
from django.contrib import admin
from django.contrib.staticfiles.urls import staticfiles_urlpatterns
from django.urls import include, path
from django.views.generic import RedirectView

from bots import accounts

admin.site.site_header = "Spravka"
admin.site.site_title = "Spravka"
admin.site.site_url = None  # «Кабинет владельца» takes its place (templates/admin/base_site.html)

urlpatterns = [
    path("", include("owner.urls")),  # every owner page: /, start/, b/<slug>/… (owner/urls.py)
    path("accounts/", include(accounts.urlpatterns)),
    path("admin/", admin.site.urls),
    path("i18n/", include("django.conf.urls.i18n")),
    path("bots/", include("bots.urls")),
    path("inbox/", include("inbox.urls")),
    path("answers/", include("review.urls")),
    path("routes/", include("routes.urls")),
    path("api/", include("api.urls")),  # the REST API, its schema and docs (docs/api.md)
    path("messengers/", include("messengers.urls")),  # updates posted by Telegram (docs/channels.md)
    # Browsers ask for /favicon.ico whatever the page links (templates/includes/favicon.html).
    path("favicon.ico", RedirectView.as_view(url=f"{settings.STATIC_URL}assistant/favicon.ico", permanent=True)),
    # In DEBUG (make run) the app serves every app's static files, the admin's included; in
    # production a reverse proxy serves STATIC_ROOT (docs/deploy.md).
    *staticfiles_urlpatterns(),
]
