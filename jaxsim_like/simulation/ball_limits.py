"""The rows of a model's ball-joint cone limits (:class:`~jaxsim_like.dynamics.ball_cones.BallCones`)
at a state, for the step to solve with its other constraint rows (:func:`.couplings.enforce`, as
:class:`.constraint_rows.Rows`): MuJoCo's ball limit, one unilateral row per limited ball joint.

With the joint's rotation angle ``theta`` and axis ``a`` (:func:`.ball_cones.rotation_angle_axis`),
the row is ``psi = angle - theta - margin >= 0`` along ``G = -a`` on the joint's three degrees of
freedom (``psi_dot = -a . omega``), engaged while ``psi < 0`` (MuJoCo's ``dist < margin``), as
the tendons' limits (:mod:`.tendons`). MuJoCo's soft limit, with the impedance ``d`` of
``psi`` (:func:`.constraint_rows.impedance` of the joint's ``solimplimit``, ``d_width`` its
largest): the end-velocity target ``w + h a_ref`` of MuJoCo's reference acceleration ``a_ref =
-b w - d k psi`` of the ``solreflimit`` ``(tau, zeta)`` with ``k = 1 / (d_width tau)^2`` and ``b
= 2 zeta / (d_width tau)`` (:func:`.couplings.soft_limit_reference`), and the compliance ``h (1
- d) / d w`` of the joint's approximate inverse mass ``w`` (MuJoCo's ``dof_invweight0``;
:class:`.constraint_rows.Rows`).
A row that is not engaged has no force; at ``theta = 0`` its ``G`` is zero.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..dynamics.ball_cones import rotation_angle_axis
from ..dynamics.configuration import ball_quaternions
from ..dynamics.model import Model
from ..dynamics.state import State
from .constraint_rows import Rows
from .couplings import soft_limit_reference


def cone_rows(model: Model, state: State, dt: jax.Array) -> Rows:
    """The unilateral rows ``(c,)`` of ``model``'s cone limits at ``state`` for a step of ``dt`` [s]
    (see the module docstring)."""
    cones = model.ball_cones
    dtype = state.joint_positions.dtype
    balls = np.asarray(cones.balls, dtype=int)
    theta, axis = rotation_angle_axis(ball_quaternions(model, state.joint_positions)[balls])
    dofs = np.asarray(model.ball_dofs, dtype=int)[balls][:, None] + np.arange(3)
    count = len(balls)
    jacobian = jnp.zeros((count, model.dofs), dtype).at[np.arange(count)[:, None], dofs].set(-axis)
    psi = cones.angle.astype(dtype) - theta - cones.margin.astype(dtype)
    velocity = jacobian @ state.joint_velocities
    target, compliance = soft_limit_reference(
        psi, velocity, cones.solimp.astype(dtype), cones.time_constant.astype(dtype), cones.damping_ratio.astype(dtype),
        cones.inverse_weight.astype(dtype), dt,
    )
    flags = np.ones(count, dtype=bool)
    return Rows(jacobian, target, jnp.zeros_like(target), psi < 0.0, ~flags, flags, compliance)
