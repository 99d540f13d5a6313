"""Joint couplings ``q_a = multiplier q_b + offset``: the mimic joints of URDF and SDF and the
joint equalities of MJCF.

Coupling ``r`` ties its ``follower`` joint ``a`` to its ``leader`` joint ``b``; together the
``c`` couplings are the bilateral constraint ``phi(q) = G q - offset = 0`` in joint space, with
the constant ``G (c, n)`` whose row ``r`` is ``e_a - multiplier_r e_b``. The coordinates stay
independent in the state; the simulation step enforces the rows
(:mod:`jaxsim_like.simulation.couplings`).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from ..pytree import pytree_dataclass

NO_LEADER = -1
"""The ``leader`` of a coupling whose leader is welded (a fixed or locked joint): its position is
folded into the ``offset``, so that the row reads ``q_a = offset``."""

NO_SOLIMP = (1.0, 1.0, 0.001, 0.5, 2.0)
"""The ``solimp`` stored for an equality that is not soft (a coupling's, a tendon equality's),
which the step does not read."""


@pytree_dataclass(static=["follower", "leader", "soft"])
class JointCouplings:
    """``c`` couplings: ``multiplier (c,)`` [1, or m/rad and rad/m between kinds], ``offset
    (c,)`` [rad or m], and the file's ``time_constant`` [s] and ``damping_ratio`` ``(c,)`` (an
    MJCF equality's ``solref``, MuJoCo's default 0.02 s and 1 otherwise: the defaults of
    ``SimulationParams.build``, which the step uses), the impedance parameters ``solimp (c,
    5)`` and approximate inverse masses ``inverse_weight (c,)`` [1/(kg m^2) or 1/kg] of the
    ``soft`` couplings (an MJCF equality's ``solimp`` and its joints' ``dof_invweight0``; see
    :class:`~jaxsim_like.parsers.description.Mimic`) (traced), and the ``follower`` and
    ``leader`` joint indices ``(c,)`` (static, in the model's joint serialisation;
    ``NO_LEADER``: a welded leader) with ``soft (c,)`` (static): whether each coupling has
    MuJoCo's impedance and compliance (MJCF); the others hold at an impedance of one, without
    compliance (URDF and SDF mimics), and ``solimp`` and ``inverse_weight`` are unused there."""

    multiplier: jax.Array
    offset: jax.Array
    time_constant: jax.Array
    damping_ratio: jax.Array
    solimp: jax.Array
    inverse_weight: jax.Array
    follower: tuple[int, ...] = ()
    leader: tuple[int, ...] = ()
    soft: tuple[bool, ...] = ()

    @staticmethod
    def none(dtype) -> "JointCouplings":
        """No coupling (arrays put on the device from NumPy: built eagerly, ``jnp.zeros`` would
        compile a program per call site and dtype spelling)."""
        scalars = (jnp.asarray(np.zeros(0), dtype=dtype) for _ in range(4))
        return JointCouplings(*scalars, jnp.asarray(np.zeros((0, 5)), dtype=dtype), jnp.asarray(np.zeros(0), dtype=dtype))

    @property
    def rows(self) -> int:
        """The number of couplings ``c`` (static)."""
        return len(self.follower)

    def _leading(self, values: jax.Array) -> jax.Array:
        """``(c,)``: the leaders' entries of the joint vector ``values (n,)`` (zero without a leader)."""
        leader = np.asarray(self.leader, dtype=int)
        return jnp.where(jnp.asarray(leader >= 0), values[np.maximum(leader, 0)], 0.0)

    def violation(self, joint_positions: jax.Array) -> jax.Array:
        """``phi (c,)`` [rad or m]: ``q_a - multiplier q_b - offset`` of each coupling."""
        follower = np.asarray(self.follower, dtype=int)
        return joint_positions[follower] - self.multiplier * self._leading(joint_positions) - self.offset

    def rate(self, joint_velocities: jax.Array) -> jax.Array:
        """``G q_dot (c,)``: the rate of each coupling's violation (also ``G`` times any joint
        vector, velocities or accelerations)."""
        follower = np.asarray(self.follower, dtype=int)
        return joint_velocities[follower] - self.multiplier * self._leading(joint_velocities)

    def transpose_times(self, values: jax.Array, dofs: int) -> jax.Array:
        """``G^T values (n,)``: the joint torques of row forces ``values (c,)`` [N m or N]."""
        follower = np.asarray(self.follower, dtype=int)
        leader = np.asarray(self.leader, dtype=int)
        torques = jnp.zeros(dofs, values.dtype).at[follower].add(values)
        lead = jnp.where(jnp.asarray(leader >= 0), -self.multiplier * values, 0.0)
        return torques.at[np.maximum(leader, 0)].add(lead)

    def jacobian(self, dofs: int) -> jax.Array:
        """``G (c, n)``: row ``r`` is ``e_a - multiplier_r e_b``."""
        return jax.vmap(lambda row: self.transpose_times(row, dofs))(jnp.eye(self.rows, dtype=self.multiplier.dtype))
