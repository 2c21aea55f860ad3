"""The Agreement page with the synset numbers the layers CSV allows (docs/formats.md: up to
999,999,999): the engine takes synset numbers as labels, whatever their size."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotate.models import JudgingLayer
from tests.factories import add_member, make_collection, make_question, make_user

pytestmark = pytest.mark.django_db


def test_agreement_page_with_synsets_numbered_999999999(client):
    c = make_collection(slug="big-numbers")
    org = make_user(username="org")
    add_member(collection=c, user=org, role="organizer")
    for name in ("ann", "bob"):
        add_member(collection=c, user=make_user(username=name), role="assessor")
    rows = ["question_id,synset_id,answer,level,assessor,done"]
    for n in range(1, 5):
        make_question(collection=c, qid=f"Q{n}", unjudged=["Lennon", "Yoko"])
        rows += [
            f"Q{n},999999999,Lennon,S,ann,1",
            f"Q{n},{'' if n == 4 else 999999999},Yoko,{'' if n == 4 else 'B'},ann,1",
            f"Q{n},999999999,Lennon,S,bob,1",
            f"Q{n},,Yoko,,bob,1",
        ]
    client.force_login(org)
    data = ("\n".join(rows) + "\n").encode()
    r = client.post(
        reverse("annotate:collection-import", args=[c.slug]),
        {"kind": "layers", "file": SimpleUploadedFile("l.csv", data)},
    )
    token = r.content.decode().split('name="token" value="')[1][:32]
    r = client.post(reverse("annotate:collection-import-confirm", args=[c.slug]), {"token": token})
    assert r.status_code == 302
    assert JudgingLayer.objects.filter(question__collection=c, done_at__isnull=False).count() == 8
    r = client.get(reverse("annotate:collection-agreement", args=[c.slug]))
    assert r.status_code == 200
    page = r.content.decode()
    assert "<h1>Agreement</h1>" in page and "ann – bob" in page
