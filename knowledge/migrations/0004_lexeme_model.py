"""Tell Django about knowledge_lexeme (created in 0003 with raw SQL): the table stays as it is."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0003_search_indexes"), ("bots", "0001_initial")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Lexeme",
                    fields=[
                        ("pk", models.CompositePrimaryKey("bot", "lexeme", blank=True, editable=False,
                                                          primary_key=True, serialize=False)),
                        ("bot", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="+",
                                                  to="bots.bot")),
                        ("lexeme", models.TextField()),
                        ("df", models.IntegerField()),
                    ],
                    options={"db_table": "knowledge_lexeme"},
                ),
            ],
            database_operations=[],
        ),
    ]
