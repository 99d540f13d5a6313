"""What moves in a view: link poses by the model's forward kinematics, and contact forces.

Poses are ``(W, T, N, 7)``: for each of ``W`` worlds and ``T`` frames, the position [m] and
the orientation (quaternion ``wxyz``) of each of the ``N`` links in the world frame, computed by
:func:`jaxsim_like.dynamics.kinematics.link_poses` in one jitted, vmapped call over all frames
in chunks of ``CHUNK`` frames (the last one padded), so that every view of a model shares one
compilation.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from ..dynamics import spatial
from ..dynamics.kinematics import link_poses as _world_link_poses
from ..dynamics.model import Model
from ..recording import Recording


CHUNK = 256


@jax.jit
def _poses(model: Model, base_position: jax.Array, base_quaternion: jax.Array, joint_positions: jax.Array) -> jax.Array:
    def one(position, quaternion, joints):
        W_H_L = _world_link_poses(model, spatial.pose_to_transform(position, spatial.normalize(quaternion)), joints)
        quaternions = jax.vmap(spatial.rotation_to_quaternion)(W_H_L[:, :3, :3])
        return jnp.concatenate([W_H_L[:, :3, 3], quaternions], axis=-1)

    return jax.vmap(one)(base_position, base_quaternion, joint_positions)


def link_poses(model: Model, base_position, base_quaternion, joint_positions) -> np.ndarray:
    """``(..., N, 7)`` link poses (position, quaternion wxyz) from base positions ``(..., 3)``,
    base quaternions ``(..., 4)`` (wxyz) and joint positions ``(..., n)`` in the model's joint order."""
    position = np.asarray(base_position, dtype=float)
    batch = position.shape[:-1]
    count = int(np.prod(batch))
    padded = CHUNK * max(1, math.ceil(count / CHUNK))
    flat = [np.asarray(x, dtype=float).reshape(count, np.shape(x)[-1]) for x in (position, base_quaternion, joint_positions)]
    flat = [np.concatenate([x, np.repeat(x[-1:], padded - count, axis=0)]) for x in flat]
    dtype = model.link_mass.dtype
    chunks = [_poses(model, *(jnp.asarray(x[start : start + CHUNK], dtype=dtype) for x in flat)) for start in range(0, padded, CHUNK)]
    poses = np.concatenate([np.asarray(chunk, dtype=float) for chunk in chunks])[:count]
    return poses.reshape(*batch, model.number_of_links, 7)


def point_positions(model: Model, poses: np.ndarray) -> np.ndarray:
    """``(..., P, 3)`` world positions [m] of the collidable points from link ``poses (..., N, 7)``."""
    link = np.asarray(model.point_link, dtype=int)
    w, x, y, z = np.moveaxis(poses[..., link, 3:], -1, 0)
    rotation = np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], -1),
            np.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], -1),
            np.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], -1),
        ],
        -2,
    )
    points = np.asarray(model.collidable_points, dtype=float).reshape(-1, 3)
    return np.einsum("...ij,...j->...i", rotation, np.broadcast_to(points, rotation.shape[:-1])) + poses[..., link, :3]


def frame_indices(time: np.ndarray, fps: float) -> np.ndarray:
    """Indices of the samples of ``time (T,)`` [s] kept for a view at ``fps`` frames per second
    at most: every ``k``-th sample, the last one always included."""
    if fps <= 0:
        raise ValueError(f"fps must be positive, got {fps}")
    count = len(time)
    if count < 2:
        return np.arange(count)
    interval = float(np.median(np.diff(time)))
    stride = max(1, math.ceil(1.0 / (fps * interval) - 1e-9)) if interval > 0 else 1
    indices = np.arange(0, count, stride)
    return indices if indices[-1] == count - 1 else np.append(indices, count - 1)


def _batched(array: np.ndarray, batched: bool) -> np.ndarray:
    return array if batched else array[None]


def joint_columns(model: Model, recording: Recording) -> np.ndarray:
    """Column of each of the model's joints in the recording; ValueError naming missing joints."""
    missing = [name for name in model.joint_names if name not in recording.joint_names]
    if missing:
        raise ValueError(f"the recording has no joint(s) {', '.join(missing)} of model {model.name!r}")
    return np.array([recording.joint_names.index(name) for name in model.joint_names], dtype=int)


def recorded_poses(model: Model, recording: Recording, indices: np.ndarray, worlds: np.ndarray) -> np.ndarray:
    """``(W, T, N, 7)`` link poses of ``model`` at the samples ``indices`` of ``recording``, for
    the worlds ``worlds`` of a batched recording (``[0]`` for one world)."""
    batched = np.ndim(recording.base_position) == 3
    columns = joint_columns(model, recording)
    if model.ball_dofs and not np.array_equal(columns, np.arange(model.dofs)):
        raise ValueError(f"model {model.name!r} has ball joints: its recording must hold the model's joints, in its order")

    def pick(array: np.ndarray) -> np.ndarray:
        return _batched(np.asarray(array), batched)[worlds][:, indices]

    positions = pick(recording.joint_positions)
    positions = positions if model.ball_dofs else positions[..., columns]
    return link_poses(model, pick(recording.base_position), pick(recording.base_quaternion), positions)


def recorded_forces(model: Model, recording: Recording, indices: np.ndarray, worlds: np.ndarray) -> np.ndarray:
    """``(W, T, P, 3)`` contact forces [N] (world axes) at the model's collidable points; ValueError
    when the recording's contact points are not the model's."""
    forces = _batched(np.asarray(recording.contact_forces), np.ndim(recording.base_position) == 3)
    if forces.shape[2] != len(model.point_link) or tuple(recording.point_link) != tuple(model.point_link):
        raise ValueError(
            f"the recording has {forces.shape[2]} contact points, model {model.name!r} has {len(model.point_link)} "
            "(load the model with the contact sampling the recording was made with)"
        )
    return forces[worlds][:, indices]


def batch_size(recording: Recording) -> int:
    """Number of worlds of ``recording`` (1 when it is not batched)."""
    return int(np.shape(recording.base_position)[0]) if np.ndim(recording.base_position) == 3 else 1
