"""Score calibration of seed 003: streaming quantile matching, its baselines and the protocol.

Every calibrator follows one streaming interface (:class:`Calibrator`): ``update(judge, human)``
one anchor at a time, ``fit(judge, human)`` on arrays (equal to updating anchor by anchor),
``predict(judge)``, and a small JSON state through ``to_dict`` / :func:`from_dict`.
"""

from bayescal.calibration.base import Calibrator, NoAnchorsWarning, from_dict
from bayescal.calibration.sqm import SQM, PredictiveSQM

__all__ = ["SQM", "Calibrator", "NoAnchorsWarning", "PredictiveSQM", "from_dict"]
