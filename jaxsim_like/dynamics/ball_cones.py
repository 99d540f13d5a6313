"""Cone limits of ball joints (MJCF ``range`` of a ``ball``, MuJoCo's ball limit).

Ball joint ``b`` with quaternion ``Q`` (wxyz, see :mod:`.configuration`) is rotated by the angle
``theta = |log Q|`` [rad] in ``[0, pi]`` about the unit ``axis = log Q / theta`` (the same in the
parent and the child frame). Its cone limit keeps ``theta <= angle``: the distance ``psi = angle -
theta`` [rad] to it decreases at ``-axis . omega`` with the joint's angular velocity ``omega``
(child frame), so that the limit acts along ``-axis`` on the joint's three degrees of freedom.
At ``theta = 0`` the axis is undefined and taken as zero (a cone of positive angle is not
engaged there). The simulation step holds it as a unilateral constraint row
(:mod:`jaxsim_like.simulation.ball_limits`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from ..parsers.description import JointDescription
from ..pytree import pytree_dataclass
from . import spatial


@pytree_dataclass(static=["balls"])
class BallCones:
    """``c`` cone limits: ball joint ``balls[k]`` (static, its index in ``Model.ball_dofs``) keeps
    its rotation angle at most ``angle[k]`` [rad], engaged within ``margin[k]`` [rad], with the
    reference ``time_constant[k]`` [s] and ``damping_ratio[k]`` (``solreflimit``; traced ``(c,)``)
    and the impedance parameters ``solimp (c, 5)`` (``solimplimit``, see
    :func:`jaxsim_like.simulation.constraint_rows.impedance`) with the approximate inverse mass
    ``inverse_weight (c,)`` [1/(kg m^2)] of their compliance (MuJoCo's ``dof_invweight0``)."""

    angle: jax.Array
    margin: jax.Array
    time_constant: jax.Array
    damping_ratio: jax.Array
    solimp: jax.Array
    inverse_weight: jax.Array
    balls: tuple[int, ...] = ()

    @property
    def count(self) -> int:
        """The number of cone limits ``c`` (static)."""
        return len(self.balls)

    @staticmethod
    def none(dtype: Any) -> "BallCones":
        """No cone limits."""
        empty = jnp.asarray(np.zeros(0), dtype=dtype)
        return BallCones(empty, empty, empty, empty, jnp.asarray(np.zeros((0, 5)), dtype=dtype), empty)

    def reduce(self, ball_joint_names: Sequence[str], kept: Sequence[str]) -> "BallCones":
        """The cone limits of the ball joints ``kept`` (the ball joint names of a reduced model, in
        its order) of a model whose ball joints are ``ball_joint_names``."""
        rows = [(kept.index(ball_joint_names[b]), k) for k, b in enumerate(self.balls) if ball_joint_names[b] in kept]
        if not rows:
            return BallCones.none(self.angle.dtype)
        rows.sort()
        index = np.array([k for _, k in rows], dtype=int)
        columns = (self.angle, self.margin, self.time_constant, self.damping_ratio, self.solimp, self.inverse_weight)
        return BallCones(*(column[index] for column in columns), balls=tuple(b for b, _ in rows))


def build_ball_cones(joints: Sequence[JointDescription], ball_joint_names: Sequence[str], dtype: Any) -> BallCones:
    """The :class:`BallCones` of the ball ``joints`` of a description with a ``cone``, on the
    model's ball joints ``ball_joint_names`` (in ``Model.ball_dofs`` order)."""
    limited = [(ball_joint_names.index(j.name), j.cone) for j in joints if j.type == "ball" and j.cone is not None and j.name in ball_joint_names]
    if not limited:
        return BallCones.none(dtype)
    limited.sort(key=lambda item: item[0])

    def column(field: str) -> jax.Array:
        return jnp.asarray(np.array([getattr(cone, field) for _, cone in limited], dtype=float), dtype=dtype)

    return BallCones(
        angle=column("angle"),
        margin=column("margin"),
        time_constant=column("time_constant"),
        damping_ratio=column("damping_ratio"),
        solimp=column("solimp"),
        inverse_weight=column("inverse_weight"),
        balls=tuple(b for b, _ in limited),
    )


def rotation_angle_axis(quaternions: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The rotation angle ``theta (..., )`` [rad] in ``[0, pi]`` and unit axis ``(..., 3)`` of
    quaternions ``(..., 4)`` (wxyz, normalised here); the axis is zero at ``theta = 0``, with
    finite gradients there."""
    rotation = spatial.quaternion_log(spatial.normalize(quaternions))
    theta = spatial.safe_norm(rotation)
    turned = theta > 0
    axis = jnp.where(turned[..., None], rotation / jnp.where(turned, theta, 1.0)[..., None], 0.0)
    return theta, axis
