"""``vmap`` over a batch of states equals a loop over single states."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

import jaxsim_like as js
from jaxsim_like import dynamics as D

from .conftest import Case, assert_close

BATCH = 4096


def forward_dynamics(model: js.Model, position, quaternion, velocity, q, qd, tau, wrenches) -> jax.Array:
    state = js.State.build(
        model, base_position=position, base_quaternion=quaternion, base_velocity=velocity, joint_positions=q, joint_velocities=qd
    )
    return jnp.concatenate(D.forward_dynamics(model, state, joint_torques=tau, link_wrenches=wrenches))


def test_vmap_of_forward_dynamics_equals_a_loop(lab):
    model = lab.model(Case("humanoid", True))
    rng = np.random.default_rng(3)
    n, N = model.dofs, model.number_of_links
    quaternion = rng.normal(size=(BATCH, 4))
    batch = (
        rng.normal(size=(BATCH, 3)),
        quaternion / np.linalg.norm(quaternion, axis=1, keepdims=True),
        rng.normal(size=(BATCH, 6)),
        rng.uniform(-np.pi, np.pi, size=(BATCH, n)),
        rng.normal(size=(BATCH, n)),
        rng.normal(size=(BATCH, n)),
        rng.normal(size=(BATCH, N, 6)),
    )
    single = jax.jit(forward_dynamics)
    batched = jax.jit(jax.vmap(forward_dynamics, in_axes=(None,) + (0,) * len(batch)))
    together = np.asarray(batched(model, *batch))
    assert together.shape == (BATCH, 6 + n)
    one_by_one = np.stack([np.asarray(single(model, *(values[i] for values in batch))) for i in range(BATCH)])
    # Batched and single programs may order floating-point operations differently: compare each
    # state at its own scale (the accelerations of the worst-conditioned states reach 1e4), at
    # the tolerance of the reference tests.
    scale = np.maximum(1.0, np.max(np.abs(one_by_one), axis=1))
    worst = int(np.argmax(np.max(np.abs(together - one_by_one), axis=1) / scale))
    assert_close(together[worst], one_by_one[worst], "vmap vs loop (ABA, 4096 states)", where=f"state {worst}")
