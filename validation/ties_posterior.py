"""Ties on Chatbot Arena: NUTS posterior interval widths of the half-win and Davidson models
against an Arena-style bootstrap, in the judge-discrimination and the order-effect BTL.

Data: the human verdicts of the Chatbot Arena conversations used by Chatzi, Straitouri,
Thejaswi, Gomez-Rodriguez (2024, arXiv:2402.17826), loaded as in ``validation/ties_arena.py``
(both tie kinds read as a tie; the ``--models`` most-compared models). One judge, the human
voters: in the judge-discrimination BTL γ ≡ 1; in the order-effect BTL (DIAL's model (1)) the
voters have their own first-position effect b (``model_a`` was shown first on every row) and,
with Davidson ties, one ν.

For each of the four fits (two models x two tie models) the 95 % central posterior interval of
every sum-zero ability (NUTS with the default priors) is divided by the percentile interval
(2.5 %, 97.5 %) of an Arena-style bootstrap of the same model's twin MLE (verdicts resampled
with replacement, B refits). The twin's Wald interval (its default covariance: the sandwich for
the half-win model on tied data, the expected information for Davidson's) is shown beside it.
Printed: the median and range over models of each width ratio.

Run::

    python validation/ties_posterior.py --data ROOT           # B = 200, 2 x 1000 draws
    python validation/ties_posterior.py --data ROOT --quick   # 6 models, B = 20, 2 x 300 draws

The full run takes a few minutes on two shared cores (four NUTS compiles, 800 twin refits).
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import ties_arena  # noqa: E402

from bayescal.data import Comparisons  # noqa: E402

_Z = 1.959963984540054
FITS = (("judge_discrimination_btl", "half"), ("judge_discrimination_btl", "davidson"),
        ("order_effect_btl", "half"), ("order_effect_btl", "davidson"))


def _data(df: pd.DataFrame) -> Comparisons:
    # model_a was displayed first on every Arena battle
    return Comparisons.from_frame(df.assign(order=1))


def _abilities(values: np.ndarray) -> np.ndarray:
    """The items' abilities of a fit: the one judge's row in the order-effect model."""
    return values[0] if values.ndim == 2 else values


def _twin(model: str, ties: str, data: Comparisons, information: str = "auto"):
    from bayescal import registry

    return registry.get(model).fit(data, ties=ties, information=information)


def _posterior_width(model: str, ties: str, data: Comparisons, draws: int, seed: int
                     ) -> np.ndarray:
    from bayescal import fit, registry

    pm_model = registry.get(model).build(data, ties=ties)
    post = fit(pm_model, "nuts", draws=draws, tune=draws, chains=2, random_seed=seed,
               progressbar=False)
    ability = post["posterior"]["ability"]
    lo, hi = (ability.quantile(q, dim=("chain", "draw")).values for q in (0.025, 0.975))
    return _abilities(hi - lo)


def run(argv: list[str] | None = None) -> dict[str, dict[str, np.ndarray]]:
    """Parse ``argv``, print the table and return, per fit, the width ratios over models."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=None, help="data root (or BAYESCAL_DATA)")
    parser.add_argument("--models", type=int, default=None,
                        help="most-compared models kept (10; 6 with --quick)")
    parser.add_argument("--boot", type=int, default=None,
                        help="bootstrap resamples B (200; 20 with --quick)")
    parser.add_argument("--draws", type=int, default=None,
                        help="NUTS draws and tuning steps per chain (1000; 300 with --quick)")
    parser.add_argument("--quick", action="store_true", help="smoke size")
    parser.add_argument("--seed", type=int, default=20261204)
    args = parser.parse_args(argv)
    root = args.data or (Path(os.environ["BAYESCAL_DATA"]) if "BAYESCAL_DATA" in os.environ
                         else None)
    if root is None:
        parser.error("give --data ROOT or set BAYESCAL_DATA")
    n_models = args.models or (6 if args.quick else 10)
    boot = args.boot or (20 if args.quick else 200)
    draws = args.draws or (300 if args.quick else 1000)
    df = ties_arena.load(root, n_models)
    data = _data(df)
    ties = float(np.mean(df.outcome == 0.5))
    print(f"{len(df)} human verdicts among {n_models} models, {ties:.1%} ties; B = {boot}, "
          f"NUTS 2 x {draws} draws")
    rng = np.random.default_rng(args.seed)
    samples = [rng.integers(0, len(df), len(df)) for _ in range(boot)]
    out: dict[str, dict[str, np.ndarray]] = {}
    print(f"{'model':<26} {'ties':<9} {'interval':<18} {'width / bootstrap: median':>26} "
          f"{'min':>6} {'max':>6}")
    for f, (model, tie) in enumerate(FITS):
        est = _twin(model, tie, data)
        n = data.n_items
        wald = 2 * _Z * _abilities(np.sqrt(np.diag(est.cov))[:n].reshape(-1, n)[0])
        draws_b = np.array([_abilities(_twin(model, tie, _data(df.iloc[idx]),
                                             "expected").params["ability"].values)
                            for idx in samples])
        width = np.diff(np.percentile(draws_b, [2.5, 97.5], axis=0), axis=0)[0]
        post = _posterior_width(model, tie, data, draws, args.seed + f)
        key = f"{model} {tie}"
        out[key] = {"posterior": post / width, "wald": wald / width}
        for name, label in (("posterior", "NUTS posterior"),
                            ("wald", f"Wald ({est.info['information']})")):
            r = out[key][name]
            print(f"{model:<26} {tie:<9} {label:<18} {np.median(r):>26.3f} {r.min():>6.3f} "
                  f"{r.max():>6.3f}", flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    run(argv)
    return 0


if __name__ == "__main__":
    sys.exit(main())
