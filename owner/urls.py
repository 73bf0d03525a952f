"""The owner's pages, mounted in one place (assistant/urls.py includes this at the site's root)."""

from django.urls import include, path

from owner.dashboard import views as dashboard_views

urlpatterns = [
    path("", dashboard_views.home, name="home"),  # the bots an owner has, or the first steps
    path("", include("owner.dashboard.urls")),  # overview, onboarding, knowledge: b/<slug>/…
    path("b/<slug:slug>/", include("owner.tuning.urls")),  # voice and experiments
    path("b/", include("owner.insights.urls")),  # testing, usage, members
]
