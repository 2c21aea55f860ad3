from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django import forms
from django.conf import settings
from django.core.exceptions import NON_FIELD_ERRORS
from django.utils.translation import gettext_lazy as _

from annotate.models import Collection, MatchingMode
from config.uploads import check_upload_size
from evaluation.analysis.score_config import ScoreConfig, check_config
from evaluation.analysis.significance import (
    INTERVALS,
    MAX_TRIALS,
    TESTS,
    TestConfig,
    check_test_config,
)
from evaluation.metrics import BASE_METRICS, DEFAULT_METRICS, parse_gains, parse_metrics
from evaluation.metrics.gains import DEFAULT_BETA, DEFAULT_RBP_P, check_parameters
from evaluation.services import run_name_problem

METRIC_LABELS = {
    "q_measure": "Q-measure",
    "r_measure": "R-measure",
    "rr": "RR",
    "ap": "AP",
    "ap_rigid": "AP (rigid)",
    "awp": "AWP",
    "rwp": "R-WP",
    "r_prec": "R-prec",
    "ndcg": "nDCG",
    "rbp": "RBP",
    "rr_trunc": "RR′",
    "ap_trunc": "AP′",
    "ndcg_trunc": "nDCG′",
    "rbp_trunc": "RBP′",
}
# the intervals' and the pair tests' names (evaluation.analysis.significance's keys)
INTERVAL_LABELS = {"t": _("t interval"), "bootstrap": _("bootstrap percentile interval")}
TEST_LABELS = {"holm": _("paired t-test, Holm-corrected"), "tukey": _("randomised Tukey HSD")}
assert INTERVAL_LABELS.keys() == INTERVALS.keys() and TEST_LABELS.keys() == TESTS.keys()
CUTOFFS = ("p@1", "p@3", "p@5", "ndcg@1", "ndcg@3", "ndcg@5", "ndcg@10")


def metric_label(name: str) -> str:
    if name in METRIC_LABELS:
        return METRIC_LABELS[name]
    base, _, k = name.partition("@")
    return f"{'P' if base == 'p' else 'nDCG'}@{k}"


METRIC_CHOICES = [(m, metric_label(m)) for m in (*BASE_METRICS, *CUTOFFS)]
GAIN_CHOICES = [
    ("default", _("collection's gains")),
    ("3:2:1", "3:2:1"),
    ("1:1:1", _("1:1:1 (binary)")),
    ("10:5:1", _("10:5:1 (steep)")),
    ("adjusted", _("adjusted (eq. 7)")),
    ("custom", _("custom…")),
]


def form_problem_list(form: forms.Form) -> list[str]:
    """A bound form's errors, each as ``field: message`` (a form-wide one as its message)."""
    return [
        m if field == NON_FIELD_ERRORS else f"{field}: {m}"
        for field, messages in form.errors.items()
        for m in messages
    ]


def form_problems(form: forms.Form) -> str:
    """``form_problem_list`` as one line, ``rbp_p: ...; gains: ...``: the reason a CSV
    download (400) or an API request (422) is refused, the same words the page shows."""
    return "; ".join(form_problem_list(form))


class MetricField(forms.MultipleChoiceField):
    """The page's boxes name the usual metrics; any name the engine scores (``p@k``,
    ``ndcg@k`` of any k) is taken too, as the API and qa-score take it."""

    def valid_value(self, value: str) -> bool:
        if super().valid_value(value):
            return True
        try:
            parse_metrics([value])
        except ValueError:
            return False
        return True


class GainsField(forms.ChoiceField):
    """A profile of the page's menu, ``custom`` (then ``custom_gains`` says which), or a
    profile written out (``S=4,A=2,B=1``, ``adjusted:10:5:1``: the API's ``gains``, a
    hand-written URL); a profile the engine cannot read is refused with its reason."""

    def validate(self, value: str) -> None:
        if not value or super().valid_value(value):
            return
        try:
            parse_gains(value)
        except ValueError as e:
            raise forms.ValidationError(str(e)) from e


class ScoreConfigForm(forms.Form):
    """The score configuration of a page, a CSV download or an API request, read from the
    query string: a valid form's ``config`` is what it asks for, checked against the
    collection's ``levels`` (``score_config.check_config``); an invalid one's is the
    defaults (``default_metrics``, the collection's gains), and its errors say why."""

    metric = MetricField(
        choices=METRIC_CHOICES,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label=_("Metric"),
    )
    gains = GainsField(choices=GAIN_CHOICES, required=False, label=_("Gains"))
    custom_gains = forms.CharField(
        required=False,
        max_length=200,
        label=_("Custom gains"),
        help_text=_("e.g. S=4,A=2,B=1 or adjusted:10:5:1"),
    )
    # ranges: the engine's one check (gains.check_parameters), as for qa-score
    beta = forms.FloatField(required=False, label=_("Beta"))
    rbp_p = forms.FloatField(required=False, label=_("RBP p"))

    def __init__(
        self,
        data: Mapping[str, Any] | None = None,
        *,
        levels: Sequence[str] = (),
        default_metrics: Sequence[str] = DEFAULT_METRICS,
        **kwargs: Any,
    ) -> None:
        super().__init__(data, **kwargs)
        self.levels = tuple(levels)
        self.config = ScoreConfig(metrics=tuple(default_metrics))

    @classmethod
    def read(
        cls,
        data: Mapping[str, Any] | None,
        collection: Collection,
        *,
        default_metrics: Sequence[str] = DEFAULT_METRICS,
    ) -> ScoreConfigForm:
        """The form of ``data`` (a query string; empty or None: the defaults) for
        ``collection``'s levels, validated."""
        levels = list(collection.levels.order_by("order").values_list("code", flat=True))
        form = cls(data or None, levels=levels, default_metrics=default_metrics)
        form.is_valid()
        return form

    def clean_custom_gains(self) -> str:
        spec = (self.cleaned_data.get("custom_gains") or "").strip()
        try:
            parse_gains(spec or None)
        except ValueError as e:
            raise forms.ValidationError(str(e)) from e
        return spec

    def _checked(self, name: str, default: float) -> float | None:
        """The field ``name``, in the engine's range (``check_parameters``: one rule for
        the pages, the API and qa-score); blank means ``default``."""
        value = self.cleaned_data.get(name)
        try:
            check_parameters(**{name: default if value is None else value})
        except ValueError as e:
            raise forms.ValidationError(str(e)) from e
        return value

    def clean_beta(self) -> float | None:
        return self._checked("beta", DEFAULT_BETA)

    def clean_rbp_p(self) -> float | None:
        return self._checked("rbp_p", DEFAULT_RBP_P)

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if self.errors:
            return data
        beta, rbp_p = data.get("beta"), data.get("rbp_p")
        try:
            self.config = check_config(
                metrics=data.get("metric") or self.config.metrics,
                gains=self.gain_spec(),
                beta=DEFAULT_BETA if beta is None else beta,
                rbp_p=DEFAULT_RBP_P if rbp_p is None else rbp_p,
                levels=self.levels,
            )
        except ValueError as e:
            raise forms.ValidationError(str(e)) from e
        return data

    def gain_spec(self) -> str:
        gains = (self.cleaned_data.get("gains") or "").strip() or "default"
        if gains == "custom":
            return (self.cleaned_data.get("custom_gains") or "").strip() or "default"
        return gains

    @classmethod
    def showing(cls, config: ScoreConfig) -> ScoreConfigForm:
        """An unbound form showing what a page was computed with (a profile written out in
        the URL is shown as ``custom``)."""
        named = config.gains in dict(GAIN_CHOICES)
        form = cls(
            initial={
                "metric": list(config.metrics),
                "beta": config.beta,
                "rbp_p": config.rbp_p,
                "gains": config.gains if named else "custom",
                "custom_gains": "" if named else config.gains,
            }
        )
        form.config = config
        return form

    def shown(self) -> ScoreConfigForm:
        """The form a page shows: this one with its errors, else one showing ``config``."""
        return self if self.errors else self.showing(self.config)


class TestConfigForm(forms.Form):
    """How the runs and ranking pages compute their 95% intervals and the ranking page its
    all-pairs tests, read from the query string: a valid form's ``config`` is what it asks
    for (``significance.check_test_config``), an invalid one's the defaults."""

    interval = forms.ChoiceField(
        choices=list(INTERVAL_LABELS.items()), required=False, label=_("95% CI")
    )
    test = forms.ChoiceField(
        choices=list(TEST_LABELS.items()), required=False, label=_("Pair test")
    )
    # bootstrap samples / Tukey permutations (the template's label says which)
    trials = forms.IntegerField(
        required=False, min_value=1, max_value=MAX_TRIALS, label=_("Trials")
    )
    seed = forms.IntegerField(required=False, min_value=0, max_value=2**63 - 1, label=_("Seed"))

    def __init__(self, data: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(data, **kwargs)
        self.config = TestConfig()

    @classmethod
    def read(cls, data: Mapping[str, Any] | None) -> TestConfigForm:
        """The form of ``data`` (a query string; empty or None: the defaults), validated."""
        form = cls(data or None)
        form.is_valid()
        return form

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if self.errors:
            return data
        default = TestConfig()
        try:
            self.config = check_test_config(
                interval=data["interval"] or default.interval,
                test=data["test"] or default.test,
                trials=data["trials"] or default.trials,
                seed=data["seed"] if data["seed"] is not None else default.seed,
            )
        except ValueError as e:
            raise forms.ValidationError(str(e)) from e
        return data

    @classmethod
    def showing(cls, config: TestConfig) -> TestConfigForm:
        """An unbound form showing ``config``."""
        form = cls(
            initial={
                "interval": config.interval,
                "test": config.test,
                "trials": config.trials,
                "seed": config.seed,
            }
        )
        form.config = config
        return form

    def shown(self) -> TestConfigForm:
        """The form a page shows: this one with its errors, else one showing ``config``."""
        return self if self.errors else self.showing(self.config)


# a run file's formats, "detect" (blank) first
FORMAT_CHOICES = [
    ("", _("detect")),
    ("qa", _("QA run (TSV or CSV)")),
    ("trec", _("TREC run")),
]


class RunUploadForm(forms.Form):
    """A run's upload: its name, description, format and file, checked before anything is
    read (the name's characters, the file's size); the upload job reads the file
    (``evaluation.run_jobs.run_upload_start``, for the upload page and the API alike)."""

    name = forms.CharField(
        max_length=100,
        label=_("Name"),
        help_text=_("the run tag, unique in the collection"),
    )
    description = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 2}), label=_("Description")
    )
    format = forms.ChoiceField(choices=FORMAT_CHOICES, required=False, label=_("Format"))
    # help texts are rendered as HTML by Django's form templates: no angle brackets here
    file = forms.FileField(
        label=_("File"),
        help_text=_(
            "QA TSV, tab-separated: question_id, rank, answer and an "
            "optional score; CSV with a header "
            "question_id,rank,answer[,score]; or TREC: "
            "qid Q0 docno rank score tag"
        ),
    )

    def clean_name(self):
        name = self.cleaned_data["name"]
        if problem := run_name_problem(name):
            raise forms.ValidationError(problem[0].upper() + problem[1:] + ".")
        return name

    def clean_file(self):
        return check_upload_size(self.cleaned_data["file"], settings.RUN_UPLOAD_MAX_MB, "runs")


class RunReplaceForm(forms.Form):
    """A new file for an existing run (its name and description stay)."""

    format = forms.ChoiceField(choices=FORMAT_CHOICES, required=False, label=_("Format"))
    file = forms.FileField(label=_("File"), help_text=RunUploadForm.base_fields["file"].help_text)

    def clean_file(self):
        return check_upload_size(self.cleaned_data["file"], settings.RUN_UPLOAD_MAX_MB, "runs")


class MatchingModeForm(forms.Form):
    """The Matching mode page's one field (``matching_views.collection_matching_mode``)."""

    matching_mode = forms.ChoiceField(choices=MatchingMode.choices, label=_("Matching mode"))
