"""Coverage of the ordinal calibration map's central predictive sets.

Data: the package's simulator (``bayescal.simulate.score_calibration``, its default truth: a
5-point scale, cutpoints spread ±3, level step 1.2, judge levels uniform). For each data set of
n anchors, each predictive distribution and each set rule, the expected coverage of a new item
of a uniform judge level is Σ_h p(h) w(h) with the true p (w: the rule's inclusion
probability, :mod:`bayescal.predictive`); the table gives its mean over data sets with a 99 %
band (± 2.58 sd/√R), the mean predictive mass the rule claims, and the mean set size (levels).

Predictive distributions: the MAP plug-in (the twin's ``penalized-mle``), the MLE plug-in (on
the data sets where it exists), and the posterior predictive
(``frequentist.score_calibration.posterior_predictive``: the model's posterior mean of
``calibrated_probability`` by importance sampling). Rules: ``randomised`` (mass exactly prob)
and ``conservative`` (every level the randomised set may keep).

Run::

    python validation/score_calibration_sets.py            # n = 30 (300 sets), n = 300 (100)
    python validation/score_calibration_sets.py --quick    # n = 30 only, 80 sets
"""

from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np
import pandas as pd
from scipy.special import expit

from bayescal import simulate
from bayescal.frequentist import MLEBoundaryError
from bayescal.frequentist import score_calibration as scf
from bayescal.predictive import inclusion


class _Priors:
    """models.score_calibration.Priors() (kept here so that this script does not import PyMC)."""

    cutpoint_sd = 3.0
    gap_log_sd = 1.0
    increment_log_mean = -0.5
    increment_log_sd = 1.5


def coverage(n: int, reps: int, seed: int, prob: float = 0.8) -> pd.DataFrame:
    rng = np.random.default_rng([seed, n])
    rows = []
    for rep in range(reps):
        data, truth = simulate.score_calibration(n, random_seed=int(rng.integers(2**31)))
        cdf = expit(truth["cutpoint"].values[None, :] - truth["level_effect"].values[:, None])
        true = np.diff(np.c_[np.zeros(len(cdf)), cdf, np.ones(len(cdf))], axis=1)
        preds = {"MAP plug-in": scf.probabilities(scf.fit(data, penalty=_Priors()).info["free"])}
        try:
            preds["MLE plug-in"] = scf.probabilities(scf.fit(data).info["free"])
        except (MLEBoundaryError, ValueError):  # no interior MLE on this data set
            pass
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            preds["posterior predictive"], ess = scf.posterior_predictive(
                data, priors=_Priors(), draws=1000, random_seed=int(rng.integers(2**31)))
        for name, p in preds.items():
            w = inclusion(p, prob)
            for rule, keep in (("randomised", w), ("conservative", (w > 0).astype(float))):
                rows.append({"n": n, "predictive": name, "rule": rule, "rep": rep,
                             "coverage": np.mean(np.sum(true * keep, axis=1)),
                             "claimed": np.mean(np.sum(p * keep, axis=1)),
                             "size": np.mean(np.sum(keep, axis=1)),
                             "ess": ess if name == "posterior predictive" else np.nan,
                             "low_ess": bool(caught) if name == "posterior predictive" else False})
    return pd.DataFrame(rows)


def table(rows: pd.DataFrame) -> pd.DataFrame:
    g = rows.groupby(["n", "predictive", "rule"], sort=False)
    out = g[["coverage", "claimed", "size"]].mean()
    out["band"] = 2.58 * g["coverage"].std(ddof=1) / np.sqrt(g.size())
    out["data_sets"] = g.size()
    out["median_ess"] = g["ess"].median()
    return out


def run(argv: list[str] | None = None) -> pd.DataFrame:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="n = 30 only, 80 data sets")
    args = parser.parse_args(argv)
    plan = [(30, 80)] if args.quick else [(30, 300), (300, 100)]
    rows = pd.concat([coverage(n, reps, 2026) for n, reps in plan], ignore_index=True)
    out = table(rows)
    pd.set_option("display.width", 200)
    print("central 80 % predictive sets, simulate.score_calibration default truth")
    print(out.to_string(float_format=lambda v: f"{v:.3f}"))
    return out


if __name__ == "__main__":
    run(sys.argv[1:])
