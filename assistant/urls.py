from django.conf import settings
from django.conf.urls.static import static
from django.contrib import admin
from django.urls import include, path

admin.site.site_header = "Spravka"
admin.site.site_title = "Spravka"

urlpatterns = [
    path("admin/", admin.site.urls),
    path("i18n/", include("django.conf.urls.i18n")),
    path("bots/", include("assistant.bots.urls")),
    *static(settings.STATIC_URL, document_root=settings.STATICFILES_DIRS[0]),
]
