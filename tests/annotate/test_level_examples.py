"""Example answers per level: set on the collection form, shown (escaped) in the judging
page's guidelines, kept by the archive (version 4) and absent from older archives."""

import io
import json
import zipfile

import pytest

from annotate.models import Level
from evaluation.archive.exporting import collection_export
from evaluation.archive.importing import collection_import
from evaluation.metrics.data import InputError
from tests.factories import add_member, make_collection, make_question, make_user

pytestmark = pytest.mark.django_db


def form_post(c, levels):
    data = {
        "name": c.name,
        "slug": c.slug,
        "matching_mode": c.matching_mode,
        "max_output_size": c.max_output_size,
        "levels-TOTAL_FORMS": str(len(levels)),
        "levels-INITIAL_FORMS": "0",
    }
    for i, (code, gain, examples) in enumerate(levels):
        data |= {
            f"levels-{i}-code": code,
            f"levels-{i}-label": f"level {code}",
            f"levels-{i}-gain": gain,
            f"levels-{i}-examples": examples,
        }
    return data


@pytest.fixture
def world(client):
    c = make_collection(slug="ex", guidelines="")
    q = make_question(collection=c, qid="Q1", text="Capital?", unjudged=["Paris"])
    org, ass = make_user(username="org"), make_user(username="ass")
    add_member(collection=c, user=org, role="organizer")
    add_member(collection=c, user=ass, role="assessor")
    q.assessors.add(ass)
    return c, q, org, ass


def guidelines_box(client, q) -> str:
    html = client.get(f"/questions/{q.pk}/judge/").content.decode()
    return html.split('<details class="guidelines-box" id="guidelines"')[1].split("</details>")[0]


def test_examples_from_the_form_reach_the_guidelines_box_escaped(client, world):
    c, q, org, ass = world
    client.force_login(org)
    r = client.get(f"/collections/{c.slug}/edit/")
    assert 'name="levels-0-examples"' in r.content.decode()
    r = client.post(
        f"/collections/{c.slug}/edit/",
        form_post(
            c,
            [
                ("S", 3, "Paris\r\n\r\n  the city of Paris  "),
                ("A", 2, ""),
                ("B", 1, "<b>Île</b> & co"),
            ],
        ),
    )
    assert r.status_code == 302, r.content.decode()[:2000]
    by_code = {lv.code: lv for lv in Level.objects.filter(collection=c)}
    assert by_code["S"].example_list == ["Paris", "the city of Paris"]
    assert by_code["A"].examples == ""
    # the form shows them again for editing
    assert "the city of Paris" in client.get(f"/collections/{c.slug}/edit/").content.decode()

    client.force_login(ass)
    box = guidelines_box(client, q)
    s_part = box.split(">S</span>")[1].split("</dd>\n")[1]
    assert "e.g. <q>Paris</q>, <q>the city of Paris</q>" in s_part
    # a level without examples gets no examples line
    a_part = box.split(">A</span>")[1].split(">B</span>")[0]
    assert "level-examples" not in a_part
    assert "<q>&lt;b&gt;Île&lt;/b&gt; &amp; co</q>" in box  # untrusted text is escaped
    assert "<b>Île</b>" not in box


def test_archive_keeps_examples_and_reads_version_3_without_them(world):
    c, *_ = world
    Level.objects.filter(collection=c, code="S").update(examples="Paris\nParis, France")
    data = collection_export(collection=c)
    manifest = json.loads(zipfile.ZipFile(io.BytesIO(data)).read("manifest.json"))
    assert manifest["version"] == 4
    copy = collection_import(data=data, slug="ex-copy")
    assert copy.levels.get(code="S").examples == "Paris\nParis, France"

    def rewrite(change) -> bytes:
        src, buf = zipfile.ZipFile(io.BytesIO(data)), io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            for item in src.namelist():
                body = src.read(item)
                if item == "manifest.json":
                    m = json.loads(body)
                    change(m)
                    body = json.dumps(m).encode()
                z.writestr(item, body)
        return buf.getvalue()

    def as_version_3(m):
        m["version"] = 3
        for lv in m["levels"]:
            del lv["examples"]

    old = collection_import(data=rewrite(as_version_3), slug="ex-v3")
    assert [lv.examples for lv in old.levels.all()] == ["", "", ""]

    def bad_examples(m):
        m["levels"][0]["examples"] = 7

    with pytest.raises(InputError, match="level 1: examples must be text"):
        collection_import(data=rewrite(bad_examples), slug="ex-bad")

    def examples_in_version_3(m):
        m["version"] = 3

    with pytest.raises(InputError, match="level 1: needs exactly code, gain, label, order"):
        collection_import(data=rewrite(examples_in_version_3), slug="ex-bad2")
