"""Gain profiles: fixed (3:2:1, 1:1:1, 10:5:1, custom) and Sakai's topic-adjusted gains.

A profile maps each correctness level, highest first, to a gain value.  ``adjusted``
applies the paper's eq. 7 per question (q-measure-for-question-answering.txt, 5.1):
gain'(X) = gain(X) - (R(X)/R) (gain(X) - gain(X')), X' one level lower (gain 0 below the
lowest level), not applied when R(X) = R.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .columns import DEFAULT_BETA, DEFAULT_RBP_P
from .errors import _

# Bounds that keep every metric finite (gains near 1e308 overflow the cumulated gains to
# inf and the scores to NaN); far beyond any meaningful setting.
MAX_GAIN = 1e6
MAX_BETA = 1000.0


def check_gain(value: float, what: str | None = None) -> float:
    """``value`` as a float if it is a finite gain in [0, MAX_GAIN]; else ValueError
    (``what``: what the message calls the value, in the reader's language; "gain")."""
    g = float(value)
    if not math.isfinite(g) or not 0 <= g <= MAX_GAIN:
        raise ValueError(
            _("%(what)s %(value)s is out of range: gains are numbers from 0 to %(max)s")
            % {"what": what or _("gain"), "value": repr(value), "max": f"{MAX_GAIN:g}"}
        )
    return g


def check_parameters(*, beta: float = DEFAULT_BETA, rbp_p: float = DEFAULT_RBP_P) -> None:
    """The one check of the scoring parameters besides the gains (forms, command line and
    services all call it): beta in [0, MAX_BETA], the RBP persistence p in [0, 1)."""
    b, p = float(beta), float(rbp_p)
    if not (math.isfinite(b) and 0 <= b <= MAX_BETA):
        raise ValueError(
            _("beta %(beta)s is out of range: it must be from 0 to %(max)s")
            % {"beta": repr(beta), "max": f"{MAX_BETA:g}"}
        )
    if not (math.isfinite(p) and 0 <= p < 1):
        raise ValueError(
            _("the RBP persistence p %(p)s is out of range: it must be in [0, 1)")
            % {"p": repr(rbp_p)}
        )


_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"


@dataclass(frozen=True)
class GainProfile:
    """``values`` are the gains of the levels highest first (None: the judgments' own)."""

    values: tuple[float, ...] | None = None
    adjusted: bool = False
    label: str = "default"

    def resolve(self, levels: Sequence[str], default: Sequence[float]) -> np.ndarray:
        """Return the base gains for ``levels`` (highest first), before any adjustment.
        ValueError when the profile does not fit them: too few values, or LEVEL=gain naming
        a level they do not have or leaving one out."""
        if self.values is None:
            return np.asarray(default, dtype=float)
        if isinstance(self.values, dict):  # explicit LEVEL=gain
            unknown = [lv for lv in self.values if lv not in levels]
            if unknown:
                raise ValueError(
                    _(
                        "gain profile %(profile)s names level(s) %(unknown)s that the "
                        "judgments do not have (their levels: %(levels)s)"
                    )
                    % {
                        "profile": repr(self.label),
                        "unknown": ", ".join(unknown),
                        "levels": ", ".join(levels),
                    }
                )
            missing = [lv for lv in levels if lv not in self.values]
            if missing:
                raise ValueError(
                    _("gain profile %(profile)s gives no gain for level(s) %(missing)s")
                    % {"profile": repr(self.label), "missing": ", ".join(missing)}
                )
            return np.asarray([self.values[lv] for lv in levels], dtype=float)
        if len(self.values) < len(levels):
            raise ValueError(
                _(
                    "gain profile %(profile)s has %(n)s value(s) but there are %(levels_n)s "
                    "levels (%(levels)s)"
                )
                % {
                    "profile": repr(self.label),
                    "n": len(self.values),
                    "levels_n": len(levels),
                    "levels": ", ".join(levels),
                }
            )
        return np.asarray(self.values[: len(levels)], dtype=float)

    def per_question(
        self, base: np.ndarray, syn_q: np.ndarray, syn_xmax: np.ndarray, nq: int
    ) -> np.ndarray:
        """Gain matrix (questions x levels); rows differ only for ``adjusted`` profiles."""
        nlev = len(base)
        matrix = np.broadcast_to(base, (nq, nlev)).copy()
        if not self.adjusted or nq == 0:
            return matrix
        counts = np.zeros((nq, nlev + 1))
        np.add.at(counts, (syn_q, np.minimum(syn_xmax, nlev)), 1)
        counts = counts[:, :nlev]
        r = counts.sum(axis=1, keepdims=True)
        lower = np.append(base[1:], 0.0)
        with np.errstate(invalid="ignore", divide="ignore"):
            adj = base - (counts / np.where(r == 0, 1, r)) * (base - lower)
        apply = (counts != r) & (r > 0)
        return np.where(apply, adj, matrix)


def parse_gains(spec: str | None) -> GainProfile:
    """Parse ``3:2:1``, ``1:1:1``, ``10:5:1``, ``S=3,A=2,B=1``, ``adjusted`` or
    ``adjusted:10:5:1`` (adjusted on another base); None means the judgments' own gains."""
    if spec is None or spec.strip() in ("", "default"):
        return GainProfile()
    text = spec.strip()
    adjusted = False
    if text.lower().startswith("adjusted"):
        adjusted = True
        text = text[len("adjusted") :].lstrip(":")
        if not text:
            return GainProfile(None, True, spec.strip())
    if "=" in text:
        values: dict[str, float] = {}
        for part in text.split(","):
            m = re.fullmatch(rf"\s*([^=\s]+)\s*=\s*({_NUM})\s*", part)
            if not m:
                raise ValueError(
                    _("bad gain %(part)s in %(spec)s (expected LEVEL=number)")
                    % {"part": repr(part), "spec": repr(spec)}
                )
            what = _("gain of %(level)s") % {"level": repr(m.group(1))}
            values[m.group(1)] = check_gain(float(m.group(2)), what)
        return GainProfile(values, adjusted, spec.strip())  # type: ignore[arg-type]
    parts = text.split(":")
    if not all(re.fullmatch(_NUM, p.strip()) for p in parts):
        raise ValueError(
            _(
                "bad gain profile %(spec)s (expected e.g. 3:2:1, 1:1:1, 10:5:1, "
                "S=3,A=2,B=1 or adjusted)"
            )
            % {"spec": repr(spec)}
        )
    values_t = tuple(check_gain(float(p)) for p in parts)
    return GainProfile(values_t, adjusted, spec.strip())
