"""The demo collection holds the QA paper's examples (q-measure-for-question-answering.txt)."""

import io

import pytest
from django.contrib.auth import authenticate
from django.core.management import call_command

from annotate.models import AnswerString, Membership
from evaluation import demo as spec
from evaluation.models import RunAnswer

pytestmark = pytest.mark.django_db


def synsets(collection, qid):
    """{ordinal: {text: level}} of one question; judged-incorrect strings under None."""
    out = {}
    for s in AnswerString.objects.filter(
        question__collection=collection, question__qid=qid, judged_at__isnull=False
    ).select_related("synset", "level"):
        ordinal = s.synset.ordinal if s.synset else None
        out.setdefault(ordinal, {})[s.text] = s.level.code if s.level else None
    return out


def test_beatles_example_1_and_the_fifth_synset(demo):
    beatles = synsets(demo, "EX1-BEATLES")
    assert beatles[1] == {
        "Sir Paul McCartney": "S",
        "Paul McCartney": "S",
        "McCartney": "A",
        "Paul": "B",
    }
    assert beatles[4] == {"Ringo Starr": "S", "Starr": "A", "Ringo": "B"}
    assert len([k for k in beatles if k]) == 4
    five = synsets(demo, "EX1-BEATLES-5")
    assert five[5] == {"Stuart Sutcliffe": "B", "Sutcliffe": "B", "Stuart": "B"}


def test_dvd_nil_kawabata_nobel_disneyland_bastille(demo):
    assert synsets(demo, "EX2-DVD")[1] == {"Digital Versatile Disk": "S", "Digital Video Disk": "A"}
    assert synsets(demo, "EX3-LOVE") == {1: {"NIL": "A"}}
    assert synsets(demo, "QAC1-1012")[1] == {"December 10, 1968": "S", "1968": "B"}
    nobel = synsets(demo, "QAC1-1058")
    assert [min(nobel[i].values(), key="SAB".index) for i in (1, 2, 3)] == ["S", "S", "S"]
    assert {"Hideki Yukawa", "Doctor Hideki Yukawa"} <= set(nobel[1])
    tdl = synsets(demo, "TDL-1")[1]
    assert (tdl["Chiba prefecture"], tdl["Japan"]) == ("S", "B")
    assert synsets(demo, "BASTILLE")[1] == {
        "July 14, 1789": "S",
        "14 July 1789": "S",
        "July 14": "B",
        "1789": "B",
    }
    assert synsets(demo, "QAC1-1006")[None] == {"October": None, "1998": None}


def test_pooled_candidates_and_unjudged_question(demo):
    pooled = AnswerString.objects.filter(question__collection=demo, source="pool")
    assert sorted(pooled.values_list("text", flat=True)) == ["Nagoya", "a feeling"]
    assert all(s.state == "unjudged" for s in pooled)
    snow = demo.questions.get(qid="SNOW-COUNTRY")
    assert snow.status == "todo" and not snow.strings.filter(judged_at__isnull=False).exists()
    assert demo.questions.get(qid="QAC1-1021").status == "in_progress"


def test_runs_mirror_af_and_noaf(demo):
    def answers(run, qid):
        return list(
            RunAnswer.objects.filter(
                run__collection=demo, run__name=run, question__qid=qid
            ).values_list("text", flat=True)
        )

    assert answers("noAF", "EX1-BEATLES") == [
        "McCartney",
        "Lennon",
        "Paul",
        "George Harrison",
        "Starr",
    ]
    assert answers("noAF", "QAC1-1058")[0] == "Hideki Yukawa"
    assert answers("noAF", "QAC1-1058")[3] == "Doctor Hideki Yukawa"
    assert answers("AF", "QAC1-1058")[4] == "Shinichiro Tomonaga"
    assert answers("AF", "QAC1-1012") == ["1968"]
    assert answers("AF", "EX3-LOVE") == ["NIL"] and answers("noAF", "EX3-LOVE")[1] == "NIL"
    # the full-width answer matches the judged "Chiba" after NFKC
    fullwidth = RunAnswer.objects.get(run__name="AF", question__qid="JA-TDL")
    assert fullwidth.key == AnswerString.objects.get(question__qid="JA-TDL", text="Chiba").key
    assert all(r.owner.username == "participant" for r in demo.runs.all())
    assert all(
        len(spec.RUNS[r]["answers"][q]) <= demo.max_output_size
        for r in spec.RUNS
        for q in spec.RUNS[r]["answers"]
    )


def test_users_roles_and_assignments(demo):
    roles = dict(Membership.objects.filter(collection=demo).values_list("user__username", "role"))
    assert roles == {
        "organizer": "organizer",
        "assessor1": "assessor",
        "assessor2": "assessor",
        "participant": "participant",
    }
    for username, password, _, staff in spec.USERS:
        user = authenticate(username=username, password=password)
        assert user is not None and user.is_staff == staff
    assigned = {
        q.qid: [u.username for u in q.assessors.all()]
        for q in demo.questions.prefetch_related("assessors")
    }
    assert all(len(a) == 1 and a[0] in ("assessor1", "assessor2") for a in assigned.values())
    assert {a[0] for a in assigned.values()} == {"assessor1", "assessor2"}


def test_command_prints_the_logins():
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    text = out.getvalue()
    for username, password, _, _ in spec.USERS:
        assert username in text and password in text


def test_agreement_demo_layers_take_believable_time(demo):
    """The demo judges its layers by script within a fraction of a second; they are dated
    at the assessors' pace (spec.AGREEMENT_PACE), so the agreement page's median time per
    question is not "0 s": each layer's seconds run from its first edit to done, and its
    events lie in between, in their order."""
    from annotate.agreement_report import collection_agreement
    from annotate.models import JudgingLayer, JudgmentEvent
    from evaluation.management.commands.load_demo import load_agreement_demo

    study = load_agreement_demo()
    medians = {t.assessor: t.median_seconds for t in collection_agreement(study).throughput}
    assert medians == {"assessor1": 4 * 14.0, "assessor2": 4 * 23.0}  # 4 strings each
    for layer in JudgingLayer.objects.filter(question__collection=study):
        times = list(
            JudgmentEvent.objects.filter(layer=layer, user=layer.assessor)
            .order_by("id")
            .values_list("created_at", flat=True)
        )
        assert times == sorted(times) and times[0] == layer.started_at
        assert times[-1] == layer.done_at
        assert layer.seconds == (layer.done_at - layer.started_at).total_seconds() > 30
