"""Soft contacts: a Hunt-Crossley normal force and Coulomb friction with tangential memory.

At a point with penetration ``d >= 0``, penetration rate ``d_dot = -n . v`` and tangential
deformation ``m`` (the contact's memory, world axes):

- normal force ``f_n = max(0, K d^(1+p) + D d^q d_dot)`` along ``n``: it never pulls;
- tangential force ``f_t = -(K d^p m + D d^q m_dot)``: while it lies inside the Coulomb cone
  the contact sticks (``m_dot = v_t``, the tangential velocity), otherwise it slides with
  ``f_t = mu f_n`` opposing the trial force and ``m_dot`` follows from the law above;
- out of contact ``m`` relaxes to zero at the rate ``K / D``.

``p >= q`` keeps every term finite at ``d -> 0``; all powers are written so that values and
gradients stay finite at the contact boundary and at zero velocity.
"""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp

from ..dynamics import spatial

_TINY = 1e-12


@functools.partial(
    jax.tree_util.register_dataclass,
    data_fields=["stiffness", "damping", "friction", "p", "q"],
    meta_fields=[],
)
@dataclasses.dataclass(frozen=True)
class ContactParams:
    """``stiffness K`` [N/m^(1+p)], ``damping D`` [N s/m^(1+q)], ``friction mu`` and exponents ``p >= q``
    (scalars, or ``(P,)`` per collidable point)."""

    stiffness: jax.Array
    damping: jax.Array
    friction: jax.Array
    p: jax.Array
    q: jax.Array

    @staticmethod
    def build(stiffness: float, damping: float, friction: float = 0.5, p: float = 0.5, q: float = 0.5) -> "ContactParams":
        """Explicit parameters; ValueError unless ``K > 0``, ``D > 0``, ``mu >= 0`` and ``1 >= p >= q >= 0``."""
        if not (stiffness > 0 and damping > 0 and friction >= 0 and 1 >= p >= q >= 0):
            raise ValueError(
                f"contact parameters need stiffness > 0, damping > 0, friction >= 0 and 1 >= p >= q >= 0; got "
                f"stiffness={stiffness}, damping={damping}, friction={friction}, p={p}, q={q}"
            )
        return ContactParams(*(jnp.asarray(float(x)) for x in (stiffness, damping, friction, p, q)))

    @staticmethod
    def from_mass(
        mass: float,
        *,
        gravity: float = 9.81,
        max_penetration: float = 0.005,
        points_in_contact: int = 4,
        damping_ratio: float = 1.0,
        friction: float = 0.5,
        p: float = 0.5,
        q: float = 0.5,
        max_linear_damping: float = float("inf"),
    ) -> "ContactParams":
        """Parameters such that ``mass`` [kg] resting on ``points_in_contact`` points sinks by
        ``max_penetration`` [m], with the given damping ratio of the linearised bounce, the
        point's linear damping at that depth capped at ``max_linear_damping`` [N s/m]."""
        load = mass * gravity / points_in_contact
        stiffness = load / max_penetration ** (1 + p)
        linear_stiffness = (1 + p) * stiffness * max_penetration**p
        linear_damping = min(2 * damping_ratio * (linear_stiffness * mass / points_in_contact) ** 0.5, max_linear_damping)
        return ContactParams.build(stiffness, linear_damping / max_penetration**q, friction, p, q)

    def replace(self, **changes) -> "ContactParams":
        """A copy with some fields changed."""
        return dataclasses.replace(self, **changes)


def _power(x: jax.Array, exponent: jax.Array) -> jax.Array:
    """``x ** exponent`` for ``x >= 0`` with ``0 ** 0 = 1`` and finite gradients at ``x = 0``."""
    positive = x > 0
    safe = jnp.where(positive, x, 1.0)
    return jnp.where(positive, jnp.exp(exponent * jnp.log(safe)), jnp.where(exponent == 0, 1.0, 0.0))


def _law(params: ContactParams) -> tuple[jax.Array, ...]:
    """``K, D, mu, p, q`` clipped to their valid ranges (``K >= 0``, ``D > 0``, ``mu >= 0``, ``1 >= p >= q >= 0``)."""
    K, D, mu = jnp.maximum(params.stiffness, 0.0), jnp.maximum(params.damping, _TINY), jnp.maximum(params.friction, 0.0)
    p = jnp.clip(params.p, 0.0, 1.0)
    q = jnp.clip(params.q, 0.0, p)
    return K, D, mu, p, q


def normal_force(params: ContactParams, depth: jax.Array, rate: jax.Array) -> jax.Array:
    """The Hunt-Crossley normal force ``max(0, K d^(1+p) + D d^q d_dot)`` [N] of points at ``depth``
    [m] (zero where ``depth <= 0``) penetrating at ``rate`` [m/s] (same shapes, or broadcastable)."""
    K, D, _, p, q = _law(params)
    d = jnp.maximum(depth, 0.0)
    f_n = _power(d, q) * jnp.maximum(0.0, K * d * _power(d, p - q) + D * rate)
    return jnp.where(depth > 0, f_n, 0.0)


def contact_forces(
    params: ContactParams,
    depth: jax.Array,
    normal: jax.Array,
    velocity: jax.Array,
    deformation: jax.Array,
    enabled: jax.Array,
) -> tuple[jax.Array, jax.Array]:
    """World forces ``(P, 3)`` [N] on the points and the deformation rate ``(P, 3)`` [m/s].

    ``depth (P,)`` [m], ``normal (P, 3)``, point ``velocity (P, 3)`` [m/s] (world), ``deformation
    (P, 3)`` [m] and ``enabled (P,)`` (points whose contact is switched off feel nothing).
    """
    K, D, mu, p, q = _law(params)
    d = jnp.maximum(depth, 0.0)
    touching = (depth > 0) & enabled
    normal_speed = spatial.dot(normal, velocity)
    d_dot = -normal_speed
    d_p, d_q = _power(d, p), _power(d, q)
    # f_n / d^q, finite at d -> 0 since p >= q.
    normal_per_dq = jnp.maximum(0.0, K * d * _power(d, p - q) + D * d_dot)
    f_n = d_q * normal_per_dq
    v_t = velocity - normal_speed[:, None] * normal
    m_t = deformation - spatial.dot(normal, deformation)[:, None] * normal
    trial = -(K * d_p)[:, None] * m_t - (D * d_q)[:, None] * v_t
    trial_norm = spatial.safe_norm(trial)
    bound = mu * f_n
    sliding = trial_norm > bound
    direction = trial / jnp.where(trial_norm > 0, trial_norm, 1.0)[:, None]
    f_t = jnp.where(sliding[:, None], bound[:, None] * direction, trial)
    # While sliding: m_dot = -(f_t + K d^p m) / (D d^q), with f_t / d^q = mu normal_per_dq direction.
    slide_rate = -(mu * normal_per_dq / D)[:, None] * direction - (K / D * _power(d, p - q))[:, None] * m_t
    rate = jnp.where(sliding[:, None], slide_rate, v_t)
    relax = -(K / D)[..., None] * deformation
    forces = jnp.where(touching[:, None], f_n[:, None] * normal + f_t, 0.0)
    deformation_rate = jnp.where(touching[:, None], rate, relax)
    return forces, deformation_rate
