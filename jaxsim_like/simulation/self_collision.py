"""Self-collisions: the collidable points of a link against the solid shapes of another link
of the same model.

A pair (collidable point, shape) is tested when the point and the shape belong to different
links that are not parent and child in the (lumped) tree (adjacent links are skipped, as
Gazebo and DART do), and when the SRDF does not disable the collisions of the two description
links they came from (``Model.point_source`` and ``Model.shape_source``: a link lumped into its
parent keeps its own name there, so SRDF pairs naming it hold for its points and shapes only).
The pairs are computed once, in numpy, by :meth:`SelfCollision.build`.

Each pair gives a penetration depth ``d`` (positive inside) and the shape's outward normal
``n`` at the point, from the signed distance of :func:`.collision.points.signed_distance`:
``r - |p - c|`` from the sphere's centre (from the nearest point of the capsule's segment; at
that point itself the normal is the shape's +x), the distance to the face of least penetration
of a box or of a cylinder (its side or a cap). A swept point (a ball of radius ``rho`` around
``p``) is ``rho`` deeper, and touches at ``p - rho n``.
The normal force is the terrain's Hunt-Crossley law (:func:`.contacts.normal_force`, never
pulling), with the stiffness and damping of the links' terrain law over :data:`SHARE`, at the
penetration rate ``-n . v``, with ``v`` the velocity of the point relative to
the shape link's material point at the same place. Friction is a smoothed Coulomb law
``f_t = -mu f_n v_t / sqrt(|v_t|^2 + v_s^2)``: bounded by ``mu f_n``, with a finite gradient at
zero slip, and without the tangential memory of the terrain contacts (self-contacts keep no
state, so they slide slowly under a tangential load instead of sticking). The point's link gets
the force, the shape's link the opposite force at the same point: internal forces only.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..dynamics import spatial
from ..dynamics.model import Model
from ..dynamics.tree import HULL
from ..pytree import pytree_dataclass
from .collision.points import KIND_CODES, signed_distance
from .contacts import ContactParams, normal_force

SHARE = 2
"""A self-contact has the stiffness and damping of the links' terrain law over ``SHARE``: with
the default law (the model's weight on two links sinks them by ``max_penetration``, see
:meth:`.params.SimulationParams.build`), the model's weight on four self-contacts sinks them by
``max_penetration``."""


@pytree_dataclass(static=["point", "shape"])
class SelfCollision:
    """The self-collision pairs of a model and the regularisation of their friction.

    Pair ``k`` tests collidable point ``point[k]`` against shape ``shape[k]`` (static tuples of
    ``K`` indices, ordered by point then shape); ``slip_velocity`` [m/s] (traced) is ``v_s`` of the
    smoothed Coulomb friction, the slip speed at which it reaches ``mu f_n / sqrt(2)``.
    """

    slip_velocity: jax.Array
    point: tuple[int, ...] = ()
    shape: tuple[int, ...] = ()

    @staticmethod
    def build(model: Model, *, srdf: Any = None, slip_velocity: float = 0.01) -> "SelfCollision":
        """The pairs of ``model`` (see the module docstring), skipping the collisions that ``srdf``
        disables (default: the SRDF loaded with the model, ``model.srdf``; none when both are None)."""
        if not slip_velocity > 0:
            raise ValueError(f"slip_velocity must be positive, got {slip_velocity}")
        pairs = collision_pairs(model, model.srdf if srdf is None else srdf)
        return SelfCollision(
            slip_velocity=jnp.asarray(float(slip_velocity)),
            point=tuple(p for p, _ in pairs),
            shape=tuple(s for _, s in pairs),
        )

    @property
    def pairs(self) -> tuple[tuple[int, int], ...]:
        """``(point, shape)`` of every pair."""
        return tuple(zip(self.point, self.shape))



def collision_pairs(model: Model, srdf: Any = None) -> tuple[tuple[int, int], ...]:
    """``(point, shape)`` index pairs to test, ordered by point then shape: different links, not
    parent and child (of a model with collision rules, MJCF: those the rules let touch, see
    :class:`~..parsers.description.CollisionRules`; explicit pairs need the world step's
    collision table), and not disabled by ``srdf.collision_disabled(point source, shape source)``;
    hulls are not among the shapes (their points are)."""
    rules = model.collision_rules
    point_collision = model.point_collision or ("",) * len(model.point_link)
    shape_collision = model.shape_collision or ("",) * len(model.shape_link)
    pairs = []
    for p, (point_link, point_source) in enumerate(zip(model.point_link, model.point_source)):
        for s, (shape_link, shape_source) in enumerate(zip(model.shape_link, model.shape_source)):
            if point_link == shape_link or model.shape_kind[s] == HULL:
                continue
            if rules is None and (model.parent[point_link] == shape_link or model.parent[shape_link] == point_link):
                continue
            if rules is not None and not rules.touch(point_source, point_collision[p], shape_source, shape_collision[s]):
                continue
            if srdf is not None and srdf.collision_disabled(point_source, shape_source):
                continue
            pairs.append((p, s))
    return tuple(pairs)


def penetration(model: Model, pairs: SelfCollision, W_H_L: jax.Array, points: jax.Array) -> tuple[jax.Array, jax.Array]:
    """Depth ``(K,)`` [m] (positive inside) and the shape's outward normal ``(K, 3)`` (world axes)
    of every pair, given the link poses ``W_H_L (N, 4, 4)`` and the centres ``(P, 3)`` of the
    swept points in the same frame (:func:`.collision.points.signed_distance`, plus the radius)."""
    shape = np.asarray(pairs.shape, dtype=int)
    W_H_S = W_H_L[np.asarray(model.shape_link, dtype=int)[shape]] @ model.shape_transform[shape]
    R, c = W_H_S[:, :3, :3], W_H_S[:, :3, 3]
    S_p = jnp.einsum("kji,kj->ki", R, points[np.asarray(pairs.point, dtype=int)] - c)
    kind = np.asarray([KIND_CODES[model.shape_kind[s]] for s in shape], dtype=np.int32)
    distance, S_n = jax.vmap(signed_distance)(S_p, kind, model.shape_size[shape])
    return model.point_radius[np.asarray(pairs.point, dtype=int)] - distance, jnp.einsum("kij,kj->ki", R, S_n)


def contact_forces(
    contact: ContactParams, slip_velocity: jax.Array, depth: jax.Array, normal: jax.Array, velocity: jax.Array
) -> jax.Array:
    """Forces ``(K, 3)`` [N] (world axes) on the points: Hunt-Crossley along ``normal (K, 3)`` plus
    smoothed Coulomb friction (no tangential memory), from ``depth (K,)`` [m] and the relative
    ``velocity (K, 3)`` [m/s]; ``contact``'s fields are scalars or ``(K,)``."""
    normal_speed = spatial.dot(normal, velocity)
    f_n = normal_force(contact, depth, -normal_speed)
    v_t = velocity - normal_speed[:, None] * normal
    v_s = jnp.maximum(slip_velocity, 1e-12)
    scale = jnp.maximum(contact.friction, 0.0) * f_n / jnp.sqrt(spatial.dot(v_t, v_t) + v_s**2)
    return f_n[:, None] * normal - scale[:, None] * v_t


def link_wrenches(
    model: Model,
    pairs: SelfCollision,
    contact: ContactParams,
    W_H_L: jax.Array,
    W_v: jax.Array,
    centres: jax.Array,
    velocities: jax.Array,
) -> tuple[jax.Array, jax.Array, jax.Array]:
    """The self-contact wrenches ``(N, 6)`` on the links ([force; torque], world axes, torque about
    the origin of the frame of ``W_H_L``), the force ``(K, 3)`` [N] on each pair's contact point
    ``p - rho n`` and its depth ``(K,)`` [m].

    ``W_H_L (N, 4, 4)`` and the inertial link velocities ``W_v (N, 6)`` are in one frame with world
    axes, as are the centres ``(P, 3)`` of the swept points and their velocities ``(P, 3)``;
    ``contact`` is the links' terrain law (each pair's is that over :data:`SHARE`), its fields
    scalars or ``(P,)`` per collidable point.
    """
    dtype = W_H_L.dtype
    point = np.asarray(pairs.point, dtype=int)
    if point.size == 0:
        return jnp.zeros((model.number_of_links, 6), dtype), jnp.zeros((0, 3), dtype), jnp.zeros((0,), dtype)
    shape_link = np.asarray(model.shape_link, dtype=int)[np.asarray(pairs.shape, dtype=int)]
    depth, normal = penetration(model, pairs, W_H_L, centres)
    point_link = np.asarray(model.point_link, dtype=int)[point]
    arm = -model.point_radius[point][:, None] * normal
    p = centres[point] + arm
    W_v_shape = W_v[shape_link]
    relative = velocities[point] + jnp.cross(W_v[point_link, 3:], arm) - (W_v_shape[:, :3] + jnp.cross(W_v_shape[:, 3:], p))
    shared = contact.replace(stiffness=contact.stiffness / SHARE, damping=contact.damping / SHARE)
    per_pair = jax.tree.map(lambda x: x if jnp.ndim(x) == 0 else x[point], shared)
    forces = contact_forces(per_pair, pairs.slip_velocity.astype(dtype), depth, normal, relative)
    forces = jnp.where((depth > 0)[:, None], forces, 0.0)
    links = np.arange(model.number_of_links)[:, None]
    pair_map = jnp.asarray((links == point_link[None]).astype(float) - (links == shape_link[None]), dtype)
    wrenches = pair_map @ jnp.concatenate([forces, jnp.cross(p, forces)], axis=-1)
    return wrenches, forces, jnp.maximum(depth, 0.0)
