# VK: the confirmation string of a community's Callback API, and updates stored under an event id
# as text (VK's event_id is a string; Telegram's update_id is copied over as its digits).

from django.db import migrations, models
from django.db.models.functions import Cast


def event_ids_from_update_ids(apps, schema_editor):
    InboundUpdate = apps.get_model("messengers", "InboundUpdate")
    InboundUpdate.objects.filter(event_id="").update(event_id=Cast("update_id", models.CharField(max_length=64)))


def forget_updates_without_number(apps, schema_editor):
    """Back to update ids only: VK's updates have none (they were handled; they are a log)."""
    apps.get_model("messengers", "InboundUpdate").objects.filter(update_id__isnull=True).delete()


class Migration(migrations.Migration):

    dependencies = [
        ('messengers', '0001_initial'),
    ]

    operations = [
        migrations.AddField(
            model_name='connection',
            name='confirmation',
            field=models.CharField(blank=True, max_length=64, verbose_name='строка подтверждения адреса'),
        ),
        migrations.AddField(
            model_name='inboundupdate',
            name='event_id',
            field=models.CharField(default='', max_length=64, verbose_name='номер события'),
            preserve_default=False,
        ),
        migrations.AlterField(
            model_name='inboundupdate',
            name='update_id',
            field=models.BigIntegerField(blank=True, null=True, verbose_name='номер обновления'),
        ),
        migrations.RunPython(event_ids_from_update_ids, forget_updates_without_number),
    ]
