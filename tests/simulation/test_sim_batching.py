"""Batching: ``jit(vmap(step))`` over states equals the unbatched steps; vmap over parameters works."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js

BATCH = 64


def one_step(model, state, torques, params):
    return js.step(model, state, joint_torques=torques, params=params)


single = jax.jit(one_step)
batched = jax.jit(jax.vmap(one_step, in_axes=(None, 0, 0, None)))


def random_states(model: js.Model, seed: int, height: tuple[float, float]) -> list[js.State]:
    """States near the ground: some points in contact, random orientations, velocities and deformations."""
    rng = np.random.default_rng(seed)
    states = []
    for _ in range(BATCH):
        quaternion = np.array([1.0, *rng.normal(scale=0.2, size=3)])
        lower, upper = np.asarray(model.position_limit_lower), np.asarray(model.position_limit_upper)
        states.append(
            js.State.build(
                model,
                base_position=[*rng.normal(scale=0.5, size=2), rng.uniform(*height)],
                base_quaternion=quaternion / np.linalg.norm(quaternion),
                base_velocity=rng.normal(size=6),
                joint_positions=rng.uniform(np.maximum(lower, -1.0) - 0.05, np.minimum(upper, 1.0) + 0.05),
                joint_velocities=rng.normal(size=model.dofs),
                contact_deformation=rng.normal(scale=1e-3, size=(len(model.point_link), 3)),
            )
        )
    return states


@pytest.mark.parametrize(("name", "height"), [("box", (0.03, 0.1)), ("quadruped", (0.3, 0.45))])
def test_vmapped_step_equals_unbatched_steps(name, height, request, figures):
    model = request.getfixturevalue(name)
    params = js.SimulationParams.build(model)
    states = random_states(model, seed=7, height=height)
    torques = np.random.default_rng(8).normal(scale=5.0, size=(BATCH, model.dofs))
    stacked = jax.tree.map(lambda *leaves: jnp.stack(leaves), *states)
    next_batch, out_batch = batched(model, stacked, jnp.asarray(torques), params)
    touching = np.asarray(out_batch.in_contact).any(axis=1)
    assert 0 < touching.sum() < BATCH, "the batch should mix worlds in and out of contact"
    batch = jax.tree.map(np.asarray, (next_batch, out_batch))
    worst = 0.0
    for k, state in enumerate(states):
        expected = single(model, state, jnp.asarray(torques[k]), params)
        actual = jax.tree.map(lambda leaf: leaf[k], batch)
        for a, e in zip(jax.tree.leaves(actual), jax.tree.leaves(expected)):
            a, e = np.asarray(a, dtype=float), np.asarray(e, dtype=float)
            worst = max(worst, float(np.abs(a - e).max(initial=0.0)) / max(1.0, float(np.abs(e).max(initial=0.0))))
    figures(f"vmap step {name}: max scaled difference to unbatched", worst)
    assert worst < 1e-10


def test_vmap_over_friction(box, figures):
    """Four worlds with friction 0.2 ... 0.8: the pushed box decelerates at ``mu g`` in each, and
    each world equals its unbatched rollout."""
    params = js.SimulationParams.build(box)
    steps = 200
    state = js.State.build(box, base_position=[0.0, 0.0, 0.049], base_velocity=[2.0, 0, 0, 0, 0, 0])
    frictions = jnp.array([0.2, 0.4, 0.6, 0.8])

    def run(friction):
        world = params.replace(contact=params.contact.replace(friction=friction))
        return js.rollout(box, state, jnp.zeros((steps, 0)), params=world)[1][0].base_velocity[:, 0]

    speeds = np.asarray(jax.jit(jax.vmap(run))(frictions))
    deceleration = (speeds[:, 49] - speeds[:, 199]) / (150 * 0.001)
    ratios = deceleration / (np.asarray(frictions) * 9.81)
    figures("vmap over friction: deceleration / (mu g), worst", float(np.abs(ratios - 1).max()) + 1)
    np.testing.assert_allclose(ratios, 1.0, rtol=0.02)
    np.testing.assert_allclose(speeds[2], np.asarray(jax.jit(run)(frictions[2])), rtol=1e-12, atol=1e-12)
