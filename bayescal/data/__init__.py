"""Validated, integer-coded, cell-aggregated inputs.

Every model and twin in bayescal sees data through these containers: they validate the user's
frame before anything is fitted (a :class:`DataError` names the row, column or label and the
fix), code labels as integers while keeping the labels as coordinates, and reduce raw rows to
sufficient statistics so that fitting cost does not grow with the number of raw rows. The
reductions (cells, label patterns, rating counts) are methods of the containers, so that the
PyMC models and their frequentist twins read the same statistics without importing each other.

Modules: :mod:`~bayescal.data.normalize` (label normalisation, column checks, errors),
:mod:`~bayescal.data.comparisons`, :mod:`~bayescal.data.labels`, :mod:`~bayescal.data.ratings`.
"""

from bayescal.data.comparisons import Comparisons
from bayescal.data.labels import Labels, positive_coding
from bayescal.data.normalize import DataError, LabelNormalizationWarning
from bayescal.data.ratings import Ratings

__all__ = ["Comparisons", "DataError", "LabelNormalizationWarning", "Labels", "Ratings",
           "positive_coding"]
