from django.apps import AppConfig


class DemoConfig(AppConfig):
    """The demo shop: its site, cases, reviews and `manage.py rundemo` (what `make run` serves)."""

    name = "demo"
    label = "demo"
    verbose_name = "Demo"
