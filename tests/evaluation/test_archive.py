"""export_collection / import_collection: a round trip gives identical judgments, events
and scores for every run; a bad archive writes nothing."""

import io
import zipfile

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError

from annotate import services as annotate_services
from annotate.models import AnswerString, Collection, JudgmentEvent, Question
from evaluation import services
from evaluation.archive import collection_export, collection_import
from evaluation.metrics import BASE_METRICS, InputError
from evaluation.models import Run, RunAnswer

pytestmark = pytest.mark.django_db


def judgments(c: Collection):
    return sorted(AnswerString.objects.filter(question__collection=c).values_list(
        "question__qid", "synset__ordinal", "text", "key", "level__code", "source",
        "judged_by__username", "judged_at"), key=repr)


def everything_else(c: Collection):
    return {
        "collection": (c.name, c.matching_mode, c.max_output_size, c.open_for_submissions,
                       c.leaderboard_published),
        "levels": list(c.levels.values_list("code", "label", "gain", "order")),
        "members": sorted(c.memberships.values_list("user__username", "role")),
        "questions": list(c.questions.order_by("id").values_list("qid", "text", "status",
                                                                 "notes", "version")),
        "assessors": sorted(c.questions.values_list("qid", "assessors__username"), key=repr),
        "events": list(JudgmentEvent.objects.filter(collection=c).order_by("id").values_list(
            "question__qid", "user__username", "action", "before", "after", "created_at")),
        "runs": sorted(c.runs.values_list("name", "owner__username", "sha256", "format",
                                          "uploaded_at")),
        "answers": sorted(RunAnswer.objects.filter(run__collection=c).values_list(
            "run__name", "question__qid", "rank", "text", "key", "score"), key=repr),
    }


def scores(c: Collection):
    runs = list(Run.objects.filter(collection=c).order_by("name"))
    config = services.check_config(metrics=[*BASE_METRICS, "p@3", "ndcg@5"], gains="default",
                                   beta=1.0, rbp_p=0.5, levels=["S", "A", "B"])
    s = services.score_runs(c, runs, config)
    return {name: s.per_question[name].round(12) for name in s.runs}


def test_round_trip_gives_identical_judgments_and_scores(demo, tmp_path):
    User = get_user_model()
    assessor = User.objects.get(username="assessor1")
    # some history first: pool a run, judge a pooled answer, mark one incorrect
    af = Run.objects.get(collection=demo, name="AF")
    services.run_pool(run=af, by=User.objects.get(username="organizer"))
    q = Question.objects.get(collection=demo, qid="QAC1-1021")
    q.assessors.add(assessor)
    pooled = AnswerString.objects.get(question=q, text="Obuchi is as uninspiring as cold pizza")
    annotate_services.string_judge(question=q, string=pooled.pk, by=assessor,
                                   synset=q.synsets.get(ordinal=2).pk)
    path = tmp_path / "demo.zip"
    call_command("export_collection", "demo", str(path), stdout=io.StringIO())
    call_command("import_collection", str(path), "--slug", "demo-copy", stdout=io.StringIO())
    copy = Collection.objects.get(slug="demo-copy")
    assert judgments(copy) == judgments(demo)
    assert everything_else(copy) == everything_else(demo)
    a, b = scores(demo), scores(copy)
    assert list(a) == list(b) == ["AF", "noAF"]
    for name in a:
        assert a[name].equals(b[name])
    # exporting the copy gives the same content again
    again = zipfile.ZipFile(io.BytesIO(collection_export(collection=copy)))
    first = zipfile.ZipFile(path)
    for member in ("questions.csv", "strings.csv", "synsets.csv", "run_answers.csv",
                   "events.jsonl", "runs.json"):
        assert again.read(member) == first.read(member), member


def test_bad_archives_write_nothing(demo, tmp_path):
    data = collection_export(collection=demo)
    counts = (Collection.objects.count(), AnswerString.objects.count(), Run.objects.count())
    with pytest.raises(InputError, match="already exists"):
        collection_import(data=data, slug="demo")
    with pytest.raises(InputError, match="unreadable archive"):
        collection_import(data=b"not a zip", slug="x1")
    # a string pointing at a level that does not exist
    src = zipfile.ZipFile(io.BytesIO(data))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for item in src.namelist():
            body = src.read(item)
            if item == "strings.csv":
                body = body.replace(b",S,", b",Z,", 1)
            z.writestr(item, body)
    with pytest.raises(InputError, match="unknown level 'Z'"):
        collection_import(data=buf.getvalue(), slug="x2")
    assert (Collection.objects.count(), AnswerString.objects.count(),
            Run.objects.count()) == counts
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"junk")
    with pytest.raises(CommandError):
        call_command("import_collection", str(bad), "--slug", "x3", stdout=io.StringIO(),
                     stderr=io.StringIO())
