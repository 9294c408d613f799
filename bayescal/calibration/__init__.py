"""Score calibration: streaming quantile matching, its baselines and the protocol.

Subasic, Rabinovich & Chen (2026), arXiv:2611.00447. The mathematics and the numbered conventions
that docstrings here cite as "card, convention N" are in ``models/score_calibration.md``.

Every calibrator follows one streaming interface (:class:`Calibrator`): ``update(judge, human)``
one anchor at a time, ``fit(judge, human)`` on arrays (equal to updating anchor by anchor),
``predict(judge)``, and a small JSON state through ``to_dict`` / :func:`from_dict`. Before any
anchor ``predict`` is the identity and warns (:class:`NoAnchorsWarning`).
"""

from bayescal.calibration.base import Calibrator, NoAnchorsWarning, from_dict
from bayescal.calibration.baselines import (
    SDKDE,
    BayesianUpdate,
    Conformal,
    ContrastiveRollout,
    CrossEntropyMatching,
    DawidSkene,
    FewShot,
    Isotonic,
    MedianScaling,
    Platt,
    Raw,
    SlicedWassersteinOT,
    StreamingLinear,
)
from bayescal.calibration.p2 import ContinuousSQM, P2Quantiles
from bayescal.calibration.sqm import SQM, PredictiveSQM

__all__ = [
    "SDKDE",
    "SQM",
    "BayesianUpdate",
    "Calibrator",
    "Conformal",
    "ContinuousSQM",
    "ContrastiveRollout",
    "CrossEntropyMatching",
    "DawidSkene",
    "FewShot",
    "Isotonic",
    "MedianScaling",
    "NoAnchorsWarning",
    "P2Quantiles",
    "Platt",
    "PredictiveSQM",
    "Raw",
    "SlicedWassersteinOT",
    "StreamingLinear",
    "from_dict",
]
