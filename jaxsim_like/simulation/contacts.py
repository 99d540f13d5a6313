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
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp

from ..dynamics import spatial
from ..pytree import pytree_dataclass
from .contact_slots import Slots

_TINY = 1e-12


@pytree_dataclass()
class ContactParams:
    """``stiffness K`` [N/m^(1+p)], ``damping D`` [N s/m^(1+q)], ``friction mu`` and exponents ``p >= q``
    (scalars, or ``(P,)`` per collidable point). Against the terrain, the law of a link's contact,
    which its touching points share (:func:`shared_law`).

    ``overdamped`` in ``[0, 1]`` (see :func:`overdamped_weight`) says how much of the damping the
    implicit step keeps implicit while the contact still pushes: at 0 a separating point's slopes
    are scaled by the force it has left (a smooth release), at 1 they are at least what keeps the
    explicit rest of the damping below ``m / h`` for the mass ``m`` the point moves (an
    overdamped law stays firm instead of alternating from step to step).

    ``torsion`` and ``rolling`` [m]: the torsional and rolling friction coefficients (MuJoCo's
    condim 4 and 6), bounding the contact's torque about the normal by ``torsion f_n`` and
    across it by ``rolling f_n`` (:mod:`.contact_torques`; implicit step only); None: none (the
    step traces no torque; one None and not the other: that one is 0)."""

    stiffness: jax.Array
    damping: jax.Array
    friction: jax.Array
    p: jax.Array
    q: jax.Array
    overdamped: jax.Array
    torsion: jax.Array | None = None
    rolling: jax.Array | None = None

    @property
    def spins(self) -> bool:
        """Whether the law has torsional or rolling friction (static: the step traces its torques)."""
        return self.torsion is not None or self.rolling is not None

    @staticmethod
    def build(
        stiffness: float, damping: float, friction: float = 0.5, p: float = 0.5, q: float = 0.5, overdamped: float = 0.0,
        torsion: float | None = None, rolling: float | None = None,
    ) -> "ContactParams":
        """Explicit parameters; ValueError unless ``K > 0``, ``D > 0``, ``mu >= 0``, ``1 >= p >= q >= 0``,
        ``0 <= overdamped <= 1`` and ``torsion, rolling >= 0`` [m] (None: none)."""
        spin = [x for x in (torsion, rolling) if x is not None]
        if not (stiffness > 0 and damping > 0 and friction >= 0 and 1 >= p >= q >= 0 and 0 <= overdamped <= 1
                and all(x >= 0 for x in spin)):
            raise ValueError(
                f"contact parameters need stiffness > 0, damping > 0, friction >= 0, 1 >= p >= q >= 0, "
                f"0 <= overdamped <= 1 and torsion, rolling >= 0; got stiffness={stiffness}, damping={damping}, friction={friction}, "
                f"p={p}, q={q}, overdamped={overdamped}, torsion={torsion}, rolling={rolling}"
            )
        return ContactParams(*(jnp.asarray(float(x)) for x in (stiffness, damping, friction, p, q, overdamped)),
                             *(None if x is None else jnp.asarray(float(x)) for x in (torsion, rolling)))

    @staticmethod
    def from_mass(
        mass: float,
        *,
        gravity: float = 9.81,
        max_penetration: float = 0.005,
        points_in_contact: int = 1,
        damping_ratio: float = 1.0,
        friction: float = 0.5,
        p: float = 0.5,
        q: float = 0.5,
        max_linear_damping: float = float("inf"),
        torsion: float | None = None,
        rolling: float | None = None,
    ) -> "ContactParams":
        """Parameters such that ``mass`` [kg] resting on ``points_in_contact`` contacts sinks by
        ``max_penetration`` [m], with the given damping ratio of the linearised bounce, the
        contact's linear damping at that depth capped at ``max_linear_damping`` [N s/m]. Against
        the terrain the law is a link's, shared by its touching points (:func:`shared_law`): the
        default, one contact, sinks a body resting on one link by ``max_penetration``, whatever
        the number of its points that touch; ``torsion`` and ``rolling`` [m] as in :meth:`build`."""
        load = mass * gravity / points_in_contact
        stiffness = load / max_penetration ** (1 + p)
        linear_stiffness = (1 + p) * stiffness * max_penetration**p
        linear_damping = min(2 * damping_ratio * (linear_stiffness * mass / points_in_contact) ** 0.5, max_linear_damping)
        return ContactParams.build(
            stiffness, linear_damping / max_penetration**q, friction, p, q, overdamped_weight(float(damping_ratio)), torsion, rolling
        )


def overdamped_weight(damping_ratio: Any) -> Any:
    """The :attr:`ContactParams.overdamped` of a law of ``damping_ratio`` (a number, or an array):
    0 up to critical damping, 1 from twice critical, linear between."""
    if isinstance(damping_ratio, (int, float)):  # a number stays one: no eager jax program to compile
        return min(max(float(damping_ratio) - 1.0, 0.0), 1.0)
    return jnp.clip(damping_ratio - 1.0, 0.0, 1.0)


def shared_law(params: ContactParams, depth: jax.Array, touching: jax.Array, link_depth: jax.Array) -> ContactParams:
    """The law ``(P,)`` of each terrain contact point when the ``touching (P,)`` points of a link
    share the link's law ``params`` in proportion to their ``depth (P,)`` [m]: stiffness and
    damping times ``d / link_depth``, with ``link_depth (P,)`` [m] the sum of the depths of the
    touching points of the point's link (unchanged where not touching: ``K / D`` is kept).

    ``n`` points at one depth ``d`` push with ``K d^(1+p)`` together, whatever ``n``: a link at
    rest sinks as deep on one point (a sphere, a capsule standing) as on two (a capsule lying
    down) or four (a box), and the total force is continuous as points touch and leave. The step
    takes the shares at its start: the implicit step linearises each point's law at its share,
    which is exact for a link sinking evenly and at rest.
    """
    share = jnp.where(touching, jnp.maximum(depth, 0.0) / jnp.where(link_depth > 0, link_depth, 1.0), 1.0)
    return params.replace(stiffness=params.stiffness * share, damping=params.damping * share)


def taken(params: ContactParams, take: Any) -> ContactParams:
    """``params`` with each field that is given passed through ``take`` (per point to per slot)."""
    return ContactParams(*(None if (value := getattr(params, field.name)) is None else take(value)
                           for field in dataclasses.fields(ContactParams)))


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


class _Evaluation(NamedTuple):
    """The contact law at the start of a step, per point ``(P, ...)``."""

    touching: jax.Array
    sliding: jax.Array
    direction: jax.Array
    normal_per_dq: jax.Array
    d_p: jax.Array
    d_q: jax.Array
    relaxation: jax.Array
    tangent_deformation: jax.Array
    trial_norm: jax.Array
    forces: jax.Array


def _evaluate(params: ContactParams, depth, normal, velocity, deformation, enabled) -> _Evaluation:
    K, D, mu, p, q = _law(params)
    d = jnp.maximum(depth, 0.0)
    touching = (depth > 0) & enabled
    normal_speed = spatial.dot(normal, velocity)
    d_p, d_q = _power(d, p), _power(d, q)
    # f_n / d^q, finite at d -> 0 since p >= q.
    normal_per_dq = jnp.maximum(0.0, K * d * _power(d, p - q) - D * normal_speed)
    f_n = d_q * normal_per_dq
    v_t = velocity - normal_speed[:, None] * normal
    m_t = deformation - spatial.dot(normal, deformation)[:, None] * normal
    trial = -(K * d_p)[:, None] * m_t - (D * d_q)[:, None] * v_t
    trial_norm = spatial.safe_norm(trial)
    bound = mu * f_n
    sliding = trial_norm > bound
    direction = trial / jnp.where(trial_norm > 0, trial_norm, 1.0)[:, None]
    f_t = jnp.where(sliding[:, None], bound[:, None] * direction, trial)
    forces = jnp.where(touching[:, None], f_n[:, None] * normal + f_t, 0.0)
    relaxation = K / D * _power(d, p - q)
    return _Evaluation(touching, sliding, direction, normal_per_dq, d_p, d_q, relaxation, m_t, trial_norm, forces)


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
    K, D, mu, _, _ = _law(params)
    law = _evaluate(params, depth, normal, velocity, deformation, enabled)
    v_t = velocity - spatial.dot(normal, velocity)[:, None] * normal
    # While sliding: m_dot = -(f_t + K d^p m) / (D d^q), with f_t / d^q = mu normal_per_dq direction.
    slide_rate = -(mu * law.normal_per_dq / D)[:, None] * law.direction - law.relaxation[:, None] * law.tangent_deformation
    rate = jnp.where(law.sliding[:, None], slide_rate, v_t)
    relax = -(K / D)[..., None] * deformation
    return law.forces, jnp.where(law.touching[:, None], rate, relax)


class ImplicitContacts(NamedTuple):
    """The contact forces of a linearly implicit step of size ``h`` at the ``slots`` (see
    :mod:`.contact_slots`: each link rests on its slots), with the ``law`` at the start of the
    step ``(S, ...)``, and the points they ``carried (P,)``: the touching slots (a touching point
    that is not a slot feels no force, and its deformation relaxes as out of contact).

    The force at a slot at the end of the step is ``step_forces - matrices @ (v+ - v)`` [N], with
    the point velocity ``v+`` after the step: ``step_forces = f - h C v`` and ``matrices = W + h
    C`` (3x3, symmetric positive semi-definite, world axes; both zero on padding slots), kept as
    ``isotropic I + normal_excess n n^T + sliding_excess t t^T`` [N s/m] (``(S,)`` each; ``n`` the
    ``normal (S, 3)``, ``t`` the sliding direction ``law.direction``), where
    ``W = -df/dv`` and ``C = -df/dx`` are the law's damping and stiffness at the start of the
    step: along the normal ``D d^q`` and ``(1 + p) K d^p``, scaled by ``pressing`` ``(S,)``,
    ``min(1, f_n / K d^(1+p))`` (1 while the point approaches or rests, falling to zero where a
    fast separation clips the force to zero, so that the force is continuous and a leaving point
    is not held; at least ``1 - m_p / (D d^q h)`` for an overdamped law, see
    :class:`ContactParams`); across it,
    while sticking, ``D d^q`` and ``K d^p`` (the tangential deformation moves with the point);
    while sliding, the same scaled by ``s = mu f_n / |trial force|``. A point that slides fast
    enough that the friction impulses of its link's touching points cannot stop it within the
    step (``2 sum_L mu f_n h <= m_p |v_t|``, the sum over the touching slots of its link,
    ``m_p`` a lower bound of the mass it moves) keeps the exact Coulomb force ``mu f_n`` along its
    sliding direction and the scaled terms across it only; one with ``m_p |v_t| <= sum_L mu f_n
    h`` gets them in every tangential direction (blended linearly in between, so the force is
    continuous): a secant linearisation (the friction force is ``s`` times the trial force at
    the end of the step), which can bring the point to rest within the step but never reverses
    its motion (a constant force along the sliding direction overshoots through light links and
    diverges).

    ``drift (S, 3)`` [m/s] (None: zero): how much more the velocity of the material at a contact
    on a round surface changes over the step than the body's velocity at the contact's place
    (:func:`round_drift`); ``step_forces`` includes ``- matrices @ drift``, and the slot's
    velocity at the end of the step is ``v+ + drift``.
    """

    step_forces: jax.Array
    isotropic: jax.Array
    normal_excess: jax.Array
    sliding_excess: jax.Array
    normal: jax.Array
    slots: Slots
    law: _Evaluation
    carried: jax.Array
    pressing: jax.Array
    drift: jax.Array | None = None

    def resist(self, velocity: jax.Array) -> jax.Array:
        """``matrices @ velocity`` [N] for slot velocities ``(S, 3)`` [m/s]."""
        return _isotropic_plus_excesses(
            self.isotropic, self.normal_excess, self.sliding_excess, self.normal, self.law.direction, velocity
        )

    @property
    def matrices(self) -> jax.Array:
        """``W + h C (S, 3, 3)`` [N s/m], assembled (for the links' added inertias)."""
        n, t = self.normal, self.law.direction
        return (
            self.isotropic[:, None, None] * jnp.eye(3, dtype=n.dtype)
            + self.normal_excess[:, None, None] * n[:, :, None] * n[:, None, :]
            + self.sliding_excess[:, None, None] * t[:, :, None] * t[:, None, :]
        )


def _isotropic_plus_excesses(
    isotropic: jax.Array, normal_excess: jax.Array, sliding_excess: jax.Array, n: jax.Array, t: jax.Array, v: jax.Array
) -> jax.Array:
    """``(isotropic I + normal_excess n n^T + sliding_excess t t^T) v`` ``(S, 3)``, for coefficients
    ``(S,)``, directions ``n, t (S, 3)`` and vectors ``v (S, 3)``, without forming the 3x3 matrices."""
    return isotropic[:, None] * v + (normal_excess * spatial.dot(n, v))[:, None] * n + (sliding_excess * spatial.dot(t, v))[:, None] * t


def implicit_contact_forces(
    params: ContactParams,
    depth: jax.Array,
    normal: jax.Array,
    velocity: jax.Array,
    deformation: jax.Array,
    enabled: jax.Array,
    dt: jax.Array,
    moved_mass: jax.Array,
    slots: Slots,
    drift: jax.Array | None = None,
) -> ImplicitContacts:
    """The :class:`ImplicitContacts` at the ``slots`` of points at ``depth (P,)`` [m] with ``normal
    (P, 3)``, ``deformation (P, 3)`` [m] and ``enabled (P,)``, moving at the world ``velocity (S,
    3)`` [m/s] of the slots, for a step of ``dt`` [s]; ``moved_mass (P,)`` [kg] is a lower bound of
    the mass each point moves along any direction; ``drift (S, 3)`` [m/s] (None: zero) the slots'
    :func:`round_drift` over the step."""
    take = slots.take
    params = taken(params, take)
    normal = take(normal)
    law = _evaluate(params, take(depth), normal, velocity, take(deformation), slots.mask(take(enabled)))
    K, D, mu, p, q = _law(params)
    touching, sliding, trial_norm = law.touching, law.sliding, law.trial_norm
    d = jnp.maximum(take(depth), 0.0)
    pressing = _slope_scale(law, K * d * _power(d, p - q), D * law.d_q, params.overdamped, take(moved_mass), dt)
    normal_damping = pressing * D * law.d_q
    normal_stiffness = pressing * (1 + p) * K * law.d_p
    f_n = law.d_q * law.normal_per_dq
    scale = jnp.where(sliding, mu * f_n / jnp.where(trial_norm > 0, trial_norm, 1.0), 1.0)
    tangent_damping = jnp.where(touching, scale * D * law.d_q, 0.0)
    tangent_stiffness = jnp.where(touching, scale * K * law.d_p, 0.0)
    v_t = velocity - spatial.dot(normal, velocity)[:, None] * normal
    momentum = take(moved_mass) * spatial.safe_norm(v_t)
    # The friction impulse that all the touching slots of the point's link can apply in a step.
    impulse = slots.link_totals(jnp.where(touching, mu * f_n * dt, 0.0))
    fast = jnp.clip(momentum / jnp.where(impulse > 0, impulse, 1.0) - 1, 0.0, 1.0)
    fast = jnp.where(sliding & (impulse > 0), fast, 0.0)
    # W and C are isotropic across the normal plus excesses along the normal and the sliding
    # direction: no 3x3 matrix is assembled (the step applies them as such, see resist).
    sliding_stiffness = (1 - fast) * tangent_stiffness
    step_forces = law.forces - dt * _isotropic_plus_excesses(
        tangent_stiffness, normal_stiffness - tangent_stiffness, sliding_stiffness - tangent_stiffness, normal, law.direction, velocity
    )
    isotropic = tangent_damping + dt * tangent_stiffness
    normal_excess = normal_damping + dt * normal_stiffness - isotropic
    sliding_excess = -fast * isotropic
    if drift is not None:
        step_forces = step_forces - _isotropic_plus_excesses(isotropic, normal_excess, sliding_excess, normal, law.direction, drift)
    carried = slots.scatter(touching.astype(jnp.int32), depth.shape[0]) > 0
    mask = slots.mask
    return ImplicitContacts(
        mask(step_forces), mask(isotropic), mask(normal_excess), mask(sliding_excess), normal, slots, law, carried, pressing,
        None if drift is None else mask(drift),
    )


def round_drift(omega: jax.Array, velocity: jax.Array, radius: jax.Array, towards: jax.Array, dt: jax.Array) -> jax.Array:
    """``h w x (v + w x r) (S, 3)`` [m/s] where the ``radius (S,)`` [m] is positive, else zero:
    how much more the velocity of a body's material at a contact on its round surface changes
    over a step of ``h = dt`` [s] than the velocity of the material at the contact's place at the
    step's start, for a body turning at ``omega (S, 3)`` [rad/s], its material at the contact
    moving at ``velocity (S, 3)`` [m/s], with the arm ``r = radius towards`` from the contact to
    the surface's centre of curvature (a sphere's centre, a point of a capsule's or a
    cylinder's axis), ``towards (S, 3)`` a unit vector (zero radius: a corner, an edge or a face).

    The implicit step takes a contact's velocity at the end of the step as the body's velocity
    field at the contact's place at its start, the velocity of the material there at the start
    (``v``) changed as the solve changes the link's (inertial) velocity. The contact of a round
    surface is not fixed in space, nor in the body: it stays between the centre and the other
    surface, carried by the centre's velocity ``v + w x r``, and the material that it meets at
    the step's end moves at the velocity field there, which differs by ``h w x (v + w x r)``.
    Without it, the linearised law of a ball rolling at ``w`` sees the centripetal acceleration
    ``w^2 r`` of its lowest point, which leaves the surface, where the contact's depth changes
    at the rate of the centre's height: a rolling ball sank deeper the faster it rolled. A
    corner's contact keeps the step's linearisation."""
    arm = radius[:, None] * towards
    drift = dt * jnp.cross(omega, velocity + jnp.cross(omega, arm))
    return jnp.where((radius > 0)[:, None], drift, 0.0)


def _pressing(law: "_Evaluation", elastic: jax.Array) -> jax.Array:
    """``f_n / K d^(1+p)`` per slot: 1 while approaching or at rest, down to 0 where a fast
    separation clips the force to zero; 0 where not touching."""
    return jnp.where(law.touching, jnp.clip(law.normal_per_dq / jnp.where(elastic > 0, elastic, 1.0), 0.0, 1.0), 0.0)


def _slope_scale(
    law: "_Evaluation", elastic: jax.Array, damping: jax.Array, overdamped: jax.Array, moved_mass: jax.Array, dt: jax.Array
) -> jax.Array:
    """The factor ``(S,)`` of the normal slopes: :func:`_pressing`, raised for an ``overdamped``
    law to ``1 - m / (c h)`` at least, with ``c`` the normal ``damping`` [N s/m] and ``m`` the
    ``moved_mass`` [kg], so that the damping left explicit, ``(1 - scale) c``, stays below ``m / h``."""
    impulse = damping * dt
    floor = jnp.where(impulse > 0, overdamped * (1 - moved_mass / jnp.where(impulse > 0, impulse, 1.0)), 0.0)
    return jnp.where(law.touching, jnp.maximum(_pressing(law, elastic), floor), 0.0)


def implicit_deformation(
    params: ContactParams, contacts: ImplicitContacts, normal: jax.Array, deformation: jax.Array, velocity_next: jax.Array, dt: jax.Array
) -> jax.Array:
    """The tangential deformation ``(P, 3)`` [m] after the step, implicit in closed form: sticking
    ``m_t + h v_t+``; sliding ``(m_t - h mu f_n d^-q / D t) / (1 + h K/D d^(p-q))`` along the
    sliding direction ``t``; free (not carried) ``m / (1 + h K/D)``; ``normal (P, 3)``,
    ``deformation (P, 3)`` and ``velocity_next (S, 3)``, the velocities ``v+`` of the material
    points at the contacts' slots (their :attr:`ImplicitContacts.drift` added here)."""
    K, D, mu, _, _ = _law(params)
    free = deformation / (1 + dt * K / D)[..., None]
    law, slots = contacts.law, contacts.slots
    K, D, mu = slots.take(K), slots.take(D), slots.take(mu)
    normal = slots.take(normal)
    if contacts.drift is not None:
        velocity_next = velocity_next + contacts.drift
    v_t = velocity_next - spatial.dot(normal, velocity_next)[:, None] * normal
    sticking = law.tangent_deformation + dt * v_t
    sliding = (law.tangent_deformation - (dt * mu * law.normal_per_dq / D)[:, None] * law.direction) / (1 + dt * law.relaxation)[:, None]
    touching = slots.scatter(jnp.where(law.touching[:, None], jnp.where(law.sliding[:, None], sliding, sticking), 0.0), deformation.shape[0])
    return jnp.where(contacts.carried[:, None], touching, free)


def relaxed_deformation(params: ContactParams, deformation: jax.Array, dt: jax.Array) -> jax.Array:
    """The tangential ``deformation (P, 3)`` [m] of points out of contact after a step of ``dt``
    [s] under their law ``params``: ``m / (1 + h K/D)``, implicit (as :func:`implicit_deformation`
    relaxes the points it does not carry)."""
    K, D, _, _, _ = _law(params)
    return deformation / (1 + dt * K / D)[..., None]


RELEASE_BLEND = 0.25
"""The fraction ``f_n / K d^(1+p)`` below which a separating point's unscaled law is blended in
(fully at a clipped force, not at all from this fraction up: see :func:`separating_law`)."""


class Separating(NamedTuple):
    """Per slot ``(S,)``, the normal force ``target - slope (n . v+)`` [N] that a separating slot's
    law linearised without the separation's scaling adds at the end velocity ``v+`` (``slope``
    [N s/m]), and ``gain`` [N], that addition at the end velocity of a first solve; all three zero
    where it is not separating fast or would not push there."""

    target: jax.Array
    slope: jax.Array
    gain: jax.Array


class SeparatingLaw(NamedTuple):
    """Per slot ``(S,)``, what the separating rows take of the step's start (:func:`separating_law`):
    the force of the law linearised without the separation's scaling at the end velocity ``v+``,
    ``push - resistance (n . v+)`` [N] (the slot is not leaving where positive; ``resistance``
    [N s/m]), and the ``target`` [N] and ``slope`` [N s/m] of the force it would add
    (:class:`Separating`); all four zero where the slot is not touching or not separating fast.
    A solve's iterations evaluate :meth:`rows` only."""

    push: jax.Array
    resistance: jax.Array
    target: jax.Array
    slope: jax.Array

    def rows(self, normal: jax.Array, predicted: jax.Array) -> "Separating":
        """The :class:`Separating` forces given the slots' ``normal`` and velocities ``predicted
        (S, 3)`` [m/s] at the end of the step."""
        speed_next = spatial.dot(normal, predicted)
        upgrade = self.push - self.resistance * speed_next > 0
        return Separating(jnp.where(upgrade, self.target, 0.0), jnp.where(upgrade, self.slope, 0.0),
                          jnp.where(upgrade, self.target - self.slope * speed_next, 0.0))


def separating_law(params: ContactParams, contacts: ImplicitContacts, depth: jax.Array, velocity: jax.Array, dt: jax.Array) -> SeparatingLaw:
    """The :class:`SeparatingLaw` of the ``contacts`` (linearised by :func:`implicit_contact_forces`
    with the per-point law ``params`` at ``depth (P,)`` [m] and slot ``velocity (S, 3)`` [m/s]) over
    a step of ``dt`` [s]: its :meth:`~SeparatingLaw.rows` at the slot velocities at the end of the
    step are the :class:`Separating` forces.

    A separating point's slopes are scaled by ``pressing = f_n / K d^(1+p)``, down to zero where
    its own damping clips its force to zero: it is left to fall for the whole step. Where the law
    linearised without the scaling, ``K d^(1+p) - D d^q v_n - (D d^q + h (1 + p) K d^p)(v_n+ -
    v_n) - h (1 + p) K d^p v_n``, still pushes at the end of the step, the point is not leaving:
    released, a light link falls back into the ground within the step, the next step pushes it out
    again, and it rests in a cycle of a few steps at large steps. The forces are that law's excess
    over the scaled one, weighted by ``1 - pressing / RELEASE_BLEND`` (clipped to [0, 1]), so that
    they vanish continuously as a separation slows (a slowly separating point, as in a settling
    stack, keeps its scaled law). This is the active set of the normal force, decided on a first
    solve's ``v+``."""
    slots, law = contacts.slots, contacts.law
    take = slots.take
    K, D, _, p, q = _law(taken(params, take))
    d = jnp.maximum(take(depth), 0.0)
    elastic = K * d * _power(d, p - q)
    pressing = _pressing(law, elastic)
    speed = spatial.dot(contacts.normal, velocity)
    damping, stiffness = D * law.d_q, (1 + p) * K * law.d_p
    unscaled = law.d_q * (elastic - D * speed)
    weight = jnp.clip(1 - pressing / RELEASE_BLEND, 0.0, 1.0)
    release = 1 - contacts.pressing
    target = weight * (unscaled - law.d_q * law.normal_per_dq + release * damping * speed)
    slope = weight * release * (damping + dt * stiffness)
    eligible = slots.mask(law.touching & (weight > 0))
    return SeparatingLaw(*(jnp.where(eligible, x, 0.0) for x in (unscaled + damping * speed, damping + dt * stiffness, target, slope)))
