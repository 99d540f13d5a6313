"""The step of one model of a world, in two stages: :func:`prepare` (kinematics, terrain contacts,
external wrenches, joint effects at the step's start) and :func:`solve` (the articulated-body
solve, explicit or linearly implicit, and the state rates); :func:`.world.world_step` runs them
for every model (:func:`.step.step` is the world of one model)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..dynamics import configuration
from ..dynamics import kinematics as kin_module
from ..dynamics import representations as rep
from ..dynamics import spatial
from ..dynamics.aba import ArticulatedFactor, articulated_body_factorised
from ..dynamics.fluid import fluid_forces
from ..dynamics.model import Model
from ..dynamics.state import State
from . import contact_torques, contacts, couplings, ellipsoids, rims, separating_rows, terrain
from .ball_limits import cone_rows
from .joint_limits import limit_rows
from .tendons import tendon_rows
from .contact_slots import Slots, contact_slots, link_one_hot
from .joint_effects import joint_effects
from .params import ModelParams, WorldParams

if TYPE_CHECKING:
    from .world import PairContacts


class StepOutput(NamedTuple):
    """What happened during a step, at its start, per collidable point ``P`` and joint ``n``.

    ``contact_positions (P, 3)`` [m], ``contact_normals (P, 3)``, ``penetration (P,)`` [m] (into
    the terrain's surface raised by the point's ``Model.point_margin``),
    ``contact_forces (P, 3)`` [N] on the link (world axes), ``contact_torques (P, 3)`` [N m] of
    those forces about the link origin (world axes; with torsional or rolling friction, plus the
    slot's friction couple, :mod:`.contact_torques`), ``in_contact (P,)`` (the points whose
    contact acts: with the implicit integrator, the touching contact slots), the
    ``joint_torques (n,)`` actually applied (command, limits, damping, friction, joint couplings, tendons, cone and soft joint limits), the step's
    ``base_acceleration (6,)`` (the derivative of the base velocity, in the state's representation;
    zero with a fixed base) and ``joint_accelerations (n,)``, the forces of the loop closures'
    rows ``loop_forces (r,)`` (closure after closure in the order of ``model.loops``, 3 rows per
    connect and 6 per weld: first the force [N] on ``link1`` at its frame's origin, world axes,
    ``link2`` taking the opposite, then a weld's orientation rows' forces [N m]; MuJoCo's
    ``efc_force`` of the same rows, see :mod:`.couplings`), and ``finite``: whether every field of
    the next state is finite. The forces and torques are those the step applied: with the implicit
    integrator, the linearised forces at the end of the step. ``self_contacts``: the contacts
    between the model's own links (:class:`.world.PairContacts`, link indices the model's), as
    :func:`.step.step` reports them with self-collisions on (None: off, and in the outputs of
    each model of a world, whose ``pairs`` hold them).
    """

    contact_positions: jax.Array
    contact_normals: jax.Array
    penetration: jax.Array
    contact_forces: jax.Array
    contact_torques: jax.Array
    in_contact: jax.Array
    joint_torques: jax.Array
    base_acceleration: jax.Array
    joint_accelerations: jax.Array
    loop_forces: jax.Array
    finite: jax.Array
    self_contacts: PairContacts | None = None


class _Rates(NamedTuple):
    base_position: jax.Array
    base_quaternion: jax.Array
    base_velocity: jax.Array
    joint_positions: jax.Array
    joint_velocities: jax.Array
    contact_deformation: jax.Array


def _point_positions(model: Model, W_H_L: jax.Array) -> jax.Array:
    """The centres ``(P, 3)`` of the collidable points in the frame of the link poses ``W_H_L (N,
    4, 4)``: products of the columns of the poses, fused with their gather (cheaper in a batched
    step than one dot: docs/benchmarks.md, "Where a step's time goes"; see
    :func:`.step.contact_point_positions`)."""
    W_H_point = W_H_L[np.asarray(model.point_link, dtype=int)]
    c = model.collidable_points
    return W_H_point[:, :3, 0] * c[:, :1] + W_H_point[:, :3, 1] * c[:, 1:2] + W_H_point[:, :3, 2] * c[:, 2:] + W_H_point[:, :3, 3]


def _point_velocities(model: Model, W_v: jax.Array, points: jax.Array) -> jax.Array:
    """``(P, 3)``: the velocity of the material point at ``points (P, 3)`` of each collidable
    point's link, from the inertial link velocities ``W_v (N, 6)`` (one frame)."""
    W_v_point = W_v[np.asarray(model.point_link, dtype=int)]
    return W_v_point[:, :3] + jnp.cross(W_v_point[:, 3:], points)


def _rims_facing_terrain(model: Model, ground: terrain.Terrain, G_H_L: jax.Array, origin: jax.Array, centres: jax.Array) -> jax.Array:
    """The ``centres (P, 3)`` of the collidable points (frame ``G``, whose origin is ``origin (3,)``
    in the world) with the rings on cylinder rims turned towards the terrain, along its normal at
    each cap's centre: each ring probed and turned once, its points moved with it (:mod:`.rims`).
    Of a concrete model (closed over) the rim points alone, by static indices; of a traced one (a
    padded group's, a model passed in) every point, those on ring 0 unmoved."""
    dtype = centres.dtype
    ring_rim = model.ring_rim.astype(dtype)
    if isinstance(model.point_ring, jax.core.Tracer):
        on, point_ring, ring_link = slice(None), model.point_ring, model.ring_link
    else:
        point_ring, ring_link = np.asarray(model.point_ring), np.asarray(model.ring_link)
        on = np.flatnonzero(point_ring > 0)
        point_ring = point_ring[on]
    placed = rims.Rings.placed(ring_rim, G_H_L[ring_link])
    _, normal = terrain.penetration(ground, placed.centre + origin)
    at = rims.coordinates(model.collidable_points[on].astype(dtype), ring_rim, point_ring)
    return centres.at[on].set(rims.turned(centres[on], at, placed.turns(normal)[point_ring]))


def _ellipsoids_facing_terrain(model: Model, ground: terrain.Terrain, G_H_L: jax.Array, origin: jax.Array, centres: jax.Array) -> jax.Array:
    """The ``centres (P, 3)`` of the collidable points (frame ``G``, whose origin is ``origin (3,)``
    in the world) with each exact ellipsoid's point at its ellipsoid's deepest point along the
    terrain's normal (:func:`.ellipsoids.deepest`). Of a concrete model (closed over) those points
    alone, by static indices; of a traced one every point, the others unmoved."""
    dtype = centres.dtype
    rows = model.point_ellipsoid.astype(dtype)
    point_link = np.asarray(model.point_link, dtype=int)
    if isinstance(rows, jax.core.Tracer):
        on = np.arange(len(point_link))
    else:
        on = np.flatnonzero(np.any(np.asarray(rows) != 0, axis=1))
    centre, M = ellipsoids.placed(rows[on], G_H_L[point_link[on]])
    deepest = ellipsoids.deepest(centre, M, lambda points: terrain.penetration(ground, points + origin)[1])
    moved = jnp.any(rows[on] != 0, axis=1)
    return centres.at[on].set(jnp.where(moved[:, None], deepest, centres[on]))


def _slot_velocities(G_v: jax.Array, slot_link: jax.Array, slot_points: jax.Array) -> jax.Array:
    """``(S, 3)``: the velocity of the material points ``slot_points (S, 3)`` of the links
    ``slot_link (S,)``, from the inertial link velocities ``G_v (N, 6)`` (one frame)."""
    G_v_slot = G_v[slot_link]
    return G_v_slot[:, :3] + jnp.cross(G_v_slot[:, 3:], slot_points)


def _wrenches(forces: jax.Array, points: jax.Array) -> jax.Array:
    """``(P, 6)``: forces ``(P, 3)`` at ``points (P, 3)`` as wrenches about the origin."""
    return jnp.concatenate([forces, jnp.cross(points, forces)], axis=-1)


def point_inertias(points: jax.Array, matrices: jax.Array) -> jax.Array:
    """``X_p^T A_p X_p (P, 6, 6)`` with ``X_p = [I, -[p]x]``: the spatial matrix (world axes, about
    the origin) that a 3x3 ``A_p`` acting on the velocity of point ``p (P, 3)`` puts on its link."""
    P = spatial.skew(points)
    AP = spatial.matmul(matrices, P, fused=False)
    PAP = spatial.matmul(P, AP, fused=False)
    return jnp.concatenate(
        [jnp.concatenate([matrices, -AP], axis=-1), jnp.concatenate([-jnp.swapaxes(AP, -1, -2), -PAP], axis=-1)], axis=-2
    )


def _slot_link_terms(slots: Slots, points: jax.Array, linear: contacts.ImplicitContacts, links: int) -> tuple[jax.Array, jax.Array]:
    """Per link, the sums over its ``slots`` of :func:`point_inertias` of the contacts' ``W + h C``
    (``(links, 6, 6)``) and of their ``step_forces`` as wrenches about the origin (``(links, 6)``),
    the slots' material ``points (S, 3)`` [m] (frame ``G``). Written components first (``(3, S)``
    vectors, ``(3, 3, S)`` matrices) and summed along the slots, so that a batched step's kernels
    run along the slots, not along the 3 or 6 components of each (which XLA's CPU emitters do
    not vectorise)."""
    # The inputs stored once, components first (fused into each product, XLA would recompute
    # the contact law for every component that reads it).
    inputs = jnp.concatenate([points, linear.normal, linear.law.direction, linear.step_forces], axis=1)
    inputs = jax.lax.optimization_barrier(jnp.concatenate(
        [inputs.T, jnp.stack([linear.isotropic, linear.normal_excess, linear.sliding_excess])]))
    p, n, t, f = inputs[0:3], inputs[3:6], inputs[6:9], inputs[9:12]
    iso, normal_excess, sliding_excess = inputs[12], inputs[13], inputs[14]
    # A = W + h C = iso I + normal_excess n n^T + sliding_excess t t^T (3, 3, S), symmetric.
    A = (normal_excess * n[:, None] * n[None] + iso * jnp.eye(3, dtype=iso.dtype)[:, :, None]) + sliding_excess * t[:, None] * t[None]
    # A P with P = [p]x: row i is A_i x p; P A P: column j is p x (A P)_j.
    AP = jnp.cross(A, p[None], axis=1)
    PAP = jnp.cross(p[:, None], AP, axis=0)
    upper = [(i, j) for i in range(3) for j in range(i, 3)]
    columns = jnp.concatenate([jnp.stack([A[i, j] for i, j in upper]), AP.reshape(9, -1), jnp.stack([PAP[i, j] for i, j in upper]), f,
                               jnp.cross(p, f, axis=0)])
    # Padding slots carry zero coefficients and forces, so zero terms.
    sums = slots.link_sums(columns, links, axis=-1)
    symmetric = np.zeros((3, 3), dtype=int)
    for k, (i, j) in enumerate(upper):
        symmetric[i, j] = symmetric[j, i] = k
    sum_A, sum_AP, sum_PAP = sums[symmetric], sums[6:15].reshape(3, 3, -1), sums[15 + symmetric]
    # X_p^T A X_p = [[A, -A P], [-(A P)^T, -P A P]] (see point_inertias), (6, 6, links).
    inertia = jnp.concatenate([jnp.concatenate([sum_A, -sum_AP], axis=1), jnp.concatenate([-jnp.swapaxes(sum_AP, 0, 1), -sum_PAP], axis=1)])
    return jnp.moveaxis(inertia, -1, 0), sums[21:27].T


def smallest_moments(model: Model) -> jax.Array:
    """``(N,)`` [kg m^2]: a lower bound of each link's smallest principal moment of inertia about
    its COM, ``4 det(I) / tr(I)^2`` (zero for point masses): of a pure couple's effective inertia
    too (joints only add inertia)."""
    inertia = model.link_inertia
    trace = inertia[:, 0, 0] + inertia[:, 1, 1] + inertia[:, 2, 2]
    determinant = spatial.dot(inertia[:, 0], jnp.cross(inertia[:, 1], inertia[:, 2]))
    return jnp.maximum(4 * determinant / jnp.where(trace > 0, trace, 1.0) ** 2, 0.0)


def _moved_mass(model: Model) -> jax.Array:
    """``(P,)`` [kg]: a lower bound of the mass that a force at each collidable point moves, in any
    direction: that of its link alone as a free rigid body, ``1 / (1/m + |r|^2 / lambda_min)`` with
    ``r`` the point from the link's COM and ``lambda_min >= 4 det(I) / tr(I)^2`` the smallest
    principal moment (joints only add inertia). Zero for points on point masses."""
    links = np.asarray(model.point_link, dtype=int)
    mass, inertia = model.link_mass[links], model.link_inertia[links]
    trace = inertia[:, 0, 0] + inertia[:, 1, 1] + inertia[:, 2, 2]
    determinant = spatial.dot(inertia[:, 0], jnp.cross(inertia[:, 1], inertia[:, 2]))
    smallest = jnp.maximum(4 * determinant / jnp.where(trace > 0, trace, 1.0) ** 2, 0.0)
    # The farthest material point of a swept point from the COM: its centre's distance plus its
    # radius; of a point on a rim, which turns about the axis, its cap centre's plus the rim's radius;
    # of an ellipsoid's, which moves over it, its centre's plus its largest radius.
    reach = spatial.safe_norm(model.collidable_points - model.link_com[links]) + model.point_radius
    if model.ring_rim is not None:
        rim = model.ring_rim[model.point_ring]
        turning = spatial.safe_norm(rim[:, :3] - model.link_com[links]) + spatial.safe_norm(model.collidable_points - rim[:, :3])
        reach = jnp.where(model.point_ring > 0, jnp.maximum(reach, turning), reach)
    if model.point_ellipsoid is not None:
        centre, M = ellipsoids.axes(model.point_ellipsoid)
        farthest = spatial.safe_norm(centre - model.link_com[links]) + jnp.sqrt(jnp.max(jnp.sum(M**2, axis=-2), axis=-1))
        reach = jnp.where(jnp.any(model.point_ellipsoid != 0, axis=1), jnp.maximum(reach, farthest), reach)
    compliance = 1 / jnp.where(mass > 0, mass, 1.0) + reach**2 / jnp.where(smallest > 0, smallest, 1.0)
    return jnp.where((mass > 0) & (smallest > 0), 1 / compliance, 0.0)


class Prepared(NamedTuple):
    """A model at the start of a step: its kinematics, the terrain contact ``points (P, 3)`` of its
    collidable points (the material point of each swept point nearest the terrain, ``p - r n``;
    internal frame ``G``: world axes, origin at the base, ``kin.origin``) and their ``velocities
    (P, 3)``, or with the implicit step those of the contact slots only ``(S, 3)``, whose points
    and links are ``slot_points (S, 3)`` and ``slot_link (S,)`` (else None), the terrain
    contacts (depth and normal per point, the ``contact`` law of each point, shared
    by the touching points of its link, see :func:`.contacts.shared_law`; the explicit forces and deformation rate, or the
    linearised :class:`.contacts.ImplicitContacts` at the contact slots, and no ``forces``), the external wrenches ``G_f (N, 6)`` known at
    the start (terrain contacts, user wrenches, the fluid's), the added link
    inertias ``(N, 6, 6)`` of the terrain contacts and the fluid (implicit step; else None), the
    joint effects and the fluid's damping ``G_D (N, 6, 6)`` (implicit step with a fluid; else None,
    see :func:`.fluid.fluid_forces`), the slots' torsional and rolling friction ``torques``
    (:class:`.contact_torques.ImplicitTorques`; None: the law has none) and, implicit, what the
    solve's separating rows take of the slots' law at the start (:class:`.contacts.SeparatingLaw`,
    made once for every solve of the step; else None)."""

    kin: kin_module.Kinematics
    points: jax.Array
    velocities: jax.Array
    depth: jax.Array
    normal: jax.Array
    enabled: jax.Array
    contact: contacts.ContactParams
    forces: jax.Array | None
    deformation_rate: jax.Array | None
    linear: contacts.ImplicitContacts | None
    G_f_ext: jax.Array
    added_inertia: jax.Array | None
    effects: Any
    fluid_damping: jax.Array | None = None
    torques: contact_torques.ImplicitTorques | None = None
    slot_points: jax.Array | None = None
    slot_link: jax.Array | None = None
    separating: contacts.SeparatingLaw | None = None


class Solved(NamedTuple):
    """A model's step solved: the state rates, the outputs, the velocity change ``G_dv (N, 6)``
    of every link over the step (inertial, world axes about ``G``'s origin; zero with an explicit
    integrator) and the external wrenches the step applied, ``G_f (N, 6)``."""

    rates: "_Rates"
    outputs: StepOutput
    G_dv: jax.Array
    G_f_applied: jax.Array


def _shared_law(model: Model, law: contacts.ContactParams, depth: jax.Array, carried: jax.Array) -> contacts.ContactParams:
    """The terrain law ``(P,)`` of each point when the ``carried (P,)`` points of a link, at
    ``depth (P,)`` [m], share the link's ``law`` (:func:`.contacts.shared_law`). One sum for the
    slots and for every point, so that the two agree to the bit while they carry the same points."""
    one_hot = link_one_hot(np.asarray(model.point_link, dtype=int), model.number_of_links, depth.dtype)
    return contacts.shared_law(law, depth, carried, (one_hot @ jnp.where(carried, depth, 0.0)) @ one_hot)


def _gyroscopic_inertias(model: Model, kin: kin_module.Kinematics) -> jax.Array:
    """``(N, 6, 6)``: per link, half the derivative of its gyroscopic moment ``w x I_c w`` in its
    angular velocity ``w``, as a 6D term about ``G``'s origin (world axes; a pure moment, so only
    the angular block). Added times ``dt`` to the link's inertia, it takes the moment at the
    step's midpoint velocity ``w + dw / 2``, linearised: one Newton step of the implicit midpoint
    rule, which keeps a free body's kinetic energy and angular momentum (at ``w + dw``, Bullet's
    implicit gyroscopic term, a tumbling body loses them; explicit, it gains them every step and a
    capsule thrown spinning diverged). The rest of the velocity products ``v x* M v`` about ``G``
    (the linear momentum's frame terms) stays at the step's start. Taken for a one-link free body
    only: it is not symmetric, and the articulated-body pass of a robot with it (``IA S`` and
    ``IA^T S`` apart) cost the humanoid's batched step 1.1-1.2x (docs/changelog.md)."""
    R = kin.G_H_L[:, :3, :3]
    inertia = spatial.congruence(R, model.link_inertia.astype(R.dtype))
    gyroscopic = 0.5 * spatial.gyroscopic_derivative(inertia, kin.G_v[:, 3:])
    return jnp.pad(gyroscopic, ((0, 0), (3, 0), (3, 0)))


def _terrain_radius(model: Model) -> jax.Array:
    """``(P,)`` [m]: the radius with which each point meets the terrain, its own plus its
    ``point_margin`` (its contact pushes within that distance of the surface)."""
    return model.point_radius if model.point_margin is None else model.point_radius + model.point_margin


def _terrain_law(model: Model, law: contacts.ContactParams) -> contacts.ContactParams:
    """The model's terrain ``law`` with each point's ``point_friction``, ``point_torsion`` and
    ``point_rolling`` ``(P,)`` where the model has them (a negative one: the law's)."""
    dtype = jnp.result_type(law.friction)
    if model.point_friction is not None:
        own = model.point_friction.astype(dtype)
        law = law.replace(friction=jnp.where(own >= 0, own, law.friction))
    for name in ("torsion", "rolling"):
        own = getattr(model, f"point_{name}")
        if own is not None:
            default = getattr(law, name)
            law = law.replace(**{name: jnp.where(own >= 0, own.astype(dtype), 0.0 if default is None else default)})
    return law


def _free_body(model: Model) -> bool:
    """Whether ``model`` is a free body of one link (a ball, a box, a can thrown into a scene), whose
    terrain contacts drift with it (:func:`_terrain_drift`) and whose gyroscopic moment is
    taken at the step's midpoint (:func:`_gyroscopic_inertias`); a robot's links keep the step's
    linearisation and the explicit moment."""
    return model.number_of_links == 1 and model.floating_base


TURN_SCALE = 0.5
"""[rad] The turn of a free body over a step, ``h |w|``, at which its terrain contacts' drift (see
:func:`_terrain_drift`) is half the round contacts' normal drift and half the frame term: the first
nearly whole well below it, the second from twice it."""


def _terrain_drift(
    model: Model, slots: Slots, kin: kin_module.Kinematics, points: jax.Array, normal: jax.Array, dt: jax.Array
) -> jax.Array | None:
    """``(S, 3)`` [m/s]: how much faster than the solve's velocity field the material at each
    terrain contact slot of a free body of one link moves at the end of a step of ``h = dt`` [s]
    (None for any other model), given its kinematics ``kin`` at the step's start (``v`` its base's
    velocity, ``w`` its angular velocity: inertial, world axes, about ``G``'s origin, the base),
    the slots' contact ``points (S, 3)`` [m] (frame ``G``) and the points' terrain ``normal (P, 3)``,
    ``n`` at a slot: on a round surface ``g n n^T h w x (v + w x a) + (1 - g) h w x v``, with
    ``a`` the arm from ``G``'s origin to the slot's centre of curvature (``point + radius n``),
    elsewhere (corners, edges, faces, a cylinder's rim points) ``(1 - g) h w x v``, where
    ``g = 1 / (1 + (h |w| / TURN_SCALE)^4)``.

    The solve's unknown is the body's velocity field at ``G``'s fixed origin; the body moves away
    from it, and the state's update adds back the frame term ``h w x v`` of the velocity products
    (explicit, as the update takes it), so every material point ends the step moving that much
    faster than the solve's field says: without it the linearised law of a body spinning at ``w``
    saw its contacts off by ``h |w| |v|`` (a capsule at 150 rad/s and 3 m/s: 9 m/s at 20 ms),
    pushed too little or pulled, friction rubbed the wrong way, and spinning throws gained energy
    and diverged: where the body turns by radians in a step every slot takes the frame term. Where
    it turns by a fraction of a radian, a round contact takes the normal part of the drift of the
    point it stays under, ``v + w x a`` (a rolling ball's centre; the normal part of
    :func:`.contacts.round_drift`, which contacts between links take whole), and any other slot
    keeps the step's linearisation: the
    whole frame term there, friction included, made piles of boxes, cans and capsules settle
    slower (see docs/changelog.md). Robots keep the step's linearisation."""
    if not _free_body(model):
        return None
    v, w = kin.G_v_B[:3], kin.G_v_B[3:]
    radius = slots.take(model.point_radius)
    n = slots.take(normal).astype(points.dtype)
    arms = points + radius.astype(points.dtype)[:, None] * n
    turn = 1 / (1 + (dt * spatial.safe_norm(w) / TURN_SCALE) ** 4)
    frame = dt * jnp.cross(w, v)
    along = spatial.dot(n, frame + dt * jnp.cross(w, jnp.cross(w, arms)))
    return (1 - turn) * frame + jnp.where((radius > 0)[:, None], turn * along[:, None] * n, 0.0)


def _slot_torques(
    model: Model, law: contacts.ContactParams, linear: contacts.ImplicitContacts, omega: jax.Array, dt: jax.Array
) -> contact_torques.ImplicitTorques:
    """The torsional and rolling friction (:mod:`.contact_torques`) of the terrain contact slots
    of ``linear`` under the per-point ``law``, on the angular velocities ``omega (S, 3)`` of the
    slots' links."""
    slots = linear.slots
    point_link = np.asarray(model.point_link, dtype=int)
    torsion, rolling = (None if x is None else slots.take(x) for x in (law.torsion, law.rolling))
    normal_force = slots.mask(spatial.dot(linear.law.forces, linear.normal))
    inertia = slots.take(smallest_moments(model)[point_link]).astype(omega.dtype)
    return contact_torques.implicit_torques(
        torsion, rolling, normal_force, linear.normal, omega, inertia, dt, slots.link_totals
    )


def _couples(torques: jax.Array) -> jax.Array:
    """``(S, 6)``: pure couples ``torques (S, 3)`` as wrenches."""
    return jnp.concatenate([jnp.zeros_like(torques), torques], axis=-1)


def prepare(
    model: Model,
    state: State,
    world: WorldParams,
    params: ModelParams,
    commanded: jax.Array,
    implicit: bool,
    command_slopes: tuple[jax.Array, jax.Array] | None = None,
    padding: tuple[jax.Array, jax.Array] | None = None,
) -> Prepared:
    """The :class:`Prepared` model at ``state`` under ``commanded`` joint torques ``(n,)`` (the
    user's link wrenches are the caller's to add to ``G_f_ext``); ``implicit``: linearise the
    terrain contacts for a linearly implicit Euler step of ``world.dt``, and take the commanded
    torques at the end of the step with their ``command_slopes`` ``(stiffness, damping) (n,)``
    (see :class:`.control.Commands`).
    ``padding``: of a model whose points are padded (:mod:`.groups`), which points are its own
    ``(P,)`` (the others never touch) and the contact slots each link rests on at most ``(N,)``."""
    kin = kin_module.kinematics(model, state)
    dtype = kin.G_H_L.dtype
    dt = world.dt.astype(dtype)
    point_link = np.asarray(model.point_link, dtype=int)
    centres = _point_positions(model, kin.G_H_L)
    if model.ring_rim is not None:
        centres = _rims_facing_terrain(model, world.terrain, kin.G_H_L, kin.origin, centres)
    if model.point_ellipsoid is not None:
        centres = _ellipsoids_facing_terrain(model, world.terrain, kin.G_H_L, kin.origin, centres)
    depth, normal, W_points = terrain.touch(world.terrain, centres + kin.origin, _terrain_radius(model).astype(dtype))
    points = W_points - kin.origin
    enabled = params.contact_enabled[point_link] & (model.point_terrain > 0)
    present, slot_limit = (None, None) if padding is None else padding
    if present is not None:
        enabled = enabled & present
    linear = added_inertia = deformation_rate = spin = slot_points = slot_link = separating = None
    if implicit:
        counts, plane = params.contact_slots, params.plane_slots
        if plane is not None and plane.off == counts and present is None and terrain.is_plane(world.terrain):
            counts, enabled = plane.counts, enabled & plane.candidates(len(point_link))
        slots = contact_slots(model, depth, enabled, counts, slot_limit, points, normal)
        slot_points, slot_link = slots.take(points), slots.take(point_link)
        velocities = _slot_velocities(kin.G_v, slot_link, slot_points)
        # The touching slots of a link share its law (the other points feel no force).
        touching = slots.mask((slots.take(depth) > 0) & slots.take(enabled))
        law = _shared_law(model, _terrain_law(model, params.contact), depth, slots.scatter(touching.astype(jnp.int32), len(point_link)) > 0)
        drift = _terrain_drift(model, slots, kin, slot_points, normal, dt)
        linear = contacts.implicit_contact_forces(
            law, depth, normal, velocities, state.contact_deformation, enabled, dt, _moved_mass(model).astype(dtype), slots, drift
        )
        separating = contacts.separating_law(law, linear, depth, velocities, dt)
        forces = None
        added_inertia, G_f_ext = _slot_link_terms(slots, slot_points, linear, model.number_of_links)
        added_inertia = dt * added_inertia
        if law.spins:
            spin = _slot_torques(model, law, linear, kin.G_v[slot_link, 3:], dt)
            added_inertia = added_inertia + dt * slots.link_sums(contact_torques.couple_inertias(spin.matrices), model.number_of_links)
            G_f_ext = G_f_ext + slots.link_sums(_couples(spin.step_torques), model.number_of_links)
    else:
        velocities = _point_velocities(model, kin.G_v, points)
        law = _shared_law(model, _terrain_law(model, params.contact), depth, (depth > 0) & enabled)
        forces, deformation_rate = contacts.contact_forces(law, depth, normal, velocities, state.contact_deformation, enabled)
        G_f_ext = link_one_hot(point_link, model.number_of_links, dtype) @ _wrenches(forces, points)
    fluid_damping = None
    if model.fluid.count or model.fluid.geom_count:
        G_f_fluid, G_D_fluid = fluid_forces(model.fluid, model.number_of_links, kin.G_H_L, kin.G_v)
        G_f_ext = G_f_ext + G_f_fluid
        if implicit:  # the drag at the end of the step, linearised: f - D dv
            fluid_damping = G_D_fluid
            added_inertia = added_inertia + dt * G_D_fluid
    if implicit and _free_body(model):
        added_inertia = added_inertia + dt * _gyroscopic_inertias(model, kin)
    effects = joint_effects(
        model,
        configuration.dof_positions(model, state.joint_positions),
        state.joint_velocities,
        commanded,
        limit_stiffness=params.limit_stiffness,
        limit_damping=params.limit_damping,
        friction_velocity=params.friction_velocity,
    )
    if implicit and command_slopes is not None:
        stiffness, damping = command_slopes
        effects = effects._replace(stiffness=effects.stiffness + stiffness, damping=effects.damping + damping)
    return Prepared(
        kin, points, velocities, depth, normal, enabled, law, forces, deformation_rate, linear, G_f_ext, added_inertia, effects,
        fluid_damping, spin, slot_points, slot_link, separating,
    )


class Accelerations(NamedTuple):
    """A model's solve before its outputs (:func:`accelerations`): the base acceleration ``G_a_B
    (6,)`` (``d/dt G_v_WB``), the joint accelerations ``qdd (n,)`` and torques ``tau (n,)`` (the
    command with the joint effects, the rows' torques and, implicit, less the armature's), the
    loop closures' row forces ``loop_forces (r,)``, the separating rows' forces at the terrain
    contact slots ``slot_forces (S, 3)`` [N] (world axes; None with an explicit integrator) and
    the velocity change of every link over the step ``G_dv (N, 6)`` (inertial, world axes about
    ``G``'s origin; zero with an explicit integrator)."""

    G_a_B: jax.Array
    qdd: jax.Array
    tau: jax.Array
    loop_forces: jax.Array
    slot_forces: jax.Array | None
    G_dv: jax.Array


def accelerations(
    model: Model,
    state: State,
    world: WorldParams,
    params: ModelParams,
    prepared: Prepared,
    implicit: bool,
    pair_wrenches: jax.Array | None = None,
    pair_inertia: jax.Array | None = None,
) -> Accelerations:
    """The :class:`Accelerations` of ``prepared``: the articulated-body solve, explicit or
    linearly implicit (with the separating rows), and the constraint rows, with the
    start-of-step wrenches ``pair_wrenches G_f (N, 6)`` and, implicit, the added link inertias
    ``pair_inertia (N, 6, 6)`` of the contacts with other links (world axes, about ``G``'s
    origin), if any. What the block Gauss-Seidel sweeps of :func:`.world.world_step` iterate;
    :func:`finish` makes the rest of the step of them once."""
    kin, effects = prepared.kin, prepared.effects
    dtype = kin.G_H_L.dtype
    dt = world.dt.astype(dtype)
    G_f_ext = prepared.G_f_ext if pair_wrenches is None else prepared.G_f_ext + pair_wrenches
    gravity = world.gravity.astype(dtype)
    if not implicit:
        G_a_B, qdd, factor = articulated_body_factorised(model, kin, effects.torques, G_f_ext, gravity)
        G_a_B, qdd, tau, loop_forces = _couplings(
            model, params, state, kin, factor, G_a_B, qdd, effects.torques, dt, implicit, world.integrator != "rk4"
        )
        return Accelerations(G_a_B, qdd, tau, loop_forces, None, jnp.zeros_like(kin.G_v))
    added_inertia = prepared.added_inertia if pair_inertia is None else prepared.added_inertia + pair_inertia
    tau_step = effects.torques - dt * effects.stiffness * state.joint_velocities
    armature = dt * (effects.damping + dt * effects.stiffness)
    G_a_B, qdd, factor = articulated_body_factorised(
        model, kin, tau_step, G_f_ext, gravity, added_inertia=added_inertia, armature=armature
    )
    released = separating_rows.release(
        model, prepared.linear, prepared.separating, prepared.slot_points, prepared.slot_link, prepared.velocities, kin.G_S,
        factor, G_a_B, qdd, dt,
    )
    G_a_B, qdd, tau, loop_forces = _couplings(
        model, params, state, kin, factor, released.G_a_B, released.joint_accelerations, tau_step, dt, implicit
    )
    G_dv = dt * (G_a_B + kin_module.ancestors_sum(model, kin.G_S * kin_module.to_link_order(model, qdd)[:, None]))
    return Accelerations(G_a_B, qdd, tau - armature * qdd, loop_forces, released.slot_forces, G_dv)


def at_rest(model: Model, state: State, prepared: Prepared) -> Accelerations:
    """The :class:`Accelerations` of the implicit solve of ``prepared`` with every field zero (the
    shapes and types of :func:`accelerations`', with the leading axes of ``state`` and
    ``prepared``, if any): where the sweeps of :func:`.world.world_step` start."""
    kin, zeros = prepared.kin, jnp.zeros_like(state.joint_velocities)
    loop_forces = jnp.zeros(zeros.shape[:-1] + (model.loops.rows,), zeros.dtype)
    slot_forces = jnp.zeros_like(prepared.linear.normal)
    return Accelerations(jnp.zeros_like(kin.G_v_B), zeros, zeros, loop_forces, slot_forces, jnp.zeros_like(kin.G_v))


def solve(
    model: Model,
    state: State,
    world: WorldParams,
    params: ModelParams,
    prepared: Prepared,
    implicit: bool,
    pair_wrenches: jax.Array | None = None,
    pair_inertia: jax.Array | None = None,
) -> Solved:
    """The rates and outputs of ``prepared`` (see :func:`.step.step`), with the start-of-step wrenches
    ``pair_wrenches G_f (N, 6)`` and, implicit, the added link inertias ``pair_inertia (N, 6, 6)``
    of the contacts with other links (world axes, about ``G``'s origin), if any. The applied
    wrenches of :class:`Solved` leave those out (the caller linearised them)."""
    solved = accelerations(model, state, world, params, prepared, implicit, pair_wrenches, pair_inertia)
    return finish(model, state, world, prepared, implicit, solved)


def finish(model: Model, state: State, world: WorldParams, prepared: Prepared, implicit: bool, solved: Accelerations) -> Solved:
    """The rates and outputs of the step of ``prepared`` whose solve gave ``solved``
    (:func:`accelerations`)."""
    kin = prepared.kin
    dt = world.dt.astype(kin.G_H_L.dtype)
    point_link = np.asarray(model.point_link, dtype=int)
    points, forces = prepared.points, prepared.forces
    G_a_B, qdd, tau, loop_forces, G_dv = solved.G_a_B, solved.qdd, solved.tau, solved.loop_forces, solved.G_dv
    couples = None
    if implicit:
        linear = prepared.linear
        slot_points, slot_link = prepared.slot_points, prepared.slot_link
        dv_slots = _slot_velocities(G_dv, slot_link, slot_points)
        slots = linear.slots
        slot_forces = linear.step_forces - linear.resist(dv_slots) + solved.slot_forces
        forces = slots.scatter(slot_forces, len(point_link))
        deformation_next = contacts.implicit_deformation(
            prepared.contact, linear, prepared.normal, state.contact_deformation, prepared.velocities + dv_slots, dt
        )
        deformation_rate = (deformation_next - state.contact_deformation) / dt
        G_f_applied = prepared.G_f_ext + slots.link_sums(
            _wrenches(slot_forces - linear.step_forces, slot_points), model.number_of_links
        )
        if prepared.fluid_damping is not None:
            G_f_applied = G_f_applied - spatial.matvec(prepared.fluid_damping, G_dv)
        if prepared.torques is not None:
            spin = prepared.torques
            slot_torques = slots.mask(spin.step_torques - spin.resist(G_dv[slot_link, 3:]))
            couples = slots.scatter(slot_torques, len(point_link))
            G_f_applied = G_f_applied + slots.link_sums(_couples(slot_torques - spin.step_torques), model.number_of_links)
        in_contact = linear.carried
    else:
        deformation_rate = prepared.deformation_rate
        G_f_applied = prepared.G_f_ext
        in_contact = (prepared.depth > 0) & prepared.enabled
    G_H_B, G_v_B = kin.G_H_L[0], kin.G_v_B
    base_acceleration = rep.acceleration_from_inertial(G_a_B, G_H_B, G_v_B, state.velocity_representation, kin.origin)
    omega = G_v_B[3:]
    position_rate = G_v_B[:3] + jnp.cross(omega, G_H_B[:3, 3])
    quaternion_rate = spatial.quaternion_derivative(state.base_quaternion, omega)
    if not model.floating_base:
        base_acceleration = jnp.zeros_like(base_acceleration)
        position_rate, quaternion_rate = jnp.zeros_like(position_rate), jnp.zeros_like(quaternion_rate)
    link_origins = kin.G_H_L[point_link, :3, 3]
    outputs = StepOutput(
        contact_positions=points + kin.origin,
        contact_normals=prepared.normal,
        penetration=jnp.maximum(prepared.depth, 0.0),
        contact_forces=forces,
        contact_torques=jnp.cross(points - link_origins, forces) if couples is None else jnp.cross(points - link_origins, forces) + couples,
        in_contact=in_contact,
        joint_torques=tau,
        base_acceleration=base_acceleration,
        joint_accelerations=qdd,
        loop_forces=loop_forces,
        finite=jnp.asarray(True),
    )
    rates = _Rates(
        base_position=position_rate,
        base_quaternion=quaternion_rate,
        base_velocity=base_acceleration,
        joint_positions=configuration.position_rates(model, state.joint_positions, state.joint_velocities),
        joint_velocities=qdd,
        contact_deformation=deformation_rate,
    )
    return Solved(rates, outputs, G_dv, G_f_applied)


def _couplings(
    model: Model, params: ModelParams, state: State, kin: kin_module.Kinematics, factor: ArticulatedFactor,
    G_a_B: jax.Array, qdd: jax.Array, tau: jax.Array, dt: jax.Array, implicit: bool, euler: bool = True,
) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    """The accelerations of a solve with the model's joint couplings, loop closures, tendon rows,
    ball-joint cone limits and soft joint limits enforced (:func:`.couplings.enforce`,
    :func:`.tendons.tendon_rows`, :func:`.ball_limits.cone_rows`, :func:`.joint_limits.limit_rows`),
    the joint torques ``tau (n,)`` with the joint-space rows' added and the forces of the loop
    closures' rows ``(r,)``; a model without any is left as it is; ``euler``: the step is
    Euler's (else RK4's stages)."""
    if not (model.couplings.rows or model.loops.rows or model.tendons.rows or model.ball_cones.count or model.soft_limits.count):
        return G_a_B, qdd, tau, jnp.zeros(0, qdd.dtype)
    extra = tendon_rows(model, state, kin, params.friction_velocity, dt, implicit) if model.tendons.rows else None
    for present, rows in ((model.ball_cones.count, cone_rows), (model.soft_limits.count, limit_rows)):
        if present:
            more = rows(model, state, dt)
            extra = more if extra is None else extra.stack(more)
    G_a_B, qdd, tau_couplings, forces = couplings.enforce(model, params, state, kin, factor, G_a_B, qdd, dt, euler, extra)
    return G_a_B, qdd, tau + tau_couplings, forces[model.couplings.rows :]


def advance(state: State, rates: _Rates, dt: jax.Array) -> State:
    """``state + dt * rates`` field by field (the quaternion is renormalised by the kinematics)."""
    return state.replace(**{name: getattr(state, name) + dt * value for name, value in rates._asdict().items()})


def normalized(model: Model, state: State) -> State:
    """``state`` with its base and ball joint quaternions of unit norm (after an explicit integrator)."""
    return state.replace(
        base_quaternion=spatial.normalize(state.base_quaternion),
        joint_positions=configuration.normalize_positions(model, state.joint_positions),
    )


def is_finite(state: State) -> jax.Array:
    """Whether every numeric field of ``state`` is finite (a scalar)."""
    leaves = jax.tree.leaves(state)
    return jnp.all(jnp.stack([jnp.all(jnp.isfinite(leaf)) for leaf in leaves]))


def euler_advance(model: Model, state: State, rates: _Rates, dt: jax.Array) -> State:
    """Semi-implicit Euler: the velocities first, then the positions from the new velocities."""
    base_velocity = state.base_velocity + dt * rates.base_velocity
    joint_velocities = state.joint_velocities + dt * rates.joint_velocities
    G_H_B, origin = kin_module.internal_base_pose(state)
    G_v_B = rep.velocity_to_inertial(base_velocity, G_H_B, state.velocity_representation, origin)
    if model.floating_base:
        position = state.base_position + dt * G_v_B[:3]
        quaternion = spatial.integrate_quaternion(state.base_quaternion, G_v_B[3:], dt)
    else:
        position, quaternion = state.base_position, state.base_quaternion
    return state.replace(
        base_position=position,
        base_quaternion=quaternion,
        base_velocity=base_velocity,
        joint_positions=configuration.integrate_positions(model, state.joint_positions, joint_velocities, dt),
        joint_velocities=joint_velocities,
        contact_deformation=state.contact_deformation + dt * rates.contact_deformation,
    )


def with_mocap_poses(model: Model, positions: jax.Array | None, quaternions: jax.Array | None) -> Model:
    """``model`` with the mocap bodies its loop closures hold on at ``positions (k, 3)`` [m] and
    ``quaternions (k, 4)`` (wxyz; world frame; in the order of ``model.loops.mocap_names``),
    each left at the model's (the file's) when None (see :meth:`.loops.LoopClosures.posed`)."""
    if positions is None and quaternions is None:
        return model
    try:
        return model.replace(loops=model.loops.posed(positions, quaternions))
    except ValueError as error:
        raise ValueError(f"model {model.name!r}: {error}") from None
