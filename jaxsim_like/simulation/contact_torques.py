"""Torsional and rolling friction: a contact's torque about its normal and across it (MuJoCo's
condim 4 and 6), linearly implicit.

At a touching contact with normal force ``f_n``, normal ``n`` and the angular velocity ``w`` of
the link (terrain) or of link a relative to link b (pairs), world axes, the torque on the link
(on a; b gets the opposite) is a pure couple, in two parts bounded each by its coefficient [m]:

- torsional, about the normal: ``tau_n = -a_n (n . w)`` with ``|tau_n| <= torsion f_n``;
- rolling, across the normal: ``tau_r = -a_r w_r``, ``w_r = w - (n . w) n``, with
  ``|tau_r| <= rolling f_n``;

each a damper of slope ``a = bound / max(|w|, STICK_SPEED)``: the full bound, opposing the
motion, while it turns faster than :data:`STICK_SPEED` (as MuJoCo's saturated friction
dimensions), a viscous stick below it. The slope is at most ``I_p / (n h)``, for ``I_p`` a lower
bound of the rotational inertia the couple moves, ``h`` the step and ``n`` the touching contacts
of the slot's link (of a contact between links, the larger count of its two links' contacts
with other links): the stick of a link's contacts together is no stiffer than its own inertia
over a step, since the contacts between links are solved by a few block Gauss-Seidel sweeps
(:mod:`.world`), which a coupling much stiffer than the bodies it couples keeps from converging
(two bodies then buzz against each other).

The step takes the torque at its end, ``step_torques - resist(w+ - w)`` (a secant
linearisation, as the tangential force's while it slides, see
:class:`.contacts.ImplicitContacts`): it slows the turning down to rest and never reverses it
(where the cap binds, a stopping link loses about half its turning per step). Where the link
turns fast enough that the torque impulses of its touching contacts cannot stop it within the
step (``2 sum_L bound h <= I_p |w|``), the torque keeps the exact bound along the motion
(blended linearly from ``sum_L bound h = I_p |w|``, as the sliding force's ``fast``). At rest
under a load torque ``tau`` below the bound the stick creeps at ``tau / a``: at most
:data:`STICK_SPEED`, or ``tau n h / I_p`` where the cap binds; without a load it stays at rest.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from ..dynamics import spatial

STICK_SPEED = 1e-3
"""[rad/s]: the turning speed below which torsional and rolling friction are a viscous stick
(the creep under a load torque below the bound is at most this speed)."""


class ImplicitTorques(NamedTuple):
    """The torques of a linearly implicit step at the slots ``(S, ...)`` (see the module
    docstring): the torque at the end of the step is ``step_torques - resist(w+ - w)`` [N m],
    the matrix ``rolling I + normal_excess n n^T + sliding_excess t t^T`` [N m s] (``(S,)``
    each, ``n`` the ``normal (S, 3)``, ``t`` the rolling ``direction (S, 3)``; zero where not
    touching), symmetric positive semi-definite."""

    step_torques: jax.Array
    rolling: jax.Array
    normal_excess: jax.Array
    sliding_excess: jax.Array
    normal: jax.Array
    direction: jax.Array

    def resist(self, angular: jax.Array) -> jax.Array:
        """``matrix @ angular`` [N m] for angular velocities ``(S, 3)`` [rad/s]."""
        n, t = self.normal, self.direction
        return (self.rolling[:, None] * angular + (self.normal_excess * spatial.dot(n, angular))[:, None] * n
                + (self.sliding_excess * spatial.dot(t, angular))[:, None] * t)

    @property
    def matrices(self) -> jax.Array:
        """The matrices ``(S, 3, 3)`` [N m s], assembled (for the links' added inertias)."""
        n, t = self.normal, self.direction
        return (self.rolling[:, None, None] * jnp.eye(3, dtype=n.dtype) + self.normal_excess[:, None, None] * n[:, :, None] * n[:, None, :]
                + self.sliding_excess[:, None, None] * t[:, :, None] * t[:, None, :])


def _fast(bound: jax.Array, speed: jax.Array, inertia: jax.Array, dt: jax.Array, link_totals: Any) -> jax.Array:
    """``(S,)`` in [0, 1]: how far the torque impulses of a link's touching slots fall short of
    stopping its turning at ``speed (S,)`` within the step (0: they stop it; 1: less than half)."""
    impulse = link_totals(bound * dt)
    ratio = inertia * speed / jnp.where(impulse > 0, impulse, 1.0)
    return jnp.where((impulse > 0) & (speed > STICK_SPEED), jnp.clip(ratio - 1, 0.0, 1.0), 0.0)


def implicit_torques(
    torsion: jax.Array | None,
    rolling: jax.Array | None,
    normal_force: jax.Array,
    normal: jax.Array,
    angular: jax.Array,
    inertia: jax.Array,
    dt: jax.Array,
    link_totals: Any,
    counts: jax.Array | None = None,
) -> ImplicitTorques:
    """The :class:`ImplicitTorques` of slots with coefficients ``torsion`` and ``rolling`` [m]
    (``(S,)`` or scalars; None: 0), ``normal_force (S,)`` [N] (zero where not touching),
    ``normal (S, 3)``, the ``angular (S, 3)`` velocity [rad/s] the torque opposes, ``inertia (S,)``
    [kg m^2] a lower bound of the rotational inertia it moves (0: no torque), a step of ``dt`` [s],
    ``link_totals`` (per-slot values ``(S,)`` summed over each slot's link, ``(S,)``) and the
    touching contacts ``counts (S,)`` that share the cap of each slot's slope (None: those of its
    link, by ``link_totals``)."""
    dtype = normal.dtype
    zero = jnp.zeros((), dtype)
    torsion = zero if torsion is None else jnp.maximum(jnp.asarray(torsion, dtype), 0.0)
    rolling = zero if rolling is None else jnp.maximum(jnp.asarray(rolling, dtype), 0.0)
    f_n = jnp.maximum(normal_force, 0.0)
    spin = spatial.dot(normal, angular)
    roll = angular - spin[:, None] * normal
    spin_speed, roll_speed = jnp.abs(spin), spatial.safe_norm(roll)
    spin_bound, roll_bound = torsion * f_n, rolling * f_n
    if counts is None:
        counts = link_totals(jnp.where(f_n > 0, 1.0, 0.0).astype(dtype))
    cap = inertia / (dt * jnp.maximum(counts, 1.0))
    spin_slope = jnp.minimum(spin_bound / jnp.maximum(spin_speed, STICK_SPEED), cap)
    roll_slope = jnp.minimum(roll_bound / jnp.maximum(roll_speed, STICK_SPEED), cap)
    direction = roll / jnp.where(roll_speed > 0, roll_speed, 1.0)[:, None]
    spin_fast = _fast(spin_bound, spin_speed, inertia, dt, link_totals)
    roll_fast = _fast(roll_bound, roll_speed, inertia, dt, link_totals)
    step_torques = -(spin_slope * spin)[:, None] * normal - roll_slope[:, None] * roll
    return ImplicitTorques(step_torques, roll_slope, (1 - spin_fast) * spin_slope - roll_slope, -roll_fast * roll_slope, normal, direction)


def couple_inertias(matrices: jax.Array) -> jax.Array:
    """``(S, 6, 6)``: the spatial matrices (world axes, any origin) that the 3x3 ``matrices (S, 3,
    3)`` acting on a link's angular velocity put on it (its angular block)."""
    blank = jnp.zeros_like(matrices)
    return jnp.concatenate([jnp.concatenate([blank, blank], axis=-1), jnp.concatenate([blank, matrices], axis=-1)], axis=-2)
