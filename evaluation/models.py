"""Runs and their ranked answers (DESIGN.md section 4)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from annotate.models import Role, is_site_staff


class RunFormat(models.TextChoices):
    QA = "qa", _("QA run (question_id, rank, answer)")
    TREC = "trec", _("TREC run (qid Q0 docno rank score tag)")


class RunQuerySet(models.QuerySet):
    def active(self) -> RunQuerySet:
        """Runs not withdrawn (a withdrawn run keeps its record for the audit trail but is
        left out of every list, ranking, comparison, pooling and API listing)."""
        return self.filter(withdrawn_at__isnull=True)

    def visible_to(self, user, collection=None) -> RunQuerySet:
        """Runs ``user`` may see: every run of collections they organize (staff: all), their
        own, and other participants' runs where the leaderboard is published.  Assessors
        see no runs.  Withdrawn runs are left out."""
        qs = self.active()
        qs = qs if collection is None else qs.filter(collection=collection)
        if is_site_staff(user):
            return qs
        return qs.filter(
            Q(collection__memberships__user=user, collection__memberships__role=Role.ORGANIZER)
            | Q(
                owner=user,
                collection__memberships__user=user,
                collection__memberships__role=Role.PARTICIPANT,
            )
            | Q(
                collection__leaderboard_published=True,
                collection__memberships__user=user,
                collection__memberships__role=Role.PARTICIPANT,
            )
        ).distinct()


class Run(models.Model):
    collection = models.ForeignKey(
        "annotate.Collection",
        on_delete=models.CASCADE,
        related_name="runs",
        verbose_name=_("collection"),
    )
    name = models.CharField(_("name"), max_length=100, help_text=_("the run tag"))
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="runs",
        verbose_name=_("owner"),
    )
    description = models.TextField(_("description"), blank=True)
    uploaded_at = models.DateTimeField(_("uploaded at"), auto_now_add=True)
    source_name = models.CharField(_("source name"), max_length=255, blank=True)
    sha256 = models.CharField(_("sha256"), max_length=64, blank=True)
    format = models.CharField(_("format"), max_length=4, choices=RunFormat, default=RunFormat.QA)
    withdrawn_at = models.DateTimeField(
        _("withdrawn at"),
        null=True,
        blank=True,
        help_text=_("set when the run is withdrawn (soft delete)"),
    )
    withdrawn_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        verbose_name=_("withdrawn by"),
    )

    objects = RunQuerySet.as_manager()

    class Meta:
        verbose_name = _("run")
        verbose_name_plural = _("runs")
        ordering = ["collection", "name"]
        constraints = [
            # a withdrawn run frees its name
            models.UniqueConstraint(
                fields=["collection", "name"],
                name="run_name_unique",
                condition=Q(withdrawn_at__isnull=True),
            ),
        ]

    def __str__(self) -> str:
        return self.name


class RunAnswer(models.Model):
    """One answer of a run to a question, at a rank, with its matching ``key`` (the
    collection's matching mode's key of ``text``, rewritten for every answer whose key
    changes when the mode changes: ``services.run_answers_rekey``).  No index holds ``key``
    (nor ``text``) so that a re-key is a heap-only (HOT) update on PostgreSQL: no index entry
    written per answer, where five indexes made a mode change at size M (2 million answers)
    take minutes; and the table's pages are kept half empty (fillfactor 50, migration 0005)
    so that every new version fits on its page.  ``run`` has no index of its own: the unique
    (run, question, rank) serves its lookups."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="answers", db_index=False)
    question = models.ForeignKey(
        "annotate.Question", on_delete=models.CASCADE, related_name="run_answers"
    )
    rank = models.PositiveIntegerField()
    text = models.TextField()
    key = models.TextField()
    score = models.FloatField(null=True, blank=True)

    class Meta:
        verbose_name = _("run answer")
        verbose_name_plural = _("run answers")
        ordering = ["run", "question", "rank"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "question", "rank"], name="run_answer_rank_unique"
            ),
            models.CheckConstraint(condition=Q(rank__gte=1), name="run_answer_rank_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.run} {self.question_id} #{self.rank}"


# -- scores kept in the database (issue 24) -------------------------------------------------
class ScoreBasis(models.Model):
    """The judgments a collection's stored scores were computed from
    (``evaluation.score_store``): the collection's judgment version, what every question's
    score depends on besides its own judgments (``signature``: the matching mode and the
    levels' codes, gains and order), the version of each question then (``stamps``:
    int64 pairs of question id and ``Question.version``, by id, zlib-compressed; a
    question judged since has another version, so only its scores are computed again) and
    the judged questions
    (``axis``: int64 question ids in id order, the order of every stored score array;
    ``qids``: their question ids).  Derived data: written only by ``score_store``."""

    collection = models.ForeignKey(
        "annotate.Collection", on_delete=models.CASCADE, related_name="+"
    )
    judgment_version = models.PositiveIntegerField()
    signature = models.CharField(max_length=64)
    stamps = models.BinaryField()
    axis = models.BinaryField()
    qids = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "judgment_version"], name="score_basis_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.collection_id} v{self.judgment_version}"


class RunScores(models.Model):
    """One run's per-question scores under one configuration (``config``: a digest of
    ``ScoreConfig.key()``) against a ``ScoreBasis``, with its answers' counts: ``values``
    float64 (metric, judged question of the basis) and ``tallies`` int64 (question ids the
    run answers, by id; its answers to each; those no assessor has judged), both
    zlib-compressed, with their totals.  ``answers_sha256`` is the run's digest when
    computed: a replaced file makes the row stale.  Derived data: written only by
    ``evaluation.score_store``."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="+")
    basis = models.ForeignKey(ScoreBasis, on_delete=models.CASCADE, related_name="scores")
    config = models.CharField(max_length=64)
    answers_sha256 = models.CharField(max_length=64, blank=True)
    values = models.BinaryField()
    tallies = models.BinaryField()
    answers = models.PositiveIntegerField()
    questions = models.PositiveIntegerField()
    unjudged_answers = models.PositiveIntegerField()
    unknown = models.PositiveIntegerField()
    computed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "basis", "config"], name="run_scores_unique"),
        ]
        indexes = [models.Index(fields=["run", "config"])]

    def __str__(self) -> str:
        return f"{self.run_id} @ {self.basis_id} {self.config[:8]}"
