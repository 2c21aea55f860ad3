"""Drop question assignments of users who no longer judge in the question's collection
(removed, or made participants before the membership service dropped them itself)."""

from django.db import migrations
from django.db.models import Exists, OuterRef


def drop_stale_assignments(apps, schema_editor):
    Question = apps.get_model("annotate", "Question")
    Membership = apps.get_model("annotate", "Membership")
    through = Question.assessors.through
    judges = Membership.objects.filter(collection_id=OuterRef("question__collection_id"),
                                       user_id=OuterRef("user_id"),
                                       role__in=["organizer", "assessor"])
    through.objects.filter(~Exists(judges)).delete()


class Migration(migrations.Migration):

    dependencies = [
        ("annotate", "0002_labels_variants_pending_imports"),
    ]

    operations = [
        migrations.RunPython(drop_stale_assignments, migrations.RunPython.noop),
    ]
