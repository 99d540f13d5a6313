"""Constant joint-space constraint rows of three kinds, and their forces over one step.

Row ``i`` is a joint-space direction ``G_i (n,)``; its force ``lambda_i`` [N or N m] acts on
the joints as ``G_i^T lambda_i``, and its velocity at the end of the step is
``w+ = G nu+ = v0 + h A lambda`` with ``v0 = G nu + h G a_free`` (the solve's free
accelerations ``a_free``), ``h`` the step and ``A = G M~^-1 G^T`` the rows' effective inverse
mass (see :mod:`.couplings`). By kind:

- **bilateral** (hard): ``w+ = target`` [m/s or rad/s] (joint couplings, tendon equalities);
- **unilateral** (hard): while ``engaged``, ``w+ >= target`` and ``lambda >= 0``, one of the
  two with equality (tendon limits); not engaged, ``lambda = 0``;
- **soft**: ``lambda = target - slope w+``, a force [N] linear in the end velocity with
  ``slope >= 0`` [N s/m] (the passive forces of tendons, taken at the end of the step). A soft
  row with a zero slope is an explicit force.

A hard row may have a ``compliance`` ``c >= 0`` [velocity per force; zero when absent]: its end
velocity then follows ``w+ = target - c lambda`` (MuJoCo's soft constraints: ``c = h R``, see
:func:`impedance`). The hard rows and the soft rows with a slope solve ``(h A + diag(c) +
diag(1/slope)) lambda = rhs``: symmetric positive definite, one small Cholesky. Which engaged
unilateral rows hold is found by a fixed number of primal-dual active-set passes
(``UNILATERAL_PASSES``): each solves with the current set, then keeps a row where ``lambda +
(target - w+ - c lambda) / (h A_ii + c) > 0`` (held rows whose force stays positive, free rows
whose end velocity would cross the target). With one unilateral row two passes are exact; the set of
a few rows converges in as many passes as rows change sides.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

UNILATERAL_PASSES = 4
"""The active-set passes of a solve with unilateral rows (a fixed amount of work)."""


class Rows(NamedTuple):
    """``r`` rows: ``jacobian G (r, n)``, ``target (r,)`` (end velocity of the hard rows, force of
    the soft ones), ``slope (r,)`` of the soft rows (zero on the others), ``engaged (r,)``
    (bool; whether a row acts: True on all but the unilateral rows away from their bound), and
    the static kinds ``soft`` and ``unilateral`` ``(r,)`` (NumPy bools); the ``compliance (r,)``
    of the hard rows (None: zero on every row)."""

    jacobian: jax.Array
    target: jax.Array
    slope: jax.Array
    engaged: jax.Array
    soft: np.ndarray
    unilateral: np.ndarray
    compliance: jax.Array | None = None

    @staticmethod
    def bilateral(jacobian: jax.Array, target: jax.Array) -> "Rows":
        """Hard bilateral rows ``G nu+ = target``."""
        count = jacobian.shape[0]
        flags = np.zeros(count, dtype=bool)
        return Rows(jacobian, target, jnp.zeros_like(target), jnp.ones(count, dtype=bool), flags, flags)

    def stack(self, other: "Rows") -> "Rows":
        """These rows followed by ``other``'s."""
        traced = [jnp.concatenate([a, b]) for a, b in zip(self[:4], other[:4])]
        compliance = None
        if self.compliance is not None or other.compliance is not None:
            compliance = jnp.concatenate([rows.compliance if rows.compliance is not None else jnp.zeros_like(rows.target) for rows in (self, other)])
        return Rows(*traced, np.concatenate([self.soft, other.soft]), np.concatenate([self.unilateral, other.unilateral]), compliance)


MIN_IMPEDANCE, MAX_IMPEDANCE = 1e-4, 0.9999
"""The range of an impedance (MuJoCo's ``mjMINIMP`` and ``mjMAXIMP``)."""


def impedance(solimp: jax.Array, violation: jax.Array) -> jax.Array:
    """MuJoCo's impedance ``d (r,)`` of rows at ``violation (r,)`` [m or rad] from their ``solimp
    (r, 5)`` ``(d0, d_width, width, midpoint, power)``: ``d0 + y(x) (d_width - d0)`` with ``x =
    min(|violation| / width, 1)`` and ``y`` the power-``power`` sigmoid through ``midpoint``,
    clipped to ``[MIN_IMPEDANCE, MAX_IMPEDANCE]``. A row of impedance ``d`` has MuJoCo's
    compliance ``R = (1 - d) / d w`` with ``w`` its approximate inverse mass (a model constant,
    MuJoCo's ``invweight0``): over a step of ``h``, the row compliance ``c = h R``."""
    low, high, width, mid, power = (solimp[:, k] for k in range(5))
    x = jnp.clip(jnp.abs(violation) / jnp.where(width > 0, width, 1.0), 0.0, 1.0)
    x = jnp.where(width > 0, x, 1.0)
    rising = x**power / mid ** (power - 1)
    falling = 1 - (1 - x) ** power / (1 - mid) ** (power - 1)
    return jnp.clip(low + jnp.where(x <= mid, rising, falling) * (high - low), MIN_IMPEDANCE, MAX_IMPEDANCE)


def solve_spd(A: jax.Array, b: jax.Array) -> jax.Array:
    """``A^-1 b`` for a small symmetric positive definite ``A (c, c)``: Cholesky unrolled over its
    static size, column by column (no LAPACK call: on CPU its call costs more than the solve of
    a few rows, and it batches on any device)."""
    size = A.shape[0]
    L = jnp.zeros_like(A)
    for j in range(size):
        column = A[:, j] - L @ L[j]
        L = L.at[:, j].set(jnp.where(jnp.arange(size) >= j, column, 0.0) / jnp.sqrt(column[j]))
    y = jnp.zeros_like(b)
    for i in range(size):
        y = y.at[i].set((b[i] - L[i] @ y) / L[i, i])
    x = jnp.zeros_like(b)
    for i in reversed(range(size)):
        x = x.at[i].set((y[i] - L[:, i] @ x) / L[i, i])
    return x


def row_forces(rows: Rows, effective: jax.Array, start: jax.Array, dt: jax.Array) -> jax.Array:
    """``lambda (r,)``: the rows' forces over a step of ``dt`` [s], from their effective inverse
    mass ``A (r, r)`` and free end velocity ``start = v0 (r,)`` (see the module docstring)."""
    dtype = start.dtype
    soft = jnp.asarray(rows.soft)
    explicit = soft & (rows.slope <= 0.0)
    slope = jnp.where(explicit | ~soft, 1.0, rows.slope)
    fixed = jnp.where(explicit, rows.target, 0.0)
    hA = dt * effective
    # A hard row that moves nothing (a tendon of zero coefficients) cannot act.
    moves = jnp.diag(hA) > 0.0
    if rows.compliance is not None:
        hA = hA + jnp.diag(jnp.where(soft, 0.0, rows.compliance))  # the hard rows' compliance, from here on
    system = hA + jnp.diag(jnp.where(soft & ~explicit, 1.0 / slope, 0.0))
    rhs = jnp.where(soft, rows.target / slope, rows.target) - start - hA @ fixed
    eye = jnp.eye(rows.target.shape[0], dtype=dtype)

    def forces(active: jax.Array) -> jax.Array:
        unknown = active & ~explicit
        matrix = jnp.where(unknown[:, None] & unknown[None, :], system, eye)
        return jnp.where(unknown, solve_spd(matrix, jnp.where(unknown, rhs, 0.0)), fixed)

    unilateral = jnp.asarray(rows.unilateral)
    engaged = rows.engaged & (soft | moves)
    if not rows.unilateral.any():
        return forces(engaged)
    # A first guess: the unilateral rows whose free end velocity crosses their target.
    active = engaged & (~unilateral | (rows.target > start))
    mass = 1.0 / jnp.where(engaged, jnp.diag(hA), 1.0)
    for _ in range(UNILATERAL_PASSES - 1):
        lam = forces(active)
        active = engaged & (~unilateral | (lam + (rows.target - start - hA @ lam) * mass > 0.0))
    return forces(active)
