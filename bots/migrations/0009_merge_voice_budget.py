from django.db import migrations


class Migration(migrations.Migration):
    """Joins the Voice layer's field and the monthly budget's fields, added side by side."""

    dependencies = [
        ("bots", "0008_monthly_budget"),
        ("bots", "0008_voice"),
    ]

    operations: list[migrations.operations.base.Operation] = []
