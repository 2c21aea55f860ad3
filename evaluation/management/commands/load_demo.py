"""``manage.py load_demo``: the demo collection, its users and two runs (idempotent)."""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone

from annotate import adjudication, layer_selectors, layers
from annotate.models import (
    AnswerString,
    AnswerSynset,
    Collection,
    JudgingLayer,
    JudgmentEvent,
    Level,
    Membership,
    Question,
    QuestionStatus,
    Source,
)
from annotate.normalize import normalize_answer
from annotate.spellings import string_keys_sync
from evaluation import demo
from evaluation.models import Run, RunAnswer

SLUG = "demo"


class Command(BaseCommand):
    help = "Create (or reset) the demo collection with the QA paper's examples, users and runs."

    def handle(self, *args, **options):
        load_demo()
        load_agreement_demo()
        self.stdout.write(
            self.style.SUCCESS(
                f"Demo collections '{SLUG}' and '{demo.AGREEMENT_SLUG}' (two assessors' "
                "independent layers) loaded. Logins:"
            )
        )
        for username, password, role, _ in demo.USERS:
            self.stdout.write(f"  {username:12} {password:18} {role or 'staff (admin)'}")


@transaction.atomic
def load_demo() -> Collection:
    """Reset the demo collection to its initial content; users keep their ids.  (Radon D:
    one straight script over the demo's tables, each loop filling one of them; split, it
    would only pass the same dozen names from step to step.)"""
    User = get_user_model()
    users = {}
    for username, password, _, staff in demo.USERS:
        user, _ = User.objects.get_or_create(username=username)
        user.set_password(password)
        user.is_staff = user.is_superuser = staff
        user.save()
        users[username] = user

    Collection.objects.filter(slug=SLUG).delete()
    collection = Collection.objects.create(
        slug=SLUG,
        name="QAC demo (Sakai 2004 examples)",
        description="The worked examples of 'New Performance Metrics based on Multigrade "
        "Relevance' (Sakai, NTCIR-4) with two runs in the spirit of AF and noAF.",
        guidelines=demo.GUIDELINES,
        matching_mode="normalized",
        max_output_size=5,
        open_for_submissions=True,
        leaderboard_published=False,
        judgments_changed_at=timezone.now(),
        judgment_version=1,
    )
    levels = {
        code: Level.objects.create(
            collection=collection, code=code, label=label, gain=gain, examples=ex, order=i
        )
        for i, (code, label, gain, ex) in enumerate(demo.LEVELS)
    }
    for username, _, role, _ in demo.USERS:
        if role:
            Membership.objects.create(collection=collection, user=users[username], role=role)

    def key(text: str) -> str:
        return normalize_answer(text, collection.matching_mode)

    now = timezone.now()
    questions = {}
    strings = []
    for i, (qid, text, synsets, incorrect, unjudged) in enumerate(demo.QUESTIONS):
        if qid in demo.IN_PROGRESS or (
            (synsets or incorrect) and (unjudged or demo.POOLED.get(qid))
        ):
            status = QuestionStatus.IN_PROGRESS  # a question with an unjudged string is not done
        else:
            status = QuestionStatus.DONE if synsets or incorrect else QuestionStatus.TODO
        q = Question.objects.create(collection=collection, qid=qid, text=text, status=status)
        judge = users["assessor1"] if i % 2 == 0 else users["assessor2"]
        q.assessors.add(judge)
        questions[qid] = q
        for ordinal, members in enumerate(synsets, start=1):
            syn = AnswerSynset.objects.create(question=q, ordinal=ordinal)
            strings += [
                AnswerString(
                    question=q,
                    text=a,
                    key=key(a),
                    synset=syn,
                    level=levels[lv],
                    source=Source.IMPORT,
                    judged_by=judge,
                    judged_at=now,
                )
                for a, lv in members
            ]
        strings += [
            AnswerString(
                question=q, text=a, key=key(a), source=Source.IMPORT, judged_by=judge, judged_at=now
            )
            for a in incorrect
        ]
        strings += [
            AnswerString(question=q, text=a, key=key(a), source=Source.FLAT) for a in unjudged
        ]
        strings += [
            AnswerString(question=q, text=a, key=key(a), source=Source.POOL)
            for a in demo.POOLED.get(qid, [])
        ]
        JudgmentEvent.objects.create(
            collection=collection,
            question=q,
            user=None,
            action="demo_load",
            after={"synsets": len(synsets)},
        )
    AnswerString.objects.bulk_create(strings)
    string_keys_sync(strings=strings, mode=collection.matching_mode)

    for name, spec in demo.RUNS.items():
        lines = [
            f"{qid}\t{r}\t{a}"
            for qid, answers in spec["answers"].items()
            for r, a in enumerate(answers, start=1)
        ]
        body = ("\n".join(lines) + "\n").encode()
        run = Run.objects.create(
            collection=collection,
            name=name,
            owner=users["participant"],
            description=spec["description"],
            source_name=f"{name}.tsv",
            sha256=hashlib.sha256(body).hexdigest(),
            format="qa",
        )
        RunAnswer.objects.bulk_create(
            RunAnswer(run=run, question=questions[qid], rank=r, text=a, key=key(a))
            for qid, answers in spec["answers"].items()
            for r, a in enumerate(answers, start=1)
        )
    return collection


@transaction.atomic
def load_agreement_demo() -> Collection:
    """Reset the agreement-study collection: its questions judged independently by
    assessor1 and assessor2 through the layer services (as on the pages), so the agreed
    strings are in gold; the organizer has adjudicated three of the questions (the
    disagreements taken from one layer: ``demo.AGREEMENT_ADJUDICATED``) and the other two
    wait for adjudication; two runs to score per layer.
    Run after ``load_demo`` (which creates the users)."""
    User = get_user_model()
    users = {name: User.objects.get(username=name) for name, *_ in demo.USERS}
    Collection.objects.filter(slug=demo.AGREEMENT_SLUG).delete()
    collection = Collection.objects.create(
        slug=demo.AGREEMENT_SLUG,
        name="Agreement study (two assessors)",
        description="Every question judged independently by assessor1 and assessor2; "
        "agreement, adjudication and scores per layer.",
        guidelines=demo.GUIDELINES,
        matching_mode="normalized",
        max_output_size=5,
        open_for_submissions=True,
        judgments_changed_at=timezone.now(),
        judgment_version=1,
    )
    for i, (code, label, gain, ex) in enumerate(demo.LEVELS):
        Level.objects.create(
            collection=collection, code=code, label=label, gain=gain, examples=ex, order=i
        )
    for username, _, role, _ in demo.USERS:
        if role:
            Membership.objects.create(collection=collection, user=users[username], role=role)
    questions = {}
    for qid, text, first, _ in demo.AGREEMENT_QUESTIONS:
        q = Question.objects.create(collection=collection, qid=qid, text=text)
        questions[qid] = q
        pooled = AnswerString.objects.bulk_create(
            AnswerString(
                question=q,
                text=a,
                key=normalize_answer(a, collection.matching_mode),
                source=Source.POOL,
            )
            for a in first
        )
        string_keys_sync(strings=pooled, mode=collection.matching_mode)
    assessors = [users["assessor1"], users["assessor2"]]
    layers.layers_request(
        collection=collection,
        questions=list(questions.values()),
        assessors=assessors,
        by=users["organizer"],
        k=2,
    )
    for qid, _, *judgments in demo.AGREEMENT_QUESTIONS:
        q = questions[qid]
        ids = dict(AnswerString.objects.filter(question=q).values_list("text", "pk"))
        for user, marks in zip(assessors, judgments, strict=True):
            layer = layer_selectors.layer_for(question=q, user=user)
            made: set[int] = set()
            for answer, mark in marks.items():
                if mark is None:
                    layers.layer_judge(layer=layer, string=ids[answer], by=user)
                    continue
                group, level = mark
                layers.layer_judge(
                    layer=layer,
                    string=ids[answer],
                    by=user,
                    group=group if group in made else None,
                    new_group=group not in made,
                    level=level,
                )
                made.add(group)
            layers.layer_mark_done(layer=layer, by=user)
    agreement_demo_dates(collection, end=timezone.now())
    for qid, username in demo.AGREEMENT_ADJUDICATED.items():
        q = questions[qid]
        left = AnswerString.objects.filter(question=q, judged_at__isnull=True)
        adjudication.adjudicate_take(
            question=q,
            layer=layer_selectors.layer_for(question=q, user=users[username]),
            by=users["organizer"],
            strings=list(left.values_list("pk", flat=True)),
        )
    for name, answers in demo.AGREEMENT_RUNS.items():
        body = "".join(
            f"{qid}\t{r}\t{a}\n"
            for qid, texts in answers.items()
            for r, a in enumerate(texts, start=1)
        ).encode()
        run = Run.objects.create(
            collection=collection,
            name=name,
            owner=users["participant"],
            source_name=f"{name}.tsv",
            format="qa",
            sha256=hashlib.sha256(body).hexdigest(),
        )
        RunAnswer.objects.bulk_create(
            RunAnswer(
                run=run,
                question=questions[qid],
                rank=r,
                text=a,
                key=normalize_answer(a, collection.matching_mode),
            )
            for qid, texts in answers.items()
            for r, a in enumerate(texts, start=1)
        )
    return collection


def agreement_demo_dates(collection: Collection, *, end: datetime) -> None:
    """Date the layers of ``collection`` (their first edit, done time, ``seconds`` and the
    assessor's events) as if each had been judged at its assessor's pace
    (``demo.AGREEMENT_PACE``, seconds per string), one after another up to ``end``: the
    script judges them all within a fraction of a second, which made every median time of
    the agreement page "0 s"."""
    at = end
    layers_ = (
        JudgingLayer.objects.filter(question__collection=collection)
        .select_related("assessor")
        .order_by("-question_id", "-assessor__username")
    )
    for layer in layers_:
        pace = timedelta(seconds=demo.AGREEMENT_PACE[layer.assessor.get_username()])
        events = list(
            JudgmentEvent.objects.filter(layer=layer, user=layer.assessor)
            .order_by("-id")
            .values_list("pk", flat=True)
        )
        for i, pk in enumerate(events):  # the last one (layer_done) first
            JudgmentEvent.objects.filter(pk=pk).update(created_at=at - i * pace)
        layer.done_at = at
        layer.started_at = at - (len(events) - 1) * pace
        layer.seconds = (layer.done_at - layer.started_at).total_seconds()
        layer.save(update_fields=["started_at", "done_at", "seconds"])
        at = layer.started_at - timedelta(minutes=2)
