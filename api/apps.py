from django.apps import AppConfig


class ApiConfig(AppConfig):
    """The REST API (/api/v1/): the highest layer. It calls every app's services and selectors and
    nothing imports it."""

    name = "api"
    verbose_name = "REST API"
