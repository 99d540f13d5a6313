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

The joints that close a loop in an SDF file hold exactly their joint's rows, with the joint's
axis the ``z`` axis of both frames (of ``F2``, and of ``F1`` at rest); with ``d = R_F2^T (p_F1 -
p_F2)`` the offset in ``F2``'s axes [m] and ``c = R_F2^T R_F1 z`` ``F1``'s ``z`` in ``F2``'s axes:

- ``hinge`` (5 rows): the origins (3), then ``(c x z)_x, (c x z)_y`` [1]: the axes aligned;
- ``slider`` (5 rows): ``d_x, d_y`` [m], then the weld's orientation error (3);
- ``universal`` (4 rows): the origins (3), then ``c_z`` [1]: ``F1``'s ``z`` (the child's axis,
  at rest normal to the parent's) stays normal to ``F2``'s;
- ``screw`` (5 rows): ``d_x, d_y``, the hinge's two rows, then ``d_z - pitch theta`` [m] with
  ``theta = 2 atan2(e_z, e_w)`` [rad] the turn about ``z`` of ``e = q_F2^-1 q_F1`` (taken with a
  non-negative scalar part: the turn stays within half a turn either way).

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


KINDS = ("connect", "weld", "hinge", "slider", "universal", "screw")
"""The closure kinds (see the module docstring)."""

# Each kind's rows among the 12 computed for every closure when any is not a connect or a weld:
# origins (0-2), orientation error (3-5), offset d_x, d_y (6, 7), the axes' misalignment (8, 9),
# c_z (10) and the screw's row (11); connects and welds alone compute the first 6.
_KIND_ROWS = {
    "connect": (0, 1, 2),
    "weld": (0, 1, 2, 3, 4, 5),
    "hinge": (0, 1, 2, 8, 9),
    "slider": (6, 7, 3, 4, 5),
    "universal": (0, 1, 2, 10),
    "screw": (6, 7, 8, 9, 11),
}
_ROTATION_ROWS = (3, 4, 5, 8, 9, 10)


@pytree_dataclass(static=["link1", "link2", "kind", "names", "mocap1", "mocap2", "mocap_names", "mujoco_reference"])
class LoopClosures:
    """``l`` closures: ``frame1`` and ``frame2 (l, 4, 4)``, ``L1_H_F1`` and ``L2_H_F2`` (for a
    ``WORLD`` side: ``W_H_F``; on a mocap body: ``M_H_F`` in the body), ``torque_scale (l,)``
    (welds), and the file's ``time_constant`` [s] and ``damping_ratio (l,)`` (MJCF ``solref``,
    the defaults of ``SimulationParams.build``), the pose of each of the ``k`` mocap bodies
    the closures hold on, ``mocap_position (k, 3)`` [m] and ``mocap_quaternion (k, 4)`` (wxyz,
    world frame; the file's by default, see :meth:`posed`), each closure's impedance parameters
    ``solimp (l, 5)``, the approximate inverse masses ``inverse_weight (l, 2)`` of its
    translation and rotation rows (:class:`~jaxsim_like.parsers.description.LoopClosure`) and
    the ``pitch (l,)`` [m/rad] of the screws (traced); the links ``link1`` and
    ``link2 (l,)`` in the model's link order, the mocap bodies ``mocap1`` and ``mocap2 (l,)``
    of their ``WORLD`` sides (``NO_MOCAP``: fixed in the world), the ``kind`` of each (one of
    :data:`KINDS`), their ``names`` and the ``mocap_names (k,)``, and ``mujoco_reference``
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
    pitch: jax.Array
    link1: tuple[int, ...] = ()
    link2: tuple[int, ...] = ()
    kind: tuple[str, ...] = ()
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
        arrays = (jnp.asarray(np.zeros((0, size)), dtype=dtype) for size in (3, 4, 5, 2))
        return LoopClosures(frames, frames, *scalars, *arrays, jnp.asarray(np.zeros(0), dtype=dtype))

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
    def stride(self) -> int:
        """The rows computed per closure (static): 6 for connects and welds alone, else 12."""
        return 6 if set(self.kind) <= {"connect", "weld"} else 12

    @property
    def row_closure(self) -> np.ndarray:
        """``(r,)``: the closure of each row (static)."""
        return np.repeat(np.arange(self.count), [len(_KIND_ROWS[kind]) for kind in self.kind]).astype(int)

    @property
    def rows(self) -> int:
        """The number of rows ``r`` (static): 3 per connect, 6 per weld, 5 per hinge, slider or
        screw, 4 per universal."""
        return int(self.row_closure.size)

    @property
    def row_rotational(self) -> np.ndarray:
        """``(r,)``: whether each row is a rotation row (static)."""
        return np.isin(self._row_index() % self.stride, _ROTATION_ROWS)

    def _row_index(self) -> np.ndarray:
        """``(r,)``: each row's index in the ``(l * stride)`` rows computed for every closure."""
        return np.concatenate([np.asarray(_KIND_ROWS[kind]) + self.stride * k for k, kind in enumerate(self.kind)] + [np.zeros(0, int)])


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


def path_bias_accelerations(model: Model, kin: kin_module.Kinematics, euler: bool) -> jax.Array:
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


def _screw_angle(quaternion: jax.Array) -> jax.Array:
    """``(l,)``: the turn ``2 atan2(e_z, e_w)`` [rad] about ``z`` of quaternions ``(l, 4)`` (wxyz)."""
    return 2.0 * jnp.arctan2(quaternion[:, 3], quaternion[:, 0])


def _joint_rows(loops: LoopClosures, side1: tuple, side2: tuple, e_w: jax.Array, e_v: jax.Array, u: jax.Array, u_bias: jax.Array) -> tuple:
    """The rows 6 to 11 of every closure (see ``_KIND_ROWS``): ``wrench1`` and ``wrench2 (l, 6,
    6)``, ``violation``, ``rate`` and ``path_bias (l, 6)``, from each side's origin, rotation,
    angular velocity, origin velocity, origin and angular path accelerations (world axes), the
    relative quaternion ``e_w (l,)``, ``e_v (l, 3)`` and the relative angular velocity ``u`` and
    its path acceleration ``u_bias (l, 3)`` in ``F2``'s axes."""
    (p1, R1, _, v1, b1, _), (p2, R2, omega2, v2, b2, alpha2) = side1, side2
    dtype, count = p1.dtype, p1.shape[0]
    R2T = jnp.swapaxes(R2, -1, -2)
    zeros = jnp.zeros((count, 3, 3), dtype)
    z = jnp.broadcast_to(jnp.asarray([0.0, 0.0, 1.0], dtype), (count, 3))
    # The offset d = R2^T (p1 - p2): rate R2^T (d_dot - omega2 x d): forces R2 e_k at p1 and -R2 e_k
    # at p2, and on link2 the torque (R2 e_k) x delta, delta = p1 - p2 (world axes).
    delta, delta_rate = p1 - p2, v1 - v2
    eye = jnp.broadcast_to(jnp.eye(3, dtype=dtype), (count, 3, 3))
    offset1 = jnp.matmul(R2T, jnp.concatenate([eye, -spatial.skew(p1)], axis=-1))
    offset2 = jnp.concatenate([-R2T, jnp.matmul(R2T, spatial.skew(p2) + spatial.skew(delta))], axis=-1)
    offset = spatial.rotate(R2T, delta)
    offset_rate = spatial.rotate(R2T, delta_rate - jnp.cross(omega2, delta))
    offset_bias = spatial.rotate(
        R2T, b1 - b2 - jnp.cross(alpha2, delta) - 2.0 * jnp.cross(omega2, delta_rate) + jnp.cross(omega2, jnp.cross(omega2, delta))
    )
    # c = R2^T R1 z: c_dot = u x c, c_ddot = u_bias x c + u x (u x c) on the path; the rows c x z
    # move at (u x c) x z = [z]x [c]x u, c_z at (c x z) . u.
    c = jnp.matmul(R2T, R1)[:, :, 2]
    c_rate = jnp.cross(u, c)
    c_bias = jnp.cross(u_bias, c) + jnp.cross(u, c_rate)
    aligned = jnp.matmul(jnp.matmul(spatial.skew(z), spatial.skew(c)), R2T)
    normal = jnp.matmul(jnp.cross(c, z)[:, None, :], R2T)
    # The screw: d_z - pitch theta, theta_dot = g . u, the turn's second derivative on the path
    # from the quaternion's, e_ddot = 0.5 (0, u_bias) e - 0.25 |u|^2 e.
    e = jnp.concatenate([e_w[:, None], e_v], axis=-1)
    e_rate = 0.5 * jnp.concatenate([-jnp.sum(u * e_v, axis=-1, keepdims=True), e_w[:, None] * u + jnp.cross(u, e_v)], axis=-1)
    e_bias = 0.5 * jnp.concatenate([-jnp.sum(u_bias * e_v, axis=-1, keepdims=True), e_w[:, None] * u_bias + jnp.cross(u_bias, e_v)], axis=-1)
    e_bias = e_bias - 0.25 * jnp.sum(u * u, axis=-1, keepdims=True) * e
    e_x, e_y, e_z = e_v[:, 0], e_v[:, 1], e_v[:, 2]
    # |(e_w, e_z)| is 1 on a closed screw; floored where the frames are turned a half turn off its axis (no NaN).
    g = jnp.stack([e_w * e_y + e_z * e_x, e_z * e_y - e_w * e_x, e_w**2 + e_z**2], axis=-1) / jnp.maximum(e_w**2 + e_z**2, 1e-12)[:, None]

    def along_path(t: jax.Array) -> jax.Array:
        return _screw_angle(e + t * e_rate + 0.5 * t**2 * e_bias)

    zero = jnp.zeros((), dtype)
    theta = _screw_angle(e)
    theta_bias = jax.jvp(lambda t: jax.jvp(along_path, (t,), (jnp.ones((), dtype),))[1], (zero,), (jnp.ones((), dtype),))[1]
    pitch = loops.pitch.astype(dtype)
    turn = pitch[:, None] * jnp.matmul(g[:, None, :], R2T)[:, 0]
    screw1 = offset1[:, 2] - jnp.concatenate([jnp.zeros((count, 3), dtype), turn], axis=-1)
    screw2 = offset2[:, 2] + jnp.concatenate([jnp.zeros((count, 3), dtype), turn], axis=-1)
    rotation1 = jnp.concatenate([jnp.concatenate([zeros, aligned], axis=-1)[:, :2], jnp.concatenate([zeros[:, :1], normal], axis=-1)], axis=1)
    wrench1 = jnp.concatenate([offset1[:, :2], rotation1, screw1[:, None]], axis=1)
    wrench2 = jnp.concatenate([offset2[:, :2], -rotation1, screw2[:, None]], axis=1)
    misalignment, misalignment_rate, misalignment_bias = (jnp.cross(x, z) for x in (c, c_rate, c_bias))
    violation = jnp.concatenate([offset[:, :2], misalignment[:, :2], c[:, 2:], (offset[:, 2] - pitch * theta)[:, None]], axis=-1)
    rate = jnp.concatenate(
        [offset_rate[:, :2], misalignment_rate[:, :2], c_rate[:, 2:], (offset_rate[:, 2] - pitch * jnp.sum(g * u, axis=-1))[:, None]], axis=-1
    )
    path_bias = jnp.concatenate(
        [offset_bias[:, :2], misalignment_bias[:, :2], c_bias[:, 2:], (offset_bias[:, 2] - pitch * theta_bias)[:, None]], axis=-1
    )
    return wrench1, wrench2, violation, rate, path_bias


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
    biases = jnp.concatenate([path_bias_accelerations(model, kin, euler), jnp.zeros((still, 6), dtype)])
    indices = []
    for links, mocap_bodies in ((loops.link1, loops.mocap1), (loops.link2, loops.mocap2)):
        index = np.asarray(links, dtype=int)  # WORLD (-1) is the last entry
        if loops.mocap_names:
            index = np.where(np.asarray(mocap_bodies, dtype=int) != NO_MOCAP, model.number_of_links + np.asarray(mocap_bodies, dtype=int), index)
        indices.append(index)
    return rows_between(loops, poses, velocities, biases, *indices)


def rows_between(
    loops: LoopClosures, poses: jax.Array, velocities: jax.Array, biases: jax.Array, index1: np.ndarray, index2: np.ndarray
) -> LoopRows:
    """The :class:`LoopRows` of ``loops`` whose sides are on the bodies ``index1`` and ``index2
    (l,)`` (static) of ``poses (K, 4, 4)``, spatial ``velocities`` and path accelerations
    ``biases (K, 6)`` (world axes, all about one fixed origin, that of the poses); the wrenches
    are about that origin (zero on a ``WORLD`` side)."""
    dtype = poses.dtype
    sides = []
    for index, frames in ((index1, loops.frame1), (index2, loops.frame2)):
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
    if loops.stride == 12:
        joint = _joint_rows(loops, *sides, e_w, e_v, u, u_bias)
        wrench1, wrench2, violation, rate, path_bias = (
            jnp.concatenate(pair, axis=1) for pair in zip((wrench1, wrench2, violation, rate, path_bias), joint)
        )
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
