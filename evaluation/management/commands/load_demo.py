"""``manage.py load_demo``: the demo collection, its users and two runs (idempotent)."""

from __future__ import annotations

import hashlib

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone

from annotate.models import (
    AnswerString,
    AnswerSynset,
    Collection,
    JudgmentEvent,
    Level,
    Membership,
    Question,
    QuestionStatus,
    Source,
)
from annotate.normalize import normalize_answer
from evaluation import demo
from evaluation.models import Run, RunAnswer

SLUG = "demo"


class Command(BaseCommand):
    help = "Create (or reset) the demo collection with the QA paper's examples, users and runs."

    def handle(self, *args, **options):
        load_demo()
        self.stdout.write(self.style.SUCCESS("Demo collection 'demo' loaded. Logins:"))
        for username, password, role, _ in demo.USERS:
            self.stdout.write(f"  {username:12} {password:18} {role or 'staff (admin)'}")


@transaction.atomic
def load_demo() -> Collection:
    """Reset the demo collection to its initial content; users keep their ids."""
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
        slug=SLUG, name="QAC demo (Sakai 2004 examples)",
        description="The worked examples of 'New Performance Metrics based on Multigrade "
                    "Relevance' (Sakai, NTCIR-4) with two runs in the spirit of AF and noAF.",
        guidelines=demo.GUIDELINES, matching_mode="normalized", max_output_size=5,
        open_for_submissions=True, leaderboard_published=False,
        judgments_changed_at=timezone.now(), judgment_version=1,
    )
    levels = {code: Level.objects.create(collection=collection, code=code, label=label,
                                         gain=gain, order=i)
              for i, (code, label, gain) in enumerate(demo.LEVELS)}
    for username, _, role, _ in demo.USERS:
        if role:
            Membership.objects.create(collection=collection, user=users[username], role=role)

    def key(text: str) -> str:
        return normalize_answer(text, collection.matching_mode)

    now = timezone.now()
    questions = {}
    strings = []
    for i, (qid, text, synsets, incorrect, unjudged) in enumerate(demo.QUESTIONS):
        if qid in demo.IN_PROGRESS or ((synsets or incorrect) and (
                unjudged or demo.POOLED.get(qid))):
            status = QuestionStatus.IN_PROGRESS  # a question with an unjudged string is not done
        else:
            status = QuestionStatus.DONE if synsets or incorrect else QuestionStatus.TODO
        q = Question.objects.create(collection=collection, qid=qid, text=text, status=status)
        judge = users["assessor1"] if i % 2 == 0 else users["assessor2"]
        q.assessors.add(judge)
        questions[qid] = q
        for ordinal, members in enumerate(synsets, start=1):
            syn = AnswerSynset.objects.create(question=q, ordinal=ordinal)
            strings += [AnswerString(question=q, text=a, key=key(a), synset=syn,
                                     level=levels[lv], source=Source.IMPORT, judged_by=judge,
                                     judged_at=now) for a, lv in members]
        strings += [AnswerString(question=q, text=a, key=key(a), source=Source.IMPORT,
                                 judged_by=judge, judged_at=now) for a in incorrect]
        strings += [AnswerString(question=q, text=a, key=key(a), source=Source.FLAT)
                    for a in unjudged]
        strings += [AnswerString(question=q, text=a, key=key(a), source=Source.POOL)
                    for a in demo.POOLED.get(qid, [])]
        JudgmentEvent.objects.create(collection=collection, question=q, user=None,
                                     action="demo_load", after={"synsets": len(synsets)})
    AnswerString.objects.bulk_create(strings)

    for name, spec in demo.RUNS.items():
        lines = [f"{qid}\t{r}\t{a}" for qid, answers in spec["answers"].items()
                 for r, a in enumerate(answers, start=1)]
        body = ("\n".join(lines) + "\n").encode()
        run = Run.objects.create(collection=collection, name=name, owner=users["participant"],
                                 description=spec["description"], source_name=f"{name}.tsv",
                                 sha256=hashlib.sha256(body).hexdigest(), format="qa")
        RunAnswer.objects.bulk_create(
            RunAnswer(run=run, question=questions[qid], rank=r, text=a, key=key(a))
            for qid, answers in spec["answers"].items() for r, a in enumerate(answers, start=1))
    return collection
