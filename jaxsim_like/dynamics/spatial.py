"""Spatial algebra: SE(3), quaternions (wxyz) and 6D motion/force/inertia in ``[linear; angular]`` order.

A motion vector ``v = [v_lin; omega]`` and a force vector ``f = [f_lin; tau]`` are expressed in a
frame: ``v_lin`` is the velocity of the point at that frame's origin, ``tau`` the torque about it.
``A_X_B: (6, 6)`` maps motion vectors from B to A coordinates; ``A_Xf_B = A_X_B^{-T}`` forces.
All functions take the last axes as the geometric ones and broadcast over leading axes.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

Array = jnp.ndarray


def skew(v: Array) -> Array:
    """``(..., 3) -> (..., 3, 3)`` with ``skew(a) @ b = a x b``."""
    x, y, z = v[..., 0], v[..., 1], v[..., 2]
    zero = jnp.zeros_like(x)
    return jnp.stack(
        [
            jnp.stack([zero, -z, y], axis=-1),
            jnp.stack([z, zero, -x], axis=-1),
            jnp.stack([-y, x, zero], axis=-1),
        ],
        axis=-2,
    )


def quaternion_to_rotation(quaternion: Array) -> Array:
    """Rotation ``(..., 3, 3)`` of a quaternion ``(..., 4)`` in wxyz order (normalised first)."""
    q = normalize(quaternion)
    w, x, y, z = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    return jnp.stack(
        [
            jnp.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)], axis=-1),
            jnp.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)], axis=-1),
            jnp.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)], axis=-1),
        ],
        axis=-2,
    )


def rotation_to_quaternion(R: Array) -> Array:
    """Unit quaternion ``(..., 4)`` wxyz with ``w >= 0`` of a rotation ``(..., 3, 3)``.

    Uses the numerically best of the four Shepperd branches, chosen with ``jnp.where`` so
    that it traces, vmaps and differentiates.
    """
    m00, m11, m22 = R[..., 0, 0], R[..., 1, 1], R[..., 2, 2]
    trace = m00 + m11 + m22
    candidates = jnp.stack(
        [
            jnp.stack([1 + trace, R[..., 2, 1] - R[..., 1, 2], R[..., 0, 2] - R[..., 2, 0], R[..., 1, 0] - R[..., 0, 1]], -1),
            jnp.stack([R[..., 2, 1] - R[..., 1, 2], 1 + m00 - m11 - m22, R[..., 0, 1] + R[..., 1, 0], R[..., 0, 2] + R[..., 2, 0]], -1),
            jnp.stack([R[..., 0, 2] - R[..., 2, 0], R[..., 0, 1] + R[..., 1, 0], 1 - m00 + m11 - m22, R[..., 1, 2] + R[..., 2, 1]], -1),
            jnp.stack([R[..., 1, 0] - R[..., 0, 1], R[..., 0, 2] + R[..., 2, 0], R[..., 1, 2] + R[..., 2, 1], 1 - m00 - m11 + m22], -1),
        ],
        axis=-2,
    )
    pivots = jnp.stack([trace, m00, m11, m22], axis=-1)
    best = jnp.argmax(pivots, axis=-1)
    q = jnp.take_along_axis(candidates, best[..., None, None], axis=-2)[..., 0, :]
    q = normalize(q)
    return jnp.where(q[..., :1] < 0, -q, q)


def quaternion_multiply(p: Array, q: Array) -> Array:
    """Hamilton product ``p * q`` of wxyz quaternions."""
    pw, pv = p[..., :1], p[..., 1:]
    qw, qv = q[..., :1], q[..., 1:]
    w = pw * qw - dot(pv, qv)[..., None]
    v = pw * qv + qw * pv + jnp.cross(pv, qv)
    return jnp.concatenate([w, v], axis=-1)


def quaternion_derivative(quaternion: Array, omega: Array, *, omega_in_body: bool = False) -> Array:
    """``dq/dt (4,)`` of a wxyz quaternion for angular velocity ``omega (3,)`` in world (or body) frame."""
    omega_q = jnp.concatenate([jnp.zeros_like(omega[..., :1]), omega], axis=-1)
    if omega_in_body:
        return 0.5 * quaternion_multiply(quaternion, omega_q)
    return 0.5 * quaternion_multiply(omega_q, quaternion)


def normalize(v: Array) -> Array:
    """``v / |v|`` over the last axis (``v`` nonzero)."""
    return v / jnp.sqrt(dot(v, v))[..., None]


def safe_sqrt(x: Array) -> Array:
    """``sqrt(x)`` where ``x > 0``, else 0, with finite gradients everywhere."""
    positive = x > 0
    return jnp.where(positive, jnp.sqrt(jnp.where(positive, x, 1.0)), 0.0)


def safe_norm(v: Array) -> Array:
    """Euclidean norm over the last axis with finite gradients at zero."""
    return safe_sqrt(dot(v, v))


def quaternion_exp(rotation_vector: Array) -> Array:
    """Unit quaternion wxyz of a rotation vector ``theta * axis (..., 3)``; exact and smooth at zero."""
    angle = safe_norm(rotation_vector)
    half = 0.5 * angle
    # sin(angle/2)/angle, with its Taylor series near zero to keep gradients finite.
    small = angle < 1e-4
    sinc_half = jnp.where(small, 0.5 - angle**2 / 48.0, jnp.sin(half) / jnp.where(small, 1.0, angle))
    return jnp.concatenate([jnp.cos(half)[..., None], sinc_half[..., None] * rotation_vector], axis=-1)


def quaternion_log(quaternion: Array) -> Array:
    """Rotation vector ``theta * axis (..., 3)``, ``theta`` in ``[0, pi]``, of a unit wxyz
    quaternion ``(..., 4)`` (the inverse of :func:`quaternion_exp`); exact and smooth at zero."""
    q = jnp.where(quaternion[..., :1] < 0, -quaternion, quaternion)
    w, v = q[..., 0], q[..., 1:]
    s = safe_norm(v)
    # atan2(s, w) / s, with its Taylor series near zero to keep gradients finite.
    small = s < 1e-4
    ratio = jnp.where(small, 1 / w - s**2 / (3 * w**3), jnp.arctan2(s, w) / jnp.where(small, 1.0, s))
    return 2 * ratio[..., None] * v


def integrate_quaternion(quaternion: Array, omega: Array, dt: Array, *, omega_in_body: bool = False) -> Array:
    """Quaternion after rotating at constant ``omega`` (world or body frame) for ``dt`` seconds; unit norm."""
    delta = quaternion_exp(omega * dt)
    q = quaternion_multiply(quaternion, delta) if omega_in_body else quaternion_multiply(delta, quaternion)
    return normalize(q)


def rpy_to_rotation(rpy: Array) -> Array:
    """``R = Rz(yaw) Ry(pitch) Rx(roll)`` from ``rpy (..., 3)``."""
    r, p, y = rpy[..., 0], rpy[..., 1], rpy[..., 2]
    cr, sr, cp, sp, cy, sy = jnp.cos(r), jnp.sin(r), jnp.cos(p), jnp.sin(p), jnp.cos(y), jnp.sin(y)
    return jnp.stack(
        [
            jnp.stack([cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr], -1),
            jnp.stack([sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr], -1),
            jnp.stack([-sp, cp * sr, cp * cr], -1),
        ],
        axis=-2,
    )


def transform(R: Array, p: Array) -> Array:
    """Homogeneous ``(..., 4, 4)`` from rotation ``(..., 3, 3)`` and position ``(..., 3)``."""
    top = jnp.concatenate([R, p[..., :, None]], axis=-1)
    bottom = jnp.broadcast_to(jnp.array([0.0, 0.0, 0.0, 1.0], dtype=R.dtype), top.shape[:-2] + (1, 4))
    return jnp.concatenate([top, bottom], axis=-2)


def pose_to_transform(position: Array, quaternion: Array) -> Array:
    """``W_H_B (..., 4, 4)`` from a position ``(..., 3)`` and a wxyz quaternion ``(..., 4)``."""
    return transform(quaternion_to_rotation(quaternion), position)


def inverse_transform(H: Array) -> Array:
    """``B_H_A`` from ``A_H_B`` (both ``(..., 4, 4)``)."""
    R_T = jnp.swapaxes(H[..., :3, :3], -1, -2)
    return transform(R_T, -(R_T @ H[..., :3, 3:4])[..., 0])


def motion_transform(H: Array) -> Array:
    """``A_X_B (..., 6, 6)`` for motion vectors ``[lin; ang]`` from ``A_H_B``."""
    R, p = H[..., :3, :3], H[..., :3, 3]
    top = jnp.concatenate([R, skew(p) @ R], axis=-1)
    bottom = jnp.concatenate([jnp.zeros_like(R), R], axis=-1)
    return jnp.concatenate([top, bottom], axis=-2)


def force_transform(H: Array) -> Array:
    """``A_Xf_B (..., 6, 6)`` for force vectors ``[force; torque]`` from ``A_H_B``."""
    R, p = H[..., :3, :3], H[..., :3, 3]
    top = jnp.concatenate([R, jnp.zeros_like(R)], axis=-1)
    bottom = jnp.concatenate([skew(p) @ R, R], axis=-1)
    return jnp.concatenate([top, bottom], axis=-2)


def mixed_transform(H: Array) -> Array:
    """``W_X_B[W] (..., 6, 6)``: from the mixed frame B[W] (origin of B, axes of W) to W."""
    p = H[..., :3, 3]
    eye = jnp.broadcast_to(jnp.eye(3, dtype=H.dtype), p.shape[:-1] + (3, 3))
    top = jnp.concatenate([eye, skew(p)], axis=-1)
    bottom = jnp.concatenate([jnp.zeros_like(eye), eye], axis=-1)
    return jnp.concatenate([top, bottom], axis=-2)


def cross_motion(v: Array, m: Array) -> Array:
    """``v x m`` for motion vectors ``(..., 6)``."""
    v_lin, w = v[..., :3], v[..., 3:]
    return jnp.concatenate([jnp.cross(w, m[..., :3]) + jnp.cross(v_lin, m[..., 3:]), jnp.cross(w, m[..., 3:])], axis=-1)


def cross_force(v: Array, f: Array) -> Array:
    """``v x* f`` for a motion vector ``v`` and a force vector ``f`` ``(..., 6)``."""
    v_lin, w = v[..., :3], v[..., 3:]
    return jnp.concatenate([jnp.cross(w, f[..., :3]), jnp.cross(v_lin, f[..., :3]) + jnp.cross(w, f[..., 3:])], axis=-1)


def gyroscopic_derivative(inertia: Array, omega: Array) -> Array:
    """``d(w x I w)/dw = [w]x I - [I w]x (..., 3, 3)`` at the angular velocity ``omega (..., 3)``
    [rad/s] of a body of rotational inertia ``inertia (..., 3, 3)`` about its COM [kg m^2], both
    in the same axes, at fixed ``inertia``. Not symmetric; zero for equal principal moments."""
    return jnp.cross(omega[..., None, :], jnp.swapaxes(inertia, -1, -2), axis=-1).swapaxes(-1, -2) - skew(matvec(inertia, omega))


def rotate(R: Array, v: Array) -> Array:
    """``R @ v`` for ``R (..., 3, 3)`` and ``v (..., 3)``, as one XLA dot: rotated vectors (joint
    axes, points) feed many consumers, and a fused product would be recomputed in each; as a
    reduction, XLA's CPU runtime gives it a slow kernel of its own."""
    return jnp.einsum("...ij,...j->...i", R, v)


def sum_last(x: Array) -> Array:
    """The sum over the last axis (a few entries), written as additions of slices (halves
    while the length is even, then one slice after another).

    XLA fuses these with their neighbours. A reduction is a kernel of its own, and XLA's CPU
    runtime sets up the buffers of its reducer at every call, which made reductions the main
    cost of a dispatched call of these small graphs.
    """
    if x.shape[-1] == 0:
        return jnp.zeros(x.shape[:-1], x.dtype)
    while x.shape[-1] % 2 == 0:
        half = x.shape[-1] // 2
        x = lax.add(lax.slice_in_dim(x, 0, half, axis=-1), lax.slice_in_dim(x, half, None, axis=-1))
    total = lax.slice_in_dim(x, 0, 1, axis=-1)
    for i in range(1, x.shape[-1]):
        total = lax.add(total, lax.slice_in_dim(x, i, i + 1, axis=-1))
    return lax.squeeze(total, (total.ndim - 1,))


def dot(a: Array, b: Array, *, fused: bool = True) -> Array:
    """``sum(a * b, axis=-1)``: written elementwise (``fused``, see :func:`sum_last`) or as one
    XLA dot, whose result is stored once where a fused value would be recomputed by each of
    its consumers."""
    return sum_last(a * b) if fused else jnp.einsum("...i,...i->...", a, b)


def matvec(A: Array, v: Array, *, fused: bool = True) -> Array:
    """``A @ v`` for ``A (..., m, k)`` and ``v (..., k)`` (``fused``: see :func:`dot`)."""
    return sum_last(A * v[..., None, :]) if fused else jnp.einsum("...ij,...j->...i", A, v)


def matmul(A: Array, B: Array, *, fused: bool = True) -> Array:
    """``A @ B`` for ``A (..., m, k)`` and ``B (..., k, n)`` (``fused``: see :func:`dot`)."""
    if not fused:
        return jnp.einsum("...ij,...jk->...ik", A, B)
    return sum_last(A[..., :, None, :] * jnp.swapaxes(B, -1, -2)[..., None, :, :])


def congruence(R: Array, A: Array) -> Array:
    """``R @ A @ R^T`` for ``(..., 3, 3)`` matrices, as two XLA dots (stored once, see :func:`dot`;
    as reductions, batches of ABA run slower)."""
    return matmul(matmul(R, A), jnp.swapaxes(R, -1, -2), fused=False)


def spatial_inertia(mass: Array, com: Array, inertia_com: Array) -> Array:
    """6D inertia ``(..., 6, 6)`` about a frame's origin, from mass, COM ``(..., 3)`` and the
    rotational inertia about the COM ``(..., 3, 3)``, all in that frame's axes."""
    c = skew(com)
    m = mass[..., None, None]
    eye = jnp.broadcast_to(jnp.eye(3, dtype=com.dtype), c.shape)
    c_c = com[..., :, None] * com[..., None, :] - dot(com, com)[..., None, None] * eye
    top = jnp.concatenate([m * eye, -m * c], axis=-1)
    bottom = jnp.concatenate([m * c, inertia_com - m * c_c], axis=-1)
    return jnp.concatenate([top, bottom], axis=-2)
