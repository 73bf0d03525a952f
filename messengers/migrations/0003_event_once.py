# An update is stored once per connection and event id (was: per update id).

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('messengers', '0002_vk'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='inboundupdate',
            name='messenger_update_once',
        ),
        migrations.AddConstraint(
            model_name='inboundupdate',
            constraint=models.UniqueConstraint(fields=('connection', 'event_id'), name='messenger_event_once'),
        ),
    ]
