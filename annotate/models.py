"""Collections, levels, questions, answer synsets and answer strings (DESIGN.md section 4).

A string's judgment is one of three states: *correct* (in a synset, with a level),
*incorrect* (no synset, ``judged_at`` set) or *unjudged* (no synset, ``judged_at`` null).
Business logic lives in the write modules (``annotate/judging.py``, ``annotate/layers.py``,
...), not here.
"""

from __future__ import annotations

from typing import NamedTuple

from django.conf import settings
from django.db import models
from django.db.models import Case, Count, Exists, F, OuterRef, Q, Subquery, Value, When
from django.db.models.functions import Coalesce
from django.utils.translation import gettext_lazy as _

from evaluation.metrics.levels import DEFAULT_LEVELS as DEFAULT_LEVEL_CODES
from evaluation.metrics.levels import default_gains


class LevelRow(NamedTuple):
    """A level as the collection form and ``collection_save`` give it."""

    code: str
    label: str
    gain: float
    examples: str = ""  # example answers, one per line


# the levels of a new collection, highest first (S, A, B: 3, 2, 1)
DEFAULT_LEVELS = tuple(
    LevelRow(code, label, gain)
    for code, label, gain in zip(
        DEFAULT_LEVEL_CODES,
        ("Correct and complete", "Correct, less specific", "Partially correct"),
        default_gains(DEFAULT_LEVEL_CODES),
        strict=True,
    )
)


def is_site_staff(user) -> bool:
    """Staff and superusers act as organizers of every collection (the one place this rule
    is written)."""
    return bool(user.is_staff or user.is_superuser)


class Role(models.TextChoices):
    ORGANIZER = "organizer", _("Organizer")
    ASSESSOR = "assessor", _("Assessor")
    PARTICIPANT = "participant", _("Participant")

    @property
    def is_organizer(self) -> bool:
        """For templates given the role (``{% if role.is_organizer %}``), never a literal."""
        return self is Role.ORGANIZER


# the roles that judge a collection's questions (organizer or assessor): the one definition
JUDGE_ROLES: tuple[Role, ...] = (Role.ORGANIZER, Role.ASSESSOR)


class QuestionStatus(models.TextChoices):
    TODO = "todo", _("To do")
    IN_PROGRESS = "in_progress", _("In progress")
    DONE = "done", _("Done")


class LayerState(models.TextChoices):
    """Where a question judged in independent layers stands (DESIGN.md section 9), the one
    definition every page, queue and write asks (``QuestionQuerySet.with_layer_state``).
    ``k`` is its request's: fewer layers than that are no independent judgment yet."""

    NONE = "", _("Not judged in layers")
    OPEN = "open", _("Layers being judged")  # a layer is not done yet
    SHORT = "short", _("Waiting for a new layer")  # all done, fewer than k (an assessor left)
    WAITING = "waiting", _("Waiting for adjudication")  # k done, gold has unjudged strings
    COMPLETE = "complete", _("Adjudicated")  # k done, gold has judged every string


class MatchingMode(models.TextChoices):
    NORMALIZED = "normalized", _("Normalized (NFKC, case, spaces, punctuation)")
    EXACT = "exact", _("Exact (surrounding spaces only)")
    SQUAD = "squad", _("SQuAD (case, punctuation anywhere, articles a/an/the, spaces)")


def percent_done(done: int, total: int) -> int:
    """The share of a collection's questions marked done, in whole percent (0 when none)."""
    return round(100 * done / total) if total else 0


class CollectionQuerySet(models.QuerySet):
    def visible_to(self, user) -> CollectionQuerySet:
        """Collections ``user`` is a member of (every collection for staff)."""
        if is_site_staff(user):
            return self.all()
        return self.filter(memberships__user=user).distinct()

    def with_counts(self) -> CollectionQuerySet:
        """Questions per collection, done and in progress: the one definition of these
        counts (the collection list and a collection's overview)."""
        return self.annotate(
            n_questions=Count("questions", distinct=True),
            n_done=Count(
                "questions", filter=Q(questions__status=QuestionStatus.DONE), distinct=True
            ),
            n_in_progress=Count(
                "questions", distinct=True, filter=Q(questions__status=QuestionStatus.IN_PROGRESS)
            ),
        )


class Collection(models.Model):
    name = models.CharField(_("name"), max_length=200)
    slug = models.SlugField(_("slug"), max_length=80, unique=True)
    description = models.TextField(_("description"), blank=True)
    guidelines = models.TextField(_("assessor guidelines"), blank=True)
    matching_mode = models.CharField(
        _("matching mode"), max_length=12, choices=MatchingMode, default=MatchingMode.NORMALIZED
    )
    max_output_size = models.PositiveSmallIntegerField(
        _("max output size L'"), default=5, help_text=_("answers per question a run may return")
    )
    open_for_submissions = models.BooleanField(_("open for submissions"), default=False)
    leaderboard_published = models.BooleanField(
        _("leaderboard published"),
        default=False,
        help_text=_("participants see every run's scores, not only their own"),
    )
    judgment_version = models.PositiveIntegerField(default=0, editable=False)
    judgments_changed_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = CollectionQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(max_output_size__gte=1), name="collection_max_output_size_positive"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=12, choices=Role)

    class Meta:
        ordering = ["collection", "role", "user"]
        constraints = [
            models.UniqueConstraint(fields=["collection", "user"], name="membership_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.user} — {self.role} in {self.collection}"


class Level(models.Model):
    """A correctness level of a collection; ``order`` 0 is the highest."""

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="levels")
    code = models.CharField(max_length=8)
    label = models.CharField(max_length=100, blank=True)
    gain = models.FloatField(default=1.0)
    order = models.PositiveSmallIntegerField(default=0)
    examples = models.TextField(
        blank=True,
        max_length=2000,
        help_text=_("example answers of this level, one per line, shown in the guidelines"),
    )

    class Meta:
        ordering = ["collection", "order"]
        constraints = [
            models.UniqueConstraint(fields=["collection", "code"], name="level_code_unique"),
            models.UniqueConstraint(fields=["collection", "order"], name="level_order_unique"),
            models.CheckConstraint(condition=Q(gain__gte=0), name="level_gain_non_negative"),
        ]

    def __str__(self) -> str:
        return self.code

    @property
    def example_list(self) -> list[str]:
        """The examples, one per non-blank line."""
        return [line.strip() for line in self.examples.splitlines() if line.strip()]


class QuestionQuerySet(models.QuerySet):
    def with_counts(self) -> QuestionQuerySet:
        """R (synsets), strings, and unjudged strings per question: the one definition of
        these counts, used by every page that lists questions."""

        def count(model, **where):
            # one subquery per count: joins of synsets x strings would multiply rows
            sub = (
                model.objects.filter(question=OuterRef("pk"), **where)
                .order_by()
                .values("question")
                .annotate(c=Count("pk"))
                .values("c")
            )
            return Coalesce(Subquery(sub, output_field=models.IntegerField()), Value(0))

        return self.annotate(
            n_synsets=count(AnswerSynset),
            n_strings=count(AnswerString),
            n_unjudged=count(AnswerString, judged_at__isnull=True),
        )

    def assigned_to(self, user) -> QuestionQuerySet:
        """Questions assigned to ``user`` in collections where they still judge (organizer
        or assessor): an assignment left over from an earlier role is not a queue entry,
        nor one to a question judged in layers that they do not judge it in
        (``judgeable_by``)."""
        return self.filter(
            assessors=user,
            collection__memberships__user=user,
            collection__memberships__role__in=JUDGE_ROLES,
        ).judgeable_by(user)

    def judgeable_by(self, user) -> QuestionQuerySet:
        """Without the questions judged in layers (they have a layer request, DESIGN.md
        section 9) that ``user`` has no layer of and does not organize: gold is written
        there by the organizers and adjudication only, so nothing there is theirs to
        judge, even assigned to it (before the request, or by a bulk assignment)."""
        requested = LayerRequest.objects.filter(question=OuterRef("pk"))
        own = JudgingLayer.objects.filter(question=OuterRef("pk"), assessor_id=user.pk)
        organizer = Membership.objects.filter(
            collection_id=OuterRef("collection_id"), user_id=user.pk, role=Role.ORGANIZER
        )
        return self.filter(~Exists(requested) | Exists(own) | Exists(organizer))

    def without_layers_done_by(self, user) -> QuestionQuerySet:
        """Without the questions ``user`` judges in a layer they have marked done: nothing
        is left there for them to judge (DESIGN.md section 9)."""
        done = JudgingLayer.objects.filter(
            question=OuterRef("pk"), assessor_id=user.pk, done_at__isnull=False
        )
        return self.exclude(Exists(done))

    def with_layer_state(self) -> QuestionQuerySet:
        """Each question with ``layer_state`` (a ``LayerState``): none without a layer
        request; open while a layer is not done; short when every layer is done but they
        are fewer than the request's k (an assessor left with theirs open: it waits for a
        new layer, ``layers_request`` tops it up); waiting when k layers or more are done
        and gold still has unjudged strings (the disagreements); complete when gold has
        judged every string.  Subqueries, no join that multiplies rows."""
        layers = JudgingLayer.objects.filter(question=OuterRef("pk"))
        n_layers = layers.order_by().values("question").annotate(n=Count("pk")).values("n")
        unjudged = AnswerString.objects.filter(question=OuterRef("pk"), judged_at__isnull=True)
        return self.annotate(
            layer_count=Coalesce(Subquery(n_layers, output_field=models.IntegerField()), 0),
            layer_state=Case(
                When(layer_request__isnull=True, then=Value(LayerState.NONE)),
                When(Exists(layers.filter(done_at__isnull=True)), then=Value(LayerState.OPEN)),
                When(layer_count__lt=F("layer_request__k"), then=Value(LayerState.SHORT)),
                When(Exists(unjudged), then=Value(LayerState.WAITING)),
                default=Value(LayerState.COMPLETE),
                output_field=models.CharField(),
            ),
        )

    def in_layer_state(self, *states: str) -> QuestionQuerySet:
        """The questions in one of ``states`` (``with_layer_state``)."""
        return self.with_layer_state().filter(layer_state__in=states)

    def awaiting_adjudication(self) -> QuestionQuerySet:
        """Questions whose k layers are all done and whose gold still has unjudged strings:
        the disagreements wait for an adjudicator (``LayerState.WAITING``)."""
        return self.in_layer_state(LayerState.WAITING)

    def for_queue(self) -> QuestionQuerySet:
        """With their collection, by collection; in progress, then to do, then done."""
        rank = Case(
            When(status=QuestionStatus.IN_PROGRESS, then=0),
            When(status=QuestionStatus.TODO, then=1),
            default=2,
        )
        return self.select_related("collection").order_by("collection__name", rank, "id")


class Question(models.Model):
    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="questions")
    qid = models.CharField(_("question id"), max_length=100)
    text = models.TextField()
    status = models.CharField(max_length=12, choices=QuestionStatus, default=QuestionStatus.TODO)
    assessors = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="assigned_questions"
    )
    notes = models.TextField(blank=True)
    version = models.PositiveIntegerField(default=0, editable=False)
    updated_at = models.DateTimeField(auto_now=True)

    objects = QuestionQuerySet.as_manager()

    class Meta:
        ordering = ["collection", "id"]
        constraints = [
            models.UniqueConstraint(fields=["collection", "qid"], name="question_qid_unique"),
        ]

    def __str__(self) -> str:
        return self.qid


class AnswerSynset(models.Model):
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="synsets")
    ordinal = models.PositiveIntegerField()
    label = models.CharField(
        max_length=100,
        blank=True,
        default="",
        help_text=_(
            "the synset id of an imported judgments file (``gold``, ``Q1-a``); kept "
            "so that an export writes it back"
        ),
    )
    note = models.TextField(blank=True)

    class Meta:
        ordering = ["question", "ordinal"]
        constraints = [
            models.UniqueConstraint(fields=["question", "ordinal"], name="synset_ordinal_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.question.qid} AS({self.ordinal})"


class Source(models.TextChoices):
    FLAT = "flat", "Flat answer import"
    POOL = "pool", "Pooled from runs"
    ASSESSOR = "assessor", "Typed by an assessor"
    IMPORT = "import", "Judgments import"


class AnswerString(models.Model):
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="strings")
    text = models.TextField()
    key = models.TextField(
        help_text=_(
            "matching key of ``text`` under the collection's matching mode (the keys of "
            "every spelling are in SpellingKey)"
        )
    )
    variants = models.JSONField(
        default=list,
        blank=True,
        help_text=_(
            "other spellings of the string, folded into it because they had its key "
            "under the mode of the time (DESIGN.md section 4): nothing typed or imported is lost, "
            "and they match under every later mode (SpellingKey)"
        ),
    )
    synset = models.ForeignKey(
        AnswerSynset, null=True, blank=True, on_delete=models.RESTRICT, related_name="strings"
    )
    level = models.ForeignKey(
        Level, null=True, blank=True, on_delete=models.RESTRICT, related_name="strings"
    )
    source = models.CharField(max_length=10, choices=Source, default=Source.ASSESSOR)
    judged_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    judged_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["question", "id"]
        constraints = [
            models.UniqueConstraint(fields=["question", "key"], name="string_key_unique"),
            models.CheckConstraint(
                condition=Q(synset__isnull=True, level__isnull=True)
                | Q(synset__isnull=False, level__isnull=False, judged_at__isnull=False),
                name="string_synset_level_together",
            ),
        ]
        indexes = [models.Index(fields=["question", "judged_at"])]

    def __str__(self) -> str:
        return self.text

    @property
    def state(self) -> str:
        if self.synset_id is not None:
            return "correct"
        return "incorrect" if self.judged_at is not None else "unjudged"


class SpellingKey(models.Model):
    """A matching key of a string under its collection's current matching mode: one row per
    distinct key of its spellings (its text and its variants), so a run answer equal to any
    spelling matches the string under every mode, also after a switch keys the spellings
    apart ("Richard Nixon." folded into "Richard Nixon" under normalized matching, then
    exact).  Two strings of a question never share a key; a string's spellings may.
    Derived data: written only by ``annotate.spellings.string_keys_sync``."""

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="spelling_keys")
    string = models.ForeignKey(AnswerString, on_delete=models.CASCADE, related_name="spelling_keys")
    key = models.TextField()

    class Meta:
        ordering = ["question", "string", "id"]
        constraints = [
            models.UniqueConstraint(fields=["question", "key"], name="spelling_key_unique"),
        ]

    def __str__(self) -> str:
        return self.key


def state_token(synset_id: int | None, level_id: int | None, judged: bool) -> str:
    """The state of a string as a page shows it: ``u`` unjudged, ``x`` incorrect,
    ``<synset id>/<level id>`` correct.  Pages send it back so a stale edit is detected."""
    if synset_id is not None:
        return f"{synset_id}/{level_id}"
    return "x" if judged else "u"


def string_token(string: AnswerString) -> str:
    """``state_token`` of an answer string."""
    return state_token(string.synset_id, string.level_id, string.judged_at is not None)


class JudgmentEvent(models.Model):
    """Append-only audit of every change: who, when, which question, what before and after."""

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="events")
    question = models.ForeignKey(
        Question, null=True, blank=True, on_delete=models.SET_NULL, related_name="events"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    layer = models.ForeignKey(
        "JudgingLayer",
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="events",
        help_text=_("the assessor's layer this event changed; null for the gold judgments"),
    )
    action = models.CharField(max_length=40)
    before = models.JSONField(default=dict, blank=True)
    after = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-id"]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.action}"


class PendingImport(models.Model):
    """A file validated and previewed, waiting for the organizer's confirmation.  Kept in
    its own table (not the session, which every request loads) and deleted on confirm or
    once older than ``annotate.imports.PENDING_TTL``."""

    token = models.CharField(max_length=64, unique=True)
    collection = models.ForeignKey(
        Collection, on_delete=models.CASCADE, related_name="pending_imports"
    )
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=12)
    filename = models.CharField(max_length=255)
    data = models.BinaryField()
    options = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    def __str__(self) -> str:
        return f"{self.kind} {self.filename} ({self.created_at:%Y-%m-%d %H:%M})"


# -- several assessors per question (DESIGN.md section 9) -----------------------------------
class LayerRequest(models.Model):
    """The organizer asked for ``k`` independent judgments of ``question``: its assessors
    judge in layers of their own, and the collection's judgments (the synsets and levels
    above, what runs are scored against) become the *gold* layer, filled by agreement and
    adjudication.  A question without a request is judged as before, in gold directly."""

    question = models.OneToOneField(
        Question, on_delete=models.CASCADE, related_name="layer_request"
    )
    k = models.PositiveSmallIntegerField(default=2)
    adjudicator = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text=_("who resolves disagreements besides the organizers"),
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    gold_at = models.DateTimeField(
        null=True, blank=True, help_text=_("when the agreed strings went to gold")
    )

    class Meta:
        constraints = [models.CheckConstraint(condition=Q(k__gte=1), name="layer_k_positive")]

    def __str__(self) -> str:
        return f"{self.question.qid} x{self.k}"


def _blind(user) -> Q:
    """A layer of someone else on a question ``user`` judges in a layer, not every layer of
    it done yet: hidden from ``user`` whatever their role (``blind_to``)."""
    own = JudgingLayer.objects.filter(question=OuterRef("question"), assessor=user)
    any_open = JudgingLayer.objects.filter(question=OuterRef("question"), done_at__isnull=True)
    return Exists(own) & Exists(any_open) & ~Q(assessor=user)


class JudgingLayerQuerySet(models.QuerySet):
    def blind_to(self, user) -> JudgingLayerQuerySet:
        """The layers hidden from ``user`` whatever their role, an organizer's included
        (DESIGN.md section 9: blindness is a property of the person in the question): the
        others of a question they judge in a layer, until every layer of it is done (their
        own done is not enough: they may reopen it).  Every reader of layers, their
        judgments, events and counts leaves these out (``readable_by`` and the readers an
        organizer uses: the layers and events CSVs, the Agreement page).  None (a command
        an administrator runs) is blind to nothing."""
        if user is None or user.pk is None:
            return self.none()
        return self.filter(_blind(user))

    def readable_by(self, user, *, organizer: bool = False) -> JudgingLayerQuerySet:
        """The layers ``user`` may read: their own; the others of a question they judge in
        a layer only once *every* layer of it is done (blindness: their own layer done is
        not enough, the others may still be judging); a named adjudicator with no layer of
        the question, likewise once every layer is done (before, the assessors still
        judge); an organizer (``organizer``: the caller knows the role), everything but
        the layers they are blind to (``blind_to``)."""
        if organizer:
            return self.exclude(pk__in=JudgingLayer.objects.blind_to(user).values("pk"))
        own = JudgingLayer.objects.filter(question=OuterRef("question"), assessor=user)
        any_open = JudgingLayer.objects.filter(question=OuterRef("question"), done_at__isnull=True)
        return self.filter(
            Q(assessor=user)
            | (Exists(own) & ~Exists(any_open))
            | (Q(question__layer_request__adjudicator=user) & ~Exists(own) & ~Exists(any_open))
        )


class JudgingLayer(models.Model):
    """One assessor's independent judgments of one question: their rows in
    ``LayerJudgment`` (a string absent there is unjudged in this layer)."""

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="layers")
    assessor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="judging_layers"
    )
    version = models.PositiveIntegerField(default=0, editable=False)
    started_at = models.DateTimeField(null=True, blank=True)
    done_at = models.DateTimeField(null=True, blank=True)
    seconds = models.FloatField(
        null=True,
        blank=True,
        editable=False,
        help_text=_("from the first edit to done, for throughput (set when marked done)"),
    )
    created_at = models.DateTimeField(auto_now_add=True)

    objects = JudgingLayerQuerySet.as_manager()

    class Meta:
        ordering = ["question", "id"]
        constraints = [
            models.UniqueConstraint(fields=["question", "assessor"], name="layer_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.question.qid} / {self.assessor}"

    @property
    def done(self) -> bool:
        return self.done_at is not None


class LayerJudgment(models.Model):
    """A string's judgment in one layer: in the layer's synset ``group`` (a number local to
    the layer) with ``level``, or incorrect (both null)."""

    layer = models.ForeignKey(JudgingLayer, on_delete=models.CASCADE, related_name="judgments")
    string = models.ForeignKey(
        AnswerString, on_delete=models.CASCADE, related_name="layer_judgments"
    )
    group = models.PositiveIntegerField(null=True, blank=True)
    level = models.ForeignKey(
        Level, null=True, blank=True, on_delete=models.RESTRICT, related_name="layer_judgments"
    )
    judged_at = models.DateTimeField()

    class Meta:
        ordering = ["layer", "group", "id"]
        constraints = [
            models.UniqueConstraint(fields=["layer", "string"], name="layer_judgment_unique"),
            models.CheckConstraint(
                condition=Q(group__isnull=True, level__isnull=True)
                | Q(group__isnull=False, level__isnull=False),
                name="layer_judgment_group_level_together",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.layer}: {self.string_id} -> {self.group}"


class UserPreference(models.Model):
    """What one person chose for themselves: the language of the pages (blank: the one
    their browser asks for).  ``annotate.language`` reads and writes it."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="preference"
    )
    language = models.CharField(max_length=10, blank=True)

    def __str__(self) -> str:
        return f"{self.user}: {self.language or 'browser language'}"
