"""Loop closures: MJCF ``connect`` and ``weld`` equalities, frames of two links (or of a link
and the world, or a moving frame of the world) held together.

Closure ``k`` holds frame ``F1`` of link ``link1[k]`` on frame ``F2`` of link ``link2[k]``
(``WORLD``: a frame fixed in the world, or, where ``mocap1[k]`` or ``mocap2[k]`` names one, a
frame of a mocap body: a frame of the world at the pose ``mocap_position``,
``mocap_quaternion`` of that body, which the simulation step takes as an input; its velocity
counts as zero, as in MuJoCo). Its violation, world axes:

- ``connect`` (3 rows): ``p_F1 - p_F2`` [m], the frames' origins;
- ``weld`` (6 rows): those 3, then ``s vec(q_F2^-1 q_F1)`` [1] with the torque scale ``s``
  (MuJoCo's orientation error; the quaternion of the relative rotation taken with a
  non-negative scalar part, so rotation errors below a half turn).

Each row is the rate of its violation ``G nu = w1 . v_1 + w2 . v_2``: the dot of the row's unit
wrenches ``w1, w2 (6,)`` (world axes, about ``G``'s origin) with the spatial velocities of its two
links; ``G^T lambda`` is the generalised force of the wrenches ``lambda w1`` on ``link1`` and
``lambda w2`` on ``link2``. The simulation step enforces the rows with the joint couplings'
mechanism (:mod:`jaxsim_like.simulation.couplings`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from ..pytree import pytree_dataclass
from . import kinematics as kin_module
from . import spatial

if TYPE_CHECKING:
    from .model import Model

WORLD = -1
"""The link of a closure's frame fixed in the world or on a mocap body."""
NO_MOCAP = -1
"""The mocap body of a closure's side on a link or fixed in the world."""


@pytree_dataclass(static=["link1", "link2", "weld", "names", "mocap1", "mocap2", "mocap_names", "mujoco_reference"])
class LoopClosures:
    """``l`` closures: ``frame1`` and ``frame2 (l, 4, 4)``, ``L1_H_F1`` and ``L2_H_F2`` (for a
    ``WORLD`` side: ``W_H_F``; on a mocap body: ``M_H_F`` in the body), ``torque_scale (l,)``
    (welds), and the file's ``time_constant`` [s] and ``damping_ratio (l,)`` (MJCF ``solref``,
    the defaults of ``SimulationParams.build``), the pose of each of the ``k`` mocap bodies
    the closures hold on, ``mocap_position (k, 3)`` [m] and ``mocap_quaternion (k, 4)`` (wxyz,
    world frame; the file's by default, see :meth:`posed`), each closure's impedance parameters
    ``solimp (l, 5)`` and the approximate inverse masses ``inverse_weight (l, 2)`` of its
    translation and rotation rows (:class:`~jaxsim_like.parsers.description.LoopClosure`)
    (traced); the links ``link1`` and
    ``link2 (l,)`` in the model's link order, the mocap bodies ``mocap1`` and ``mocap2 (l,)``
    of their ``WORLD`` sides (``NO_MOCAP``: fixed in the world), whether each is a ``weld``
    (else a connect), their ``names`` and the ``mocap_names (k,)``, and ``mujoco_reference``
    (static): False (the default), the step holds the rows on the implicit oscillator with the
    path term over the step (:mod:`jaxsim_like.simulation.couplings`), which keeps a stiff loop
    closed to ``O(h^3)`` per step; True, on MuJoCo's explicit reference
    (:func:`jaxsim_like.simulation.couplings.mujoco_reference`), which moves as ``mj_step``'s
    Euler with the semi-implicit Euler step, and opens as far."""

    frame1: jax.Array
    frame2: jax.Array
    torque_scale: jax.Array
    time_constant: jax.Array
    damping_ratio: jax.Array
    mocap_position: jax.Array
    mocap_quaternion: jax.Array
    solimp: jax.Array
    inverse_weight: jax.Array
    link1: tuple[int, ...] = ()
    link2: tuple[int, ...] = ()
    weld: tuple[bool, ...] = ()
    names: tuple[str, ...] = ()
    mocap1: tuple[int, ...] = ()
    mocap2: tuple[int, ...] = ()
    mocap_names: tuple[str, ...] = ()
    mujoco_reference: bool = False

    @staticmethod
    def none(dtype) -> "LoopClosures":
        """No closure (arrays put on the device from NumPy, as :meth:`.JointCouplings.none`)."""
        frames = jnp.asarray(np.zeros((0, 4, 4)), dtype=dtype)
        scalars = (jnp.asarray(np.zeros(0), dtype=dtype) for _ in range(3))
        return LoopClosures(
            frames, frames, *scalars, *(jnp.asarray(np.zeros((0, size)), dtype=dtype) for size in (3, 4, 5, 2))
        )

    def posed(self, positions: jax.Array | None, quaternions: jax.Array | None) -> "LoopClosures":
        """These closures with their mocap bodies at ``positions (k, 3)`` [m] and ``quaternions
        (k, 4)`` (wxyz, normalised by the step; world frame), each left as it is when None."""
        changes = {}
        for field, values, size in (("mocap_position", positions, 3), ("mocap_quaternion", quaternions, 4)):
            if values is None:
                continue
            current = getattr(self, field)
            values = jnp.asarray(values, current.dtype)
            if values.shape != current.shape:
                raise ValueError(
                    f"{field.replace('_', ' ')}s must have shape {current.shape} (one {size}-vector per mocap body "
                    f"of the closures, {list(self.mocap_names)}), got {tuple(values.shape)}"
                )
            changes[field] = values
        return self.replace(**changes) if changes else self

    @property
    def count(self) -> int:
        """The number of closures ``l`` (static)."""
        return len(self.link1)

    @property
    def row_closure(self) -> np.ndarray:
        """``(r,)``: the closure of each row (static)."""
        return np.repeat(np.arange(self.count), [6 if weld else 3 for weld in self.weld]).astype(int)

    @property
    def rows(self) -> int:
        """The number of rows ``r`` (static): 3 per connect, 6 per weld."""
        return int(self.row_closure.size)

    @property
    def row_rotational(self) -> np.ndarray:
        """``(r,)``: whether each row is a rotation row (a weld's last three; static)."""
        return self._row_index() % 6 >= 3

    def _row_index(self) -> np.ndarray:
        """``(r,)``: each row's index in the ``(l * 6)`` rows computed for every closure as a weld."""
        return np.concatenate([np.arange(6 if weld else 3) + 6 * k for k, weld in enumerate(self.weld)] + [np.zeros(0, int)])


class LoopRows(NamedTuple):
    """The rows of a model's closures at a state, ``r`` rows: the unit wrenches ``wrench1`` and
    ``wrench2 (r, 6)`` on the closures' two links (world axes, about ``G``'s origin; zero on a
    ``WORLD`` side), the ``violation (r,)``, its rate ``G nu (r,)`` and ``path_bias (r,)``: the
    violation's second derivative at zero generalised acceleration (``J_dot nu``; along an Euler
    step's path, the base origin moving at a constant velocity, as that step integrates it)."""

    wrench1: jax.Array
    wrench2: jax.Array
    violation: jax.Array
    rate: jax.Array
    path_bias: jax.Array


def _vee_antisymmetric(E: jax.Array) -> jax.Array:
    """``(..., 3)``: ``(E32 - E23, E13 - E31, E21 - E12)``."""
    return jnp.stack([E[..., 2, 1] - E[..., 1, 2], E[..., 0, 2] - E[..., 2, 0], E[..., 1, 0] - E[..., 0, 1]], axis=-1)


def _path_bias_accelerations(model: Model, kin: kin_module.Kinematics, euler: bool) -> jax.Array:
    """``(N, 6)``: each link's spatial acceleration at zero generalised acceleration, ``J_dot
    nu``, plus with ``euler`` and a floating base ``[o_dot x omega; 0]``: along an Euler step's
    path the base origin moves at the constant velocity ``o_dot`` while the base turns at
    ``omega``, so the base's spatial velocity (about ``G``'s fixed origin) changes at that rate."""
    c = kin_module.velocity_products(model, kin.G_v, kin.G_S, kin.qd)
    bias = kin_module.ancestors_sum(model, c)
    if euler and model.floating_base:
        base = jnp.concatenate([jnp.cross(kin.G_v_B[:3], kin.G_v_B[3:]), jnp.zeros(3, bias.dtype)])
        bias = bias + base
    return bias


def loop_rows(model: Model, kin: kin_module.Kinematics, *, euler: bool = True) -> LoopRows:
    """The :class:`LoopRows` of ``model.loops`` at the kinematics ``kin`` of a state, their path
    bias along an Euler step's path (``euler=False``: along the continuous motion)."""
    loops = model.loops
    dtype = kin.G_H_L.dtype
    # The mocap bodies' sides take the entries after the links: their poses in G, at rest; a
    # WORLD side the extra last entry: the world's pose in G, at rest.
    world = jnp.eye(4, dtype=dtype).at[:3, 3].set(-kin.origin)
    poses = jnp.concatenate([kin.G_H_L, world[None]])
    if loops.mocap_names:
        mocap = spatial.pose_to_transform(loops.mocap_position.astype(dtype) - kin.origin, loops.mocap_quaternion.astype(dtype))
        poses = jnp.concatenate([kin.G_H_L, mocap, world[None]])
    still = len(loops.mocap_names) + 1
    velocities = jnp.concatenate([kin.G_v, jnp.zeros((still, 6), dtype)])
    biases = jnp.concatenate([_path_bias_accelerations(model, kin, euler), jnp.zeros((still, 6), dtype)])
    sides = []
    for links, mocap_bodies, frames in ((loops.link1, loops.mocap1, loops.frame1), (loops.link2, loops.mocap2, loops.frame2)):
        index = np.asarray(links, dtype=int)  # WORLD (-1) is the last entry
        if loops.mocap_names:
            index = np.where(np.asarray(mocap_bodies, dtype=int) != NO_MOCAP, model.number_of_links + np.asarray(mocap_bodies, dtype=int), index)
        H = jnp.matmul(poses[index], frames.astype(dtype))
        v, bias = velocities[index], biases[index]
        p, R, omega = H[:, :3, 3], H[:, :3, :3], v[:, 3:]
        point_velocity = v[:, :3] + jnp.cross(omega, p)
        point_bias = bias[:, :3] + jnp.cross(bias[:, 3:], p) + jnp.cross(omega, point_velocity)
        sides.append((p, R, omega, point_velocity, point_bias, bias[:, 3:]))
    (p1, R1, omega1, v1, b1, alpha1), (p2, R2, omega2, v2, b2, alpha2) = sides
    count = loops.count
    eye = jnp.broadcast_to(jnp.eye(3, dtype=dtype), (count, 3, 3))
    zeros = jnp.zeros((count, 3, 3), dtype)
    # Translation rows e_k . (v_p1 - v_p2): forces e_k at p1 and -e_k at p2.
    translation1 = jnp.concatenate([eye, -spatial.skew(p1)], axis=-1)
    translation2 = -jnp.concatenate([eye, -spatial.skew(p2)], axis=-1)
    # Orientation: e = q_F2^-1 q_F1 of E = R2^T R1, rate 0.5 s (e_w I - [e_v]x) R2^T (omega1 - omega2).
    E = jnp.matmul(jnp.swapaxes(R2, -1, -2), R1)
    trace = E[:, 0, 0] + E[:, 1, 1] + E[:, 2, 2]
    e_w = 0.5 * jnp.sqrt(jnp.maximum(1.0 + trace, jnp.finfo(dtype).tiny))
    e_v = _vee_antisymmetric(E) / (4.0 * e_w[:, None])
    scale = loops.torque_scale.astype(dtype)
    P = e_w[:, None, None] * eye - spatial.skew(e_v)
    C = 0.5 * scale[:, None, None] * jnp.matmul(P, jnp.swapaxes(R2, -1, -2))
    relative = omega1 - omega2
    u = spatial.rotate(jnp.swapaxes(R2, -1, -2), relative)
    u_bias = spatial.rotate(jnp.swapaxes(R2, -1, -2), alpha1 - alpha2 - jnp.cross(omega2, relative))
    rotation_bias = scale[:, None] * (0.5 * spatial.rotate(P, u_bias) - 0.25 * jnp.sum(u * u, axis=-1, keepdims=True) * e_v)
    wrench1 = jnp.concatenate([translation1, jnp.concatenate([zeros, C], axis=-1)], axis=1)
    wrench2 = jnp.concatenate([translation2, jnp.concatenate([zeros, -C], axis=-1)], axis=1)
    violation = jnp.concatenate([p1 - p2, scale[:, None] * e_v], axis=-1)
    rate = jnp.concatenate([v1 - v2, spatial.rotate(C, relative)], axis=-1)
    path_bias = jnp.concatenate([b1 - b2, rotation_bias], axis=-1)
    rows = loops._row_index()
    world1 = jnp.asarray(np.asarray(loops.link1)[loops.row_closure] == WORLD)[:, None]
    world2 = jnp.asarray(np.asarray(loops.link2)[loops.row_closure] == WORLD)[:, None]
    return LoopRows(
        wrench1=jnp.where(world1, 0.0, wrench1.reshape(-1, 6)[rows]),
        wrench2=jnp.where(world2, 0.0, wrench2.reshape(-1, 6)[rows]),
        violation=violation.reshape(-1)[rows],
        rate=rate.reshape(-1)[rows],
        path_bias=path_bias.reshape(-1)[rows],
    )
