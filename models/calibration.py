"""Calibrate a performance model: fit its free parameters to measured points, with their uncertainty.

Two models: the transfer-size sweep X(s) = s / (t0 + s/B), the smooth form of the I/O
roofline, and Gunther's Universal Scalability Law over node (or process) counts.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import sympy as sp
from scipy import optimize

from probes.core.errors import InputError
from probes.core.stats import t_quantile

__all__ = ["TRANSFER_SIZE", "USL", "Estimate", "Fit", "Law", "fit", "usl", "usl_peak"]


@dataclass(frozen=True)
class Law:
    """A model y = f(x; parameters): its symbols, their units, the formula, a first guess and bounds.

    ``formula`` is sympy text in the symbol ``x_name`` and the ``parameters``; the function and
    its derivatives are made from it, so the text shown is the function fitted. ``guess(x, y)``
    gives starting values; ``lower`` and ``upper`` bound each parameter.
    """

    name: str
    x_name: str
    x_unit: str
    y_unit: str
    parameters: tuple[str, ...]
    units: tuple[str, ...]
    formula: str
    guess: Callable[[np.ndarray, np.ndarray], tuple[float, ...]]
    lower: tuple[float, ...]
    upper: tuple[float, ...]

    @functools.cached_property
    def expression(self) -> sp.Expr:
        """The formula as a sympy expression."""
        names = (self.x_name, *self.parameters)
        return sp.sympify(self.formula, locals={name: sp.Symbol(name) for name in names})

    @functools.cached_property
    def _functions(self) -> tuple[Callable, ...]:
        symbols = sp.symbols((self.x_name, *self.parameters))
        parts = [self.expression] + [sp.diff(self.expression, p) for p in symbols[1:]]
        return tuple(sp.lambdify(symbols, part, "numpy") for part in parts)

    def __call__(self, x, *params: float) -> np.ndarray:
        """The model's y at ``x`` for the given parameter values."""
        x = np.asarray(x, dtype=float)
        return np.broadcast_to(self._functions[0](x, *params), x.shape).astype(float)

    def gradient(self, x, *params: float) -> np.ndarray:
        """The derivatives of y with respect to each parameter at ``x``: shape (len(x), number of parameters)."""
        x = np.atleast_1d(np.asarray(x, dtype=float))
        return np.column_stack([np.broadcast_to(d(x, *params), x.shape) for d in self._functions[1:]])


@dataclass(frozen=True)
class Estimate:
    """A fitted parameter in canonical units (``unit``): value, standard error and 95 % confidence interval.

    The interval is value +- t * stderr, cut to the parameter's bounds (an overhead is never negative).
    """

    value: float
    stderr: float
    low: float
    high: float
    unit: str


@dataclass(frozen=True)
class Fit:
    """A model fitted to n points: the estimates, the fit's quality and what it can predict.

    ``r_squared`` is 1 - SS_res / SS_tot on y itself (nan if every y is equal, below 0 if a flat line
    fits better). ``rmse`` and ``residuals`` are relative, (y - fitted) / y, the scale the fit minimises;
    ``scatter`` is the relative standard deviation of one point (of weight 1) about the curve.
    """

    model: Law
    parameters: Mapping[str, Estimate]
    r_squared: float
    rmse: float
    scatter: float
    residuals: tuple[float, ...]
    dof: int
    n: int
    x_range: tuple[float, float]
    covariance: np.ndarray = field(compare=False, repr=False)

    @property
    def values(self) -> tuple[float, ...]:
        """The estimates' values in the model's parameter order."""
        return tuple(e.value for e in self.parameters.values())

    def predict(self, x, *, observation: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The model's value at ``x`` and its 95 % interval from the delta method (gradient . covariance . gradient).

        With ``observation`` the interval is for one new measurement: the fit's relative scatter is added.
        Both laws give a throughput, so the interval is cut at 0: a negative rate is no rate.
        """
        x = np.atleast_1d(np.asarray(x, dtype=float))
        value, g = self.model(x, *self.values), self.model.gradient(x, *self.values)
        variance = np.einsum("ij,jk,ik->i", g, self.covariance, g)
        if observation:
            variance = variance + (self.scatter * value) ** 2
        half = t_quantile(self.dof) * np.sqrt(variance)
        return value, np.maximum(value - half, 0.0), value + half

    def extrapolates(self, x) -> np.ndarray:
        """Whether each ``x`` lies outside the measured range, where a prediction rests on the formula alone."""
        x = np.asarray(x, dtype=float)
        return (x < self.x_range[0]) | (x > self.x_range[1])


def fit(model: Law, x, y, *, weights=None, source: str = "measurements") -> Fit:
    """Fit ``model`` to the points (x, y) by least squares on relative residuals (fitted - y) / y.

    Relative residuals (a weight of 1/y) make a 100 MiB/s point count as much as a 10 GiB/s one.
    Repeated measurements at one x are separate points. ``weights`` (positive, one per point)
    multiply the squared residuals, e.g. the number of repetitions a mean stands for.
    ``source`` names where the points come from, for error messages.

    Raises
    ------
    InputError
        Too few points, a non-positive or non-finite value, or a fit that does not converge.
    """
    fail = functools.partial(InputError, source, model.name)
    x, y = (np.asarray(v, dtype=float).ravel() for v in (x, y))
    w = np.ones_like(y) if weights is None else np.asarray(weights, dtype=float).ravel()
    if not x.size == y.size == w.size:
        raise fail(f"x, y and weights must have one value per point. Got {x.size}, {y.size} and {w.size}.")
    for label, values in ((model.x_name, x), ("the measured values", y), ("the weights", w)):
        bad = values[~(np.isfinite(values) & (values > 0))]
        if bad.size:
            raise fail(f"{label} must be positive and finite. Got {bad[0]!r}.")
    p = len(model.parameters)
    if y.size < p + 1:
        raise fail(f"{p} parameters need at least {p + 1} points to estimate their uncertainty. Got {y.size}.")
    if np.unique(x).size < p:
        raise fail(f"{p} parameters need at least {p} distinct values of {model.x_name}. Got {np.unique(x).size}.")
    root_w = np.sqrt(w)
    start = np.clip(model.guess(x, y), model.lower, model.upper)
    result = optimize.least_squares(
        lambda q: root_w * (model(x, *q) - y) / y, start,
        jac=lambda q: (root_w / y)[:, None] * model.gradient(x, *q),
        bounds=(model.lower, model.upper), method="trf", x_scale="jac", ftol=1e-14, xtol=1e-14, gtol=1e-14)
    if not result.success:
        raise fail(f"the fit did not converge: {result.message}")
    dof = y.size - p
    # Columns scaled to length 1 first, so that t0 ~ 1e-4 s beside B ~ 1e8 B/s does not look singular.
    norms = np.linalg.norm(result.jac, axis=0)
    try:
        unscaled = np.linalg.inv((result.jac / norms).T @ (result.jac / norms)) / np.outer(norms, norms)
    except np.linalg.LinAlgError:
        raise fail("the points do not determine every parameter (the fit's Jacobian is singular)") from None
    variance = 2 * result.cost / dof  # of one relative residual of weight 1
    covariance = variance * unscaled
    stderr = np.sqrt(np.diag(covariance))
    half = t_quantile(dof) * stderr  # two-sided 95 %
    low, high = np.maximum(result.x - half, model.lower), np.minimum(result.x + half, model.upper)
    fitted = model(x, *result.x)
    relative = (y - fitted) / y
    spread = np.sum((y - y.mean()) ** 2)
    estimates = {name: Estimate(*map(float, numbers), unit)
                 for name, *numbers, unit in zip(model.parameters, result.x, stderr, low, high, model.units)}
    return Fit(model, estimates, r_squared=float(1 - np.sum((y - fitted) ** 2) / spread) if spread > 0 else math.nan,
               rmse=float(np.sqrt(np.mean(relative**2))), scatter=math.sqrt(variance),
               residuals=tuple(map(float, relative)), dof=dof, n=y.size, x_range=(float(x.min()), float(x.max())),
               covariance=covariance)


def _linear_form(x, y, columns) -> np.ndarray:
    """The coefficients c of x / y = columns . c, fitted in relative terms: both models' linear form."""
    design = np.column_stack([np.broadcast_to(c, x.shape) for c in columns]) * (y / x)[:, None]
    return np.linalg.lstsq(design, np.ones_like(x), rcond=None)[0]


def _transfer_guess(s, throughput) -> tuple[float, float]:
    """s / X = t0 + s / B is a straight line in s; its fit starts the search."""
    t0, inverse_b = _linear_form(s, throughput, (1.0, s))
    return t0, (1 / inverse_b if inverse_b > 0 else float(throughput.max()))


def _usl_guess(n, throughput) -> tuple[float, float, float]:
    """N / X = (1 + sigma (N-1) + kappa N (N-1)) / lam is a quadratic in N; its fit starts the search."""
    a, b, c = _linear_form(n, throughput, (1.0, n - 1, n * (n - 1)))
    return (1 / a, b / a, c / a) if a > 0 else (float(np.max(throughput / n)), 0.0, 0.0)


TRANSFER_SIZE = Law(
    name="transfer-size sweep", x_name="s", x_unit="B", y_unit="B/s",
    parameters=("t0", "B"), units=("s", "B/s"), formula="s / (t0 + s / B)",
    guess=_transfer_guess, lower=(0.0, 0.0), upper=(math.inf, math.inf))


def usl(rate_unit: str = "B/s") -> Law:
    """Gunther's Universal Scalability Law for throughput in ``rate_unit`` (B/s or op/s) over N nodes."""
    return Law(
        name="universal scalability law", x_name="N", x_unit="", y_unit=rate_unit,
        parameters=("lam", "sigma", "kappa"), units=(rate_unit, "", ""),
        formula="lam * N / (1 + sigma * (N - 1) + kappa * N * (N - 1))",
        guess=_usl_guess, lower=(0.0, 0.0, 0.0), upper=(math.inf, 1.0, math.inf))


USL = usl()


def usl_peak(result: Fit) -> float:
    """The node count where a USL fit peaks, sqrt((1 - sigma) / kappa).

    Infinite when kappa's 95 % interval reaches 0: the points show no coherency delay, so no peak.
    """
    sigma, kappa = result.parameters["sigma"], result.parameters["kappa"]
    return math.sqrt((1 - sigma.value) / kappa.value) if kappa.low > 0 else math.inf
