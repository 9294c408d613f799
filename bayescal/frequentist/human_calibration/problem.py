r"""The calibration problem (LLM cells, pooled human cells) and its optimisation chart.

Chart. The judge model is optimised over :math:`S = GF^\top` (G: K x (r+1), F: N x (r+1) with
centred columns, :math:`F = B_N\tilde F`), as the low-rank twin does. col(W) = col(F), so the
full-space human scores are :math:`s_h = F u` (u ∈ R^{r+1}) and the consensus ones
:math:`s_h = c\,F G^\top 1_K / K = c\,\mu_{code}` (μ_code = Sᵀ1_K/K, the authors' chart). The
raw vector is (vec G, vec F, b, u) and the chart coordinates ζ = (vec G, vec F̃, b, u),
raw = T ζ. The chart has exactly (r+1)² invariance directions
:math:`(G, F, u) \to (GA, FA^{-\top}, A^\top u)`; pseudo-inverses are taken on their complement.

Linear coefficients. With comparison features (``Comparisons.from_frame(features=...)``) each
LLM cell has the covariates :math:`z_c = (a_c, x_c)` (display order, when fitted, and the
feature differences) and judge k the coefficients :math:`(b_k, \beta_k)`, one row of the
K x m matrix ``coef``; the human comparisons gain :math:`\beta_h^\top x_t` with the humans'
own :math:`\beta_h`. The raw vector is (vec G, vec F, vec coef, β_h, u): the "b" block of
:attr:`Problem.sizes` holds every linear coefficient, so u stays last, and the human part's
own coordinates (what the calibration fits with θ fixed) are the last
:attr:`Problem.n_own` = F + d: (β_h, u). The abilities S, and so the calibration space M_θ,
are the judges' preferences at equal features (x_i = x_j): the judges' feature biases are
removed before their evidence enters the calibration.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from bayescal.basis import zero_sum_basis
from bayescal.data import Comparisons, DataError
from bayescal.dial import check_rank, check_space, n_free_parameters
from bayescal.identify import IdentificationError

__all__ = ["Point", "Problem", "problem"]


@dataclass(frozen=True)
class Problem:
    """LLM cells, human cells (coded on the same items), rank, space and the chart's layout.

    Attributes
    ----------
    llm : Comparisons
        The LLM judges' cells (:meth:`Comparisons.order_cells`: display orders pooled when
        ``order`` is False).
    human : Comparisons
        The human judges pooled into one, display orders pooled (one score vector s_h).
    rank, space, order
        r, the calibration basis (``consensus``: M = μ, ``full``: M = W) and whether b is fitted.
    """

    llm: Comparisons
    human: Comparisons
    rank: int
    space: str
    order: bool
    n_l: float = field(init=False)
    n_h: float = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "n_l", float(self.llm.count.sum()))
        object.__setattr__(self, "n_h", float(self.human.count.sum()))

    # LLM cells
    @property
    def k(self) -> NDArray[np.int64]:
        return self.llm.judge

    @property
    def i(self) -> NDArray[np.int64]:
        return self.llm.item_i

    @property
    def j(self) -> NDArray[np.int64]:
        return self.llm.item_j

    @cached_property
    def a(self) -> NDArray[np.float64]:
        return self.llm.order.astype(np.float64)

    @property
    def n(self) -> NDArray[np.float64]:
        return self.llm.count

    @property
    def y(self) -> NDArray[np.float64]:
        return self.llm.wins

    @property
    def y2(self) -> NDArray[np.float64]:
        return self.llm.wins_sq

    @property
    def n_feat(self) -> int:
        """Number of comparison features F (0 without features)."""
        return self.llm.n_features

    @property
    def m(self) -> int:
        """Linear coefficients per LLM judge: b_k (when fitted) and β_k."""
        return int(self.order) + self.n_feat

    @cached_property
    def z(self) -> NDArray[np.float64]:
        """Covariates z_c = (a_c, x_c) of the LLM cells (cells x m)."""
        cols = ([self.a[:, None]] if self.order else []) + (
            [self.llm.features] if self.n_feat else [])
        return np.column_stack(cols) if cols else np.zeros((self.k.size, 0))

    @cached_property
    def hx(self) -> NDArray[np.float64]:
        """Feature differences x_i - x_j of the human cells (cells x F)."""
        return self.human.features if self.n_feat else np.zeros((self.hi.size, 0))

    def llm_eta(self, pt: Point) -> NDArray[np.float64]:
        """η_c = S_ki − S_kj + z_cᵀ coef_k per LLM cell."""
        S = pt.S
        return S[self.k, self.i] - S[self.k, self.j] + np.einsum("cq,cq->c", self.z,
                                                                 pt.coef[self.k])

    def human_logit(self, s: NDArray[np.float64],
                    beta_h: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
        """d_t = s_i − s_j + β_hᵀ x_t per human cell (β_h = 0 when None)."""
        d = s[self.hi] - s[self.hj]
        return d if beta_h is None or not self.n_feat else d + self.hx @ beta_h

    # human cells
    @property
    def hi(self) -> NDArray[np.int64]:
        return self.human.item_i

    @property
    def hj(self) -> NDArray[np.int64]:
        return self.human.item_j

    @property
    def hn(self) -> NDArray[np.float64]:
        return self.human.count

    @property
    def hy(self) -> NDArray[np.float64]:
        return self.human.wins

    @property
    def hy2(self) -> NDArray[np.float64]:
        return self.human.wins_sq

    @property
    def items(self) -> tuple[str, ...]:
        return self.llm.items

    @property
    def judges(self) -> tuple[str, ...]:
        return self.llm.judges

    @property
    def K(self) -> int:
        return self.llm.n_judges

    @property
    def N(self) -> int:
        return self.llm.n_items

    @property
    def r1(self) -> int:
        return self.rank + 1

    @property
    def d(self) -> int:
        """Dimension of the calibration coefficient (1 consensus, r + 1 full)."""
        return 1 if self.space == "consensus" else self.r1

    @property
    def n_u(self) -> int:
        """Calibration coordinates in the chart (c for consensus, u ∈ R^{r+1} for full)."""
        return self.d

    @property
    def n_own(self) -> int:
        """The human part's own coordinates, last in ζ: β_h (F) and u (d)."""
        return self.n_feat + self.n_u

    @property
    def sizes(self) -> tuple[int, int, int, int]:
        """Lengths of vec G, vec F, the linear coefficients (vec coef: K x m, then β_h: F) and
        u in the raw vector."""
        return self.K * self.r1, self.N * self.r1, self.K * self.m + self.n_feat, self.n_u

    @property
    def n_zeta(self) -> int:
        """Chart dimension (vec G, vec F̃, b, u)."""
        nG, _, nb, nu = self.sizes
        return nG + (self.N - 1) * self.r1 + nb + nu

    @property
    def n_free_judges(self) -> int:
        """Free parameters of the judges' model, (r + 1)(K + N − r − 2) (+ K) (+ K F)."""
        return n_free_parameters(self.rank, self.K, self.N, self.order) + self.K * self.n_feat

    def with_human(self, count: NDArray[np.float64], wins: NDArray[np.float64],
                   wins_sq: NDArray[np.float64]) -> Problem:
        """The same problem with other human cell statistics (leave-one-out refits)."""
        human = replace(self.human, count=count, wins=wins, wins_sq=wins_sq,
                        n_rows=float(count.sum()))
        return Problem(self.llm, human, self.rank, self.space, self.order)

    @cached_property
    def chart(self) -> NDArray[np.float64]:
        """T with raw = T ζ, ζ = (vec G, vec F̃, b, u) and F = B_N F̃."""
        nG, nF, nb, nu = self.sizes
        T = np.zeros((nG + nF + nb + nu, self.n_zeta))
        T[:nG, :nG] = np.eye(nG)
        T[nG: nG + nF, nG: nG + (self.N - 1) * self.r1] = np.kron(zero_sum_basis(self.N),
                                                                  np.eye(self.r1))
        T[nG + nF:, nG + (self.N - 1) * self.r1:] = np.eye(nb + nu)
        return T

    def point(self, zeta: NDArray[np.float64]) -> Point:
        """The parameters at chart coordinates ζ."""
        return Point.of_raw(self.chart @ zeta, self)

    def zeta_of(self, G: NDArray[np.float64], F: NDArray[np.float64],
                coef: NDArray[np.float64], beta_h: NDArray[np.float64],
                u: NDArray[np.float64]) -> NDArray[np.float64]:
        """Chart coordinates of (G, F, coef, β_h, u) with centred F (F̃ = B_Nᵀ F)."""
        return np.concatenate([G.ravel(), (zero_sum_basis(self.N).T @ F).ravel(),
                               np.reshape(coef, -1), np.reshape(beta_h, -1), u])

    def human_scores(self, G: NDArray[np.float64], F: NDArray[np.float64],
                     u: NDArray[np.float64]) -> NDArray[np.float64]:
        """s_h = M c: c F Gᵀ1/K (consensus) or F u (full)."""
        if self.space == "consensus":
            return u[0] * (F @ G.sum(axis=0)) / self.K
        return F @ u

    def basis(self, G: NDArray[np.float64], F: NDArray[np.float64]) -> NDArray[np.float64]:
        """M in the chart: μ_code = F Gᵀ1/K as one column (consensus), or F (full)."""
        return (F @ G.sum(axis=0) / self.K)[:, None] if self.space == "consensus" else F

    def gauge(self, zeta: NDArray[np.float64]) -> tuple[NDArray[np.float64],
                                                        NDArray[np.float64]]:
        """Orthonormal bases (ζ coordinates) of the gauge directions and of their complement."""
        pt = self.point(zeta)
        r1 = self.r1
        B = zero_sum_basis(self.N)
        nG, _, nb, _ = self.sizes
        nFt = (self.N - 1) * r1
        dirs = []
        for e in np.eye(r1 * r1):
            E = e.reshape(r1, r1)
            v = np.zeros(self.n_zeta)
            v[:nG] = (pt.G @ E).ravel()
            v[nG: nG + nFt] = (-(B.T @ pt.F) @ E.T).ravel()
            if self.space == "full":
                v[nG + nFt + nb:] = E.T @ pt.u
            dirs.append(v)
        null, _ = np.linalg.qr(np.array(dirs).T)
        full, _ = np.linalg.qr(np.concatenate([null, np.eye(self.n_zeta)], axis=1))
        return null, full[:, r1 * r1:]


@dataclass(frozen=True)
class Point:
    """Parameters of the joint model at one chart point: S = G Fᵀ, the judges' linear
    coefficients ``coef`` (K x m: b_k when fitted, then β_k), the humans' β_h, the
    calibration u."""

    raw: NDArray[np.float64]
    G: NDArray[np.float64]
    F: NDArray[np.float64]
    coef: NDArray[np.float64]
    beta_h: NDArray[np.float64]
    u: NDArray[np.float64]
    order: bool

    @classmethod
    def of_raw(cls, raw: NDArray[np.float64], p: Problem) -> Point:
        nG, nF, nb, _ = p.sizes
        G = raw[:nG].reshape(p.K, p.r1)
        F = raw[nG: nG + nF].reshape(p.N, p.r1)
        start = nG + nF
        coef = raw[start: start + p.K * p.m].reshape(p.K, p.m)
        beta_h = raw[start + p.K * p.m: start + nb]
        return cls(raw, G, F, coef, beta_h, raw[start + nb:], p.order)

    @property
    def S(self) -> NDArray[np.float64]:
        return self.G @ self.F.T

    @property
    def b(self) -> NDArray[np.float64]:
        """Order effects b_k (zeros when not fitted)."""
        return self.coef[:, 0] if self.order else np.zeros(self.coef.shape[0])

    @property
    def beta(self) -> NDArray[np.float64]:
        """Judges' feature effects β_k (K x F)."""
        return self.coef[:, int(self.order):]


def problem(data: Comparisons, *, rank: int = 1, space: str = "consensus",
            order_effects: bool = True) -> Problem:
    """Validate one data set with its human judge(s) marked and split it into the two samples.

    Parameters
    ----------
    data : Comparisons
        Verdicts of LLM judges and of the judge(s) marked ``humans``; several human judges are
        pooled into one human score vector s_h (DIAL's single human "judge").
    rank, space, order_effects
        As in :func:`bayescal.frequentist.human_calibration.fit`.

    Raises
    ------
    DataError
        Not a Comparisons; no human judge marked (or only humans); an item only the humans
        compared; LLM verdicts without display order (with ``order_effects``).
    ValueError, IdentificationError
        A bad space; r out of range; fewer distinct human pairs than the calibration dimension
        d (Condition 4's necessary m_h ≥ d).
    """
    if not isinstance(data, Comparisons):
        raise DataError("data must be a Comparisons with the human judge(s) marked: "
                        "Comparisons.from_frame(df, humans=['human']) or "
                        "Comparisons.concat([llm, human], humans=['human'])")
    space = check_space(space)
    llm, human = data.calibration_cells(order_effects)
    rank = check_rank(rank, llm.n_judges, llm.n_items)
    p = Problem(llm, human, rank, space, order_effects)
    pairs = np.unique(p.hi * p.N + p.hj).size
    if pairs < p.d:
        raise IdentificationError(
            f"the human data compare {pairs} distinct pair(s) of items, fewer than the "
            f"calibration dimension d = {p.d} (space={space!r}): Condition 4 (rank(D_h M) = d) "
            "cannot hold. Add human comparisons of other pairs, or use space='consensus'.")
    return p


def require_fit_data(p: Problem) -> None:
    """The maximum-likelihood paths need n_h > 1 and an identifiable judges' model: as in the
    LLM-only twin, fewer LLM cells than the judges' model's free parameters cannot identify it
    (the Bayesian build lets the prior set the rest instead)."""
    if p.n_h <= 1:
        # GACV divides by n_h − 1
        raise DataError(
            f"the human data hold {p.n_h:g} verdict(s): the maximum-likelihood calibration "
            "needs more than one (GACV's variance term divides by n_h − 1). Add human "
            "comparisons.")
    if p.llm.n_cells < p.n_free_judges:
        raise IdentificationError(
            f"{p.llm.n_cells} LLM comparison cells for {p.n_free_judges} free parameters of the "
            f"judges' model (r = {p.rank}): it is not identified (DIAL Prop. B.2); lower the "
            "rank or add LLM comparisons")
