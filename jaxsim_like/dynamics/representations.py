"""Conversions between the body-fixed, inertial-fixed and mixed velocity representations.

For a frame L with pose ``W_H_L``, the same motion is written ``L_v`` (body: L's axes, velocity of
L's origin), ``W_v`` (inertial: world axes, velocity of the point at the world origin) or
``L[W]_v`` (mixed: world axes, velocity of L's origin). Forces are their duals.

The algorithms work in an internal frame ``G`` with the world's axes and its origin at the base
(so that no term grows with the distance from the world origin). Poses passed here are then
``G_H_L``, and ``origin`` is the world position of ``G``'s origin: the ``"inertial"``
representation is converted to and from ``G`` with it. ``origin=None`` means ``G`` is the world.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from . import spatial


def _shift(origin: jax.Array, batch_shape: tuple[int, ...], sign: float) -> jax.Array:
    """``G_X_W`` (``sign=-1``) or ``W_X_G`` (``sign=1``) for a frame ``G`` at ``origin`` with world axes."""
    H = spatial.transform(jnp.eye(3, dtype=origin.dtype), sign * origin)
    return jnp.broadcast_to(spatial.motion_transform(H), batch_shape + (6, 6))


def to_inertial_transform(W_H_L: jax.Array, representation: str, origin: jax.Array | None = None) -> jax.Array:
    """``G_X_rep (..., 6, 6)``: maps a velocity of L in ``representation`` to ``G_v`` (``W_v`` without ``origin``)."""
    if representation == "inertial":
        if origin is not None:
            return _shift(origin, W_H_L.shape[:-2], -1.0)
        return jnp.broadcast_to(jnp.eye(6, dtype=W_H_L.dtype), W_H_L.shape[:-2] + (6, 6))
    if representation == "body":
        return spatial.motion_transform(W_H_L)
    return spatial.mixed_transform(W_H_L)


def from_inertial_transform(W_H_L: jax.Array, representation: str, origin: jax.Array | None = None) -> jax.Array:
    """``rep_X_G (..., 6, 6)``: maps ``G_v`` (``W_v`` without ``origin``) to the velocity of L in ``representation``."""
    if representation == "inertial":
        if origin is not None:
            return _shift(origin, W_H_L.shape[:-2], 1.0)
        return jnp.broadcast_to(jnp.eye(6, dtype=W_H_L.dtype), W_H_L.shape[:-2] + (6, 6))
    if representation == "body":
        return spatial.motion_transform(spatial.inverse_transform(W_H_L))
    p = W_H_L[..., :3, 3]
    return spatial.mixed_transform(spatial.transform(jnp.broadcast_to(jnp.eye(3, dtype=p.dtype), p.shape[:-1] + (3, 3)), -p))


def velocity_to_inertial(velocity: jax.Array, W_H_L: jax.Array, representation: str, origin: jax.Array | None = None) -> jax.Array:
    """``G_v (..., 6)`` of a velocity of L given in ``representation``."""
    return spatial.matvec(to_inertial_transform(W_H_L, representation, origin), velocity)


def velocity_from_inertial(W_v: jax.Array, W_H_L: jax.Array, representation: str, origin: jax.Array | None = None) -> jax.Array:
    """The velocity of L in ``representation`` from ``G_v (..., 6)``."""
    return spatial.matvec(from_inertial_transform(W_H_L, representation, origin), W_v)


def force_to_inertial(force: jax.Array, W_H_L: jax.Array, representation: str, origin: jax.Array | None = None) -> jax.Array:
    """``G_f (..., 6)`` of a wrench on L given in ``representation`` (``[force; torque]``)."""
    X = from_inertial_transform(W_H_L, representation, origin)
    return spatial.matvec(jnp.swapaxes(X, -1, -2), force)


def force_from_inertial(W_f: jax.Array, W_H_L: jax.Array, representation: str, origin: jax.Array | None = None) -> jax.Array:
    """A wrench ``G_f (..., 6)`` written in ``representation`` of frame L."""
    X = to_inertial_transform(W_H_L, representation, origin)
    return spatial.matvec(jnp.swapaxes(X, -1, -2), W_f)


def acceleration_to_inertial(
    acceleration: jax.Array, W_H_L: jax.Array, W_v: jax.Array, representation: str, origin: jax.Array | None = None
) -> jax.Array:
    """``d/dt G_v`` from the derivative of the velocity of L in ``representation``; ``W_v`` is L's ``G_v``."""
    W_a = velocity_to_inertial(acceleration, W_H_L, representation, origin)
    if representation != "mixed":
        return W_a
    # d/dt [o_dot + o x w] = o_ddot + o_dot x w + o x w_dot; the transform gave o_ddot + o x w_dot.
    o, w = W_H_L[..., :3, 3], W_v[..., 3:]
    o_dot = W_v[..., :3] + jnp.cross(w, o)
    return W_a.at[..., :3].add(jnp.cross(o_dot, w))


def acceleration_from_inertial(
    W_a: jax.Array, W_H_L: jax.Array, W_v: jax.Array, representation: str, origin: jax.Array | None = None
) -> jax.Array:
    """The derivative of the velocity of L in ``representation`` from ``d/dt G_v``; ``W_v`` is L's ``G_v``."""
    a = velocity_from_inertial(W_a, W_H_L, representation, origin)
    if representation != "mixed":
        return a
    o, w = W_H_L[..., :3, 3], W_v[..., 3:]
    o_dot = W_v[..., :3] + jnp.cross(w, o)
    return a.at[..., :3].add(-jnp.cross(o_dot, w))
