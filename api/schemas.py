"""The API's request and response shapes (they make the OpenAPI schema at /api/docs)."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from ninja import Schema

from evaluation.metrics.gains import DEFAULT_BETA, DEFAULT_RBP_P

Precision = Literal["readable", "full"]


class ScoreParams(Schema):
    """The score parameters of the scores and compare endpoints, as on the pages:
    ``metric`` (repeat it; default the page's metrics), ``gains`` (``default`` = the
    collection's levels, ``3:2:1``, ``adjusted``, ``S=4,A=2,B=1``...), ``beta``, ``rbp_p``,
    and ``precision`` (``full``: every score at full double precision)."""

    metric: list[str] | None = None
    gains: str = "default"
    beta: float = DEFAULT_BETA
    rbp_p: float = DEFAULT_RBP_P
    precision: Precision = "readable"


class ErrorOut(Schema):
    """Every error but a refused upload: a message (ninja's own parameter checks give a
    list of problems instead)."""

    detail: str | list[dict]


class IssueOut(Schema):
    """One problem of an uploaded file, as the upload page lists it."""

    file: str
    line: int | None
    message: str


class UploadErrorOut(Schema):
    detail: str
    errors: list[IssueOut]


class JobIssueOut(Schema):
    """One error of a failed job: the file and line it is about (null for a problem of the
    whole file or of no file), as the upload page lists it."""

    file: str | None
    line: int | None
    message: str


class JobOut(Schema):
    """A background job (an upload): ``job`` is where to follow it.  ``status``: queued,
    running, succeeded, failed or cancelled; while it runs, ``phase`` and ``done`` of
    ``total`` ``unit`` say how far it has come (``total`` null when not known yet); once it
    ended, ``message`` says how, ``errors`` lists every problem of its file with its line
    (failed), ``result`` what it made (succeeded; an upload's ``run``, as ``GET
    /api/collections/{slug}/runs/{id}`` gives it, and its ``answers`` and default
    ``means``)."""

    job: str
    id: int
    kind: str
    label: str
    status: Literal["queued", "running", "succeeded", "failed", "cancelled"]
    phase: str
    done: int
    total: int | None
    unit: str
    message: str
    errors: list[JobIssueOut]
    result: dict | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


class MeOut(Schema):
    username: str
    staff: bool


class LevelOut(Schema):
    code: str
    label: str
    gain: float


class CollectionOut(Schema):
    slug: str
    name: str
    description: str
    role: str | None
    matching_mode: str
    max_output_size: int
    open_for_submissions: bool
    leaderboard_published: bool
    judgment_version: int
    questions: int
    levels: list[LevelOut]


class QuestionOut(Schema):
    question_id: str
    text: str
    status: str
    synsets: int
    strings: int
    unjudged: int
    assessors: list[str]


class RunOut(Schema):
    id: int
    name: str
    owner: str
    description: str
    format: str
    source_name: str
    sha256: str
    uploaded_at: datetime


class RunWithdrawnOut(RunOut):
    """A run just withdrawn: kept for the audit trail, gone from every listing."""

    withdrawn_at: datetime
    withdrawn_by: str


class ConfigOut(Schema):
    """What scores were computed with (the parameters of the score pages)."""

    metrics: list[str]
    gains: str
    beta: float
    rbp_p: float
    matching: str
    judgment_version: int
    precision: str


class QuestionScoresOut(Schema):
    question_id: str
    L: int
    R: int
    scores: dict[str, float | None]


class RunScoresOut(Schema):
    run: RunOut
    config: ConfigOut
    means: dict[str, float | None]
    judged_questions: int
    answers_for_unjudged_questions: int
    questions: list[QuestionScoresOut]


class PairedOut(Schema):
    metric: str
    n: int
    mean_a: float | None
    mean_b: float | None
    mean_diff: float | None
    up: int
    down: int
    tied: int
    sign_p: float | None
    wilcoxon_p: float | None
    t_p: float | None
    randomization_p: float | None
    effect_size: float | None


class QuestionDiffOut(Schema):
    question_id: str
    a: dict[str, float | None]
    b: dict[str, float | None]
    b_minus_a: dict[str, float | None]


class DisagreeOut(Schema):
    """The compare page's "Where Q-measure and RR disagree": the questions where the B - A
    difference of one of ``metrics`` is zero and the other's is not, the largest first by
    the first metric's difference (none when only one metric is compared)."""

    metrics: list[str]
    questions: list[str]


class ComparisonOut(Schema):
    a: RunOut
    b: RunOut
    config: ConfigOut
    tests: list[PairedOut]
    questions: list[QuestionDiffOut]
    disagree: DisagreeOut


class JudgmentOut(Schema):
    question_id: str
    synset_id: str
    answer: str
    level: str
    question: str
    assessor: str
    updated: str
