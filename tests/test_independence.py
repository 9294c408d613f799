"""The conditional-independence test of the K-judge misclassification model (bayescal.independence)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from scipy.stats import binom, chi2_contingency

import bayescal as bc
from bayescal.frequentist import misclassification as mf
from bayescal.independence import ConditionalDependenceWarning, labelled_test


def _labels(rng: np.random.Generator, m: int, n: int, k: int, sigma: float) -> bc.Labels:
    """Y ~ Bern(0.4); judge logits ±1.5 by class plus sigma·z, z shared by the judges of an
    item (sigma = 0: conditionally independent)."""
    y = (rng.uniform(size=m + n) < 0.4).astype(int)
    z = rng.normal(size=(m + n, 1))
    logit = np.where(y[:, None] == 1, 1.5, -1.5) + sigma * z
    yhat = (rng.uniform(size=(m + n, k)) < 1 / (1 + np.exp(-logit))).astype(int)
    return bc.Labels.from_arrays(y[:m], yhat[:m], yhat[m:],
                                 judges=[f"j{i}" for i in range(k)])


def _cal(lab: bc.Labels) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    pat = lab.patterns()
    cal = ~pat.test
    return pat.yhat[cal], pat.y[cal], pat.count[cal]


@pytest.mark.parametrize("k", [2, 3])
def test_g2_equals_scipy_mutual_independence_per_class(k):
    """G² and df equal scipy's log-likelihood-ratio test of mutual independence on each human
    class's 2^K table, summed. Catches: expected counts from the pooled (not within-class)
    judge rates, a wrong df (e.g. 2^K - 1 per class), a missing factor 2."""
    lab = _labels(np.random.default_rng(1), 400, 10, k, 1.0)
    test = labelled_test(*_cal(lab))
    assert test is not None
    g2 = df = 0.0
    for cls in (0, 1):
        rows = lab.yhat_cal[lab.y_cal == cls].astype(int)
        table = np.zeros((2,) * k)
        np.add.at(table, tuple(rows.T), 1)
        res = chi2_contingency(table, correction=False, lambda_="log-likelihood")
        g2 += res.statistic
        df += res.dof
    assert test.g2 == pytest.approx(g2, rel=1e-12)
    assert test.df == df
    assert labelled_test(*_cal(_labels(np.random.default_rng(1), 50, 10, 1, 0.0))) is None


def test_size_inside_binomial_band_and_power_on_shared_errors():
    """Under conditional independence the bootstrap test rejects at level 0.05 within the
    99.9 % binomial band of 200 replicates (m = 50, K = 4: sparse, 32 cells); with an item
    effect shared by the judges (sigma = 2) it rejects most of the time. Catches: a
    bootstrap drawn from the wrong null (pooled rates: size far off), the χ² p-value used on
    sparse tables, a p-value that ignores the observed table."""
    rng = np.random.default_rng(20261203)
    reps = 200
    null = [labelled_test(*_cal(_labels(rng, 50, 5, 4, 0.0)), bootstrap=199).p_value
            for _ in range(reps)]
    rejections = int(np.sum(np.asarray(null) < 0.05))
    lo, hi = binom.ppf(0.0005, reps, 0.05), binom.ppf(0.9995, reps, 0.05)
    assert lo <= rejections <= hi, (rejections, lo, hi)
    alt = [labelled_test(*_cal(_labels(rng, 50, 5, 4, 2.0)), bootstrap=199).rejects
           for _ in range(40)]
    assert np.mean(alt) > 0.5


def test_twin_warns_on_dependent_judges_and_records_the_statistic():
    """The K-judge twin warns (naming the assumption, G², df, p and single-judge PPI++) on
    judges sharing an item effect, puts the statistic in info, and stays silent on
    conditionally independent judges. Catches: the test computed but never warned, the
    warning on every multi-judge fit, info missing the statistic."""
    dep = _labels(np.random.default_rng(3), 200, 800, 3, 2.5)
    with pytest.warns(ConditionalDependenceWarning, match=r"G² = .* df, bootstrap p .*ppi_plus_plus"):
        est = mf.fit(dep)
    assert est.info["independence_p_value"] < 0.01
    assert est.info["independence_df"] == 2 * (2**3 - 1 - 3)
    ind = _labels(np.random.default_rng(4), 200, 800, 3, 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConditionalDependenceWarning)
        est = mf.fit(ind)
    assert est.info["independence_p_value"] > 0.01
    assert "independence_g2" not in mf.fit(ind, judges=["j0"]).info


def test_pymc_model_warns_as_the_twin_does():
    """build() runs the same test on the same labelled patterns: it warns on dependent judges
    and not on independent ones. Catches: the PyMC path printing intervals silently."""
    from bayescal.models import misclassification as mm

    with pytest.warns(ConditionalDependenceWarning, match="G² = "):
        mm.build(_labels(np.random.default_rng(3), 200, 800, 3, 2.5))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConditionalDependenceWarning)
        mm.build(_labels(np.random.default_rng(4), 200, 800, 3, 0.0))
