"""Loop closures between links of two models of a world (MJCF connects and welds across trees,
:class:`~jaxsim_like.parsers.description.WorldClosure`), enforced by the world step.

The closures are :class:`~jaxsim_like.dynamics.loops.LoopClosures` whose sides are links of the
world in its global link order (the models' links, model after model). Their rows are those of
the closures of one model (:func:`~jaxsim_like.dynamics.loops.rows_between`), with the world's
origin for the models' ``G`` origins. The world's implicit step holds them as one more block of
its solve (:func:`.world._world_rates`): once the models are solved (with the contacts between
them, after the Gauss-Seidel sweeps), the rows' forces ``lambda`` follow the same reference
and compliance as a model's closures (:mod:`.couplings`), from the rows' effective inverse mass
``A = G M~^-1 G^T`` through the solves of every model they touch (the derivative of their end
velocity, one forward-mode pass per row, the other models' contact wrenches held at their
last sweep's), and the models are solved once more with the wrenches ``G^T lambda``. Between
models that only the closures couple, the rows hold as a model's own closures do.
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np

from ..dynamics.loops import KINDS, NO_MOCAP, LoopClosures, LoopRows, rows_between
from ..dynamics.model import Model
from ..parsers.description import WorldClosure
from ..parsers.errors import ModelLoadError
from ..pytree import pytree_dataclass
from .constraint_rows import Rows, row_forces
from .couplings import EqualityRows, loop_impedance, mujoco_reference, reference_velocity


@pytree_dataclass(static=["model1", "model2"])
class WorldClosures:
    """``l`` closures between links of a world's models: ``loops`` (their ``link1`` and ``link2``
    in the world's global link order), and the models ``model1`` and ``model2 (l,)`` of their
    sides (static)."""

    loops: LoopClosures
    model1: tuple[int, ...] = ()
    model2: tuple[int, ...] = ()

    @staticmethod
    def build(models: Sequence[Model], closures: Sequence[WorldClosure]) -> "WorldClosures | None":
        """The closures ``closures`` between the ``models`` of a world, found by the models'
        names and the links' (or frames') names; None for none. Raises
        :class:`~jaxsim_like.parsers.errors.ModelLoadError` at a closure's location for a model
        or link it names that the world does not have."""
        if not closures:
            return None
        dtype = models[0].link_mass.dtype
        names = [model.name for model in models]
        offsets = np.cumsum([0] + [model.number_of_links for model in models])
        sides = []
        for closure in closures:
            where = closure.location
            if closure.kind not in KINDS:
                raise ModelLoadError(f"loop closure {closure.name!r}: kind {closure.kind!r} is not one of {list(KINDS)}",
                                     file=where.file, line=where.line, element=where.element)
            pair = []
            for model_name, link, L_H_F in ((closure.model1, closure.link1, closure.L1_H_F1), (closure.model2, closure.link2, closure.L2_H_F2)):
                if names.count(model_name) != 1:
                    found = "no" if model_name not in names else "more than one"
                    raise ModelLoadError(f"loop closure {closure.name!r}: {found} model named {model_name!r} in the world ({names})",
                                         file=where.file, line=where.line, element=where.element)
                k = names.index(model_name)
                index, frame = _side(models[k], closure, link, L_H_F)
                pair.append((k, int(offsets[k]) + index, frame))
            if pair[0][0] == pair[1][0]:
                raise ModelLoadError(f"loop closure {closure.name!r} joins two links of model {closure.model1!r}: a closure of the model",
                                     file=where.file, line=where.line, element=where.element)
            sides.append(pair)
        count = len(closures)

        def array(values, shape=None) -> jax.Array:
            values = np.asarray(values, dtype=float)
            return jnp.asarray(values if shape is None else values.reshape(shape), dtype=dtype)

        loops = LoopClosures(
            frame1=array([one[2] for one, _ in sides]),
            frame2=array([two[2] for _, two in sides]),
            torque_scale=array([c.torque_scale for c in closures]),
            time_constant=array([c.time_constant for c in closures]),
            damping_ratio=array([c.damping_ratio for c in closures]),
            mocap_position=array(np.zeros((0, 3))),
            mocap_quaternion=array(np.zeros((0, 4))),
            solimp=array([c.solimp for c in closures]),
            inverse_weight=array([c.inverse_weight for c in closures]),
            pitch=array([c.pitch for c in closures]),
            link1=tuple(one[1] for one, _ in sides),
            link2=tuple(two[1] for _, two in sides),
            kind=tuple(c.kind for c in closures),
            names=tuple(c.name for c in closures),
            mocap1=(NO_MOCAP,) * count,
            mocap2=(NO_MOCAP,) * count,
        )
        return WorldClosures(loops, tuple(one[0] for one, _ in sides), tuple(two[0] for _, two in sides))


def _side(model: Model, closure: WorldClosure, link: str, L_H_F: np.ndarray) -> tuple[int, np.ndarray]:
    """A closure side's link index in ``model`` and its frame in that link: a link lumped into
    its body is one of the model's frames."""
    if link in model.link_names:
        return model.link_names.index(link), np.asarray(L_H_F, dtype=float)
    if link in model.frame_names:
        f = model.frame_names.index(link)
        return int(model.frame_link[f]), np.asarray(model.frame_transform[f], dtype=float) @ np.asarray(L_H_F, dtype=float)
    where = closure.location
    raise ModelLoadError(f"loop closure {closure.name!r}: no link {link!r} in model {model.name!r}",
                         file=where.file, line=where.line, element=where.element)


def closure_rows(closures: WorldClosures, poses: jax.Array, velocities: jax.Array, biases: jax.Array) -> LoopRows:
    """The :class:`~jaxsim_like.dynamics.loops.LoopRows` of ``closures`` at the world's link
    ``poses (L, 4, 4)``, spatial ``velocities`` and path accelerations ``biases (L, 6)`` (world
    frame: world axes, about the world's origin)."""
    loops = closures.loops
    return rows_between(loops, poses, velocities, biases, np.asarray(loops.link1, dtype=int), np.asarray(loops.link2, dtype=int))


def closure_forces(closures: WorldClosures, rows: LoopRows, effective: jax.Array, start: jax.Array, dt: jax.Array) -> jax.Array:
    """``lambda (r,)``: the rows' forces over a step of ``dt`` [s] from their effective inverse
    mass ``effective (r, r)`` and end velocity without them ``start (r,)``: the reference and
    compliance of a model's closures (see :func:`.couplings.enforce`)."""
    loops = closures.loops
    dtype = rows.violation.dtype
    closure = loops.row_closure
    d, d_width, resistance = loop_impedance(loops, rows.violation)
    time_constant, damping_ratio = loops.time_constant.astype(dtype)[closure], loops.damping_ratio.astype(dtype)[closure]
    if loops.mujoco_reference:
        equality = EqualityRows(None, None, (), rows.violation, rows.rate, rows.path_bias, time_constant, damping_ratio, d, d_width, resistance)
        target = mujoco_reference(equality, dt)
    else:
        half_bias = 0.5 * dt * rows.path_bias
        target = reference_velocity(rows.violation, rows.rate - half_bias, time_constant * d_width, damping_ratio, dt, d) - half_bias
    effective = 0.5 * (effective + effective.T)
    size = effective.shape[0]
    effective = effective + jnp.finfo(dtype).eps ** 0.75 * jnp.trace(effective) / size * jnp.eye(size, dtype=dtype)
    bilateral = Rows.bilateral(jnp.zeros((size, 0), dtype), target)._replace(compliance=dt * resistance)
    return row_forces(bilateral, effective, start, dt)


def row_wrenches(closures: WorldClosures, rows: LoopRows, forces: jax.Array, origins: jax.Array) -> jax.Array:
    """``(L, 6)``: the wrenches of the rows' ``forces (r,)`` on the world's links (world axes,
    about each link's model's ``G`` origin ``origins (L, 3)`` [m], world frame)."""
    loops = closures.loops
    closure = loops.row_closure
    on = jnp.concatenate([forces[:, None] * rows.wrench1, forces[:, None] * rows.wrench2])
    links = np.concatenate([np.asarray(loops.link1, dtype=int)[closure], np.asarray(loops.link2, dtype=int)[closure]])
    about_world = jax.ops.segment_sum(on, jnp.asarray(links), origins.shape[0])
    # A moment about the world's origin is, about the point c, n - c x f.
    return about_world.at[:, 3:].add(-jnp.cross(origins, about_world[:, :3]))


def about_world_origin(values: jax.Array, origins: jax.Array) -> jax.Array:
    """``(L, 6)``: spatial velocities (or accelerations) ``values (L, 6)`` about the points
    ``origins (L, 3)`` [m] (world frame) taken about the world's origin."""
    return values.at[:, :3].add(-jnp.cross(values[:, 3:], origins))


def end_velocity(closures: WorldClosures, rows: LoopRows, velocities: jax.Array) -> jax.Array:
    """``(r,)``: the rows' rate ``G nu`` at the world's link ``velocities (L, 6)`` (world frame)."""
    loops = closures.loops
    closure = loops.row_closure
    v1 = velocities[np.asarray(loops.link1, dtype=int)[closure]]
    v2 = velocities[np.asarray(loops.link2, dtype=int)[closure]]
    return jnp.sum(rows.wrench1 * v1, axis=-1) + jnp.sum(rows.wrench2 * v2, axis=-1)


def world_poses(G_H_L: jax.Array, origins: jax.Array) -> jax.Array:
    """``(L, 4, 4)``: the link poses ``G_H_L`` in the world frame, from their ``G`` ``origins (L, 3)``."""
    return G_H_L.at[:, :3, 3].add(origins)

