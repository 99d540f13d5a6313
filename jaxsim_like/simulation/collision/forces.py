"""The contact law of collision pairs and its linearly implicit form.

At a slot with depth ``d``, normal ``n`` (from b towards a) and the velocity ``v`` of a's material
point relative to b's at the contact: the terrain's Hunt-Crossley normal force
``f_n = max(0, K d^(1+p) + D d^q (-n . v))`` (:func:`..contacts.normal_force`, never pulling) and
smoothed Coulomb friction without tangential memory ``f_t = -mu f_n v_t / sqrt(|v_t|^2 + v_s^2)``
(bounded by ``mu f_n``, finite gradient at zero slip; :func:`..self_collision.contact_forces`).
The force on a is ``f_n n + f_t``; b gets the opposite.

Linearised for a step of ``h`` (as :class:`..contacts.ImplicitContacts`): the force on a at the end
of the step is ``step_forces - matrices @ (v+ - v)`` with ``matrices = W + h C``, ``W = -df/dv`` and
``C = -df/dx`` (``x`` the position of a relative to b). Along the normal ``W = D d^q`` and
``C = (1 + p) K d^p``, scaled as the terrain's by how much the point presses (1 while it
approaches or rests, down to 0 where a fast separation clips the force to zero); across it the
secant ``S (I - n n^T)`` with ``S = mu f_n / sqrt(|v_t|^2 + v_s^2)``: the friction at the end of
the step is ``-S v_t+``, the derivative itself at zero slip, and never reverses the slip.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from ...dynamics import spatial
from ..contacts import ContactParams, _law, _power
from .collide import Contacts


class PairForces(NamedTuple):
    """Per slot ``(C, ...)``, world axes: ``forces (C, 3)`` [N] on a at the start of the step (b
    gets the opposite); ``step_forces (C, 3)`` and symmetric positive semi-definite ``matrices
    (C, 3, 3)`` [N s/m]: the force on a at the end of the step is ``step_forces - matrices @ (v+ - v)``."""

    forces: jax.Array
    step_forces: jax.Array
    matrices: jax.Array


def pair_forces(
    contact_params: ContactParams, contacts: Contacts, relative_velocity: jax.Array, dt: jax.Array, slip_velocity: jax.Array
) -> PairForces:
    """The :class:`PairForces` of ``contacts`` with scalar ``contact_params``, the velocity
    ``relative_velocity (C, 3)`` [m/s] of a's material point minus b's at each contact position,
    the step ``dt`` [s] and the friction regularisation ``slip_velocity`` [m/s] (> 0)."""
    K, D, mu, p, q = _law(contact_params)
    n, v = contacts.normal, relative_velocity
    touching = contacts.active
    d = jnp.where(touching, jnp.maximum(contacts.depth, 0.0), 0.0)
    normal_speed = spatial.dot(n, v)
    d_p, d_q = _power(d, p), _power(d, q)
    elastic = K * d * _power(d, p - q)
    per_dq = jnp.maximum(0.0, elastic - D * normal_speed)  # f_n / d^q
    f_n = jnp.where(touching, d_q * per_dq, 0.0)
    v_t = v - normal_speed[:, None] * n
    v_s = jnp.maximum(slip_velocity, 1e-12)
    secant = mu * f_n / jnp.sqrt(spatial.dot(v_t, v_t) + v_s**2)
    forces = f_n[:, None] * n - secant[:, None] * v_t
    pressing = jnp.where(touching, jnp.clip(per_dq / jnp.where(elastic > 0, elastic, 1.0), 0.0, 1.0), 0.0)
    damping = pressing * D * d_q
    stiffness = pressing * (1 + p) * K * d_p
    outer = n[:, :, None] * n[:, None, :]
    tangent = jnp.eye(3, dtype=n.dtype) - outer
    step_forces = forces - (dt * stiffness * normal_speed)[:, None] * n
    matrices = (damping + dt * stiffness)[:, None, None] * outer + secant[:, None, None] * tangent
    return PairForces(forces, step_forces, matrices)
