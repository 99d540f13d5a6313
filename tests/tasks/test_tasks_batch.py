"""The cart-pole task under one jit(vmap) of 1,024 worlds: random actions, automatic reset,
randomised parameters without recompilation. (The gradient of a return through the task is
checked against finite differences in tests/workflows/test_workflow_tasks.py, with the
compilation of the policy-gradient example it shares.)"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxsim_like import tasks
from jaxsim_like.simulation import control

BATCH = 1024


@pytest.fixture(scope="module")
def task():
    return tasks.cart_pole_swing_up(horizon=10)


@pytest.fixture(scope="module")
def batched():
    """``reset(task, keys)`` and ``step(task, states, actions)``, each jitted once, the task an argument."""
    reset = jax.jit(lambda task, keys: jax.vmap(task.reset)(keys))
    step = jax.jit(lambda task, states, actions: jax.vmap(task.step)(states, actions))
    return reset, step


def random_actions(key, size):
    return jax.random.uniform(key, (BATCH, size), minval=-1.5, maxval=1.5)  # beyond the bounds: clipped


def test_random_actions_stay_finite_and_truncate_at_the_horizon(task, batched):
    reset, step = batched
    states = reset(task, jax.random.split(jax.random.PRNGKey(0), BATCH))
    assert states.obs.shape == (BATCH, task.observation_size) == (BATCH, 5)
    assert not states.done.any()
    truncated = np.zeros(BATCH, int)
    for i in range(task.horizon):
        states = step(task, states, random_actions(jax.random.PRNGKey(i), task.action_size))
        assert np.isfinite(np.asarray(states.obs)).all() and np.isfinite(np.asarray(states.reward)).all()
        truncated += np.asarray(states.truncated)
    # Every world that did not terminate was truncated at the horizon (step 10) and restarted.
    assert (truncated <= 1).all() and truncated.sum() > 0.9 * BATCH
    assert (np.asarray(states.steps) < task.horizon).all()
    rewards = np.asarray(states.reward)
    assert (rewards <= 1.0).all() and (rewards > -1.0).all()


def test_terminated_worlds_restart_in_the_same_call(task, batched):
    reset, step = batched
    states = reset(task, jax.random.split(jax.random.PRNGKey(1), BATCH))
    for i in range(3):
        states = step(task, states, jnp.zeros((BATCH, 1)))
    off = np.arange(BATCH) % 3 == 0
    robot = states.world.states[0]
    x = jnp.where(off, 2.3, robot.joint_positions[:, 0])  # past the cart limit of 2.2 m
    states = states._replace(world=states.world._replace(states=(robot.replace(joint_positions=robot.joint_positions.at[:, 0].set(x)),)))
    following = step(task, states, jnp.zeros((BATCH, 1)))
    assert np.array_equal(np.asarray(following.terminated), off) and np.array_equal(np.asarray(following.done), off)
    steps = np.asarray(following.steps)
    assert (steps[off] == 0).all() and (steps[~off] == 4).all()
    # A restarted world is at a reset state: the cart near 0, the pole down, within the noise.
    q = np.asarray(following.world.states[0].joint_positions)
    assert np.abs(q[off, 0]).max() <= 0.05 and np.abs(q[off, 1] - np.pi).max() <= 0.05
    assert np.abs(q[~off, 0]).max() < 0.5
    assert np.asarray(following.world.steps)[off].max() == 0
    # Its observation is the reset's, its reward and flags those of the finishing step.
    np.testing.assert_allclose(np.asarray(following.obs)[off, 0], q[off, 0])
    assert np.isfinite(np.asarray(following.reward)).all()
    keys = np.asarray(following.key)
    assert len({tuple(k) for k in keys[off]}) == off.sum()  # fresh, distinct keys


def test_randomised_parameters_do_not_recompile(task, batched):
    reset, step = batched
    keys = jax.random.split(jax.random.PRNGKey(2), BATCH)
    reset(task, keys), step(task, reset(task, keys), jnp.zeros((BATCH, 1)))
    before = reset._cache_size(), step._cache_size()
    wide = task.replace(
        randomisation=tasks.Randomisation.build(mass_scale=(0.5, 2.0), friction=(0.5, 1.5), terrain_height=(-0.1, 0.1)),
        settings={**task.settings, "effort_cost": jnp.asarray(0.5)},
    )
    states = reset(wide, keys)
    scales = np.asarray(states.sample.mass_scale[0])
    assert scales.min() >= 0.5 and scales.max() <= 2.0 and scales.std() > 0.2
    heights = np.asarray(states.sample.terrain_height)
    assert heights.min() >= -0.1 and heights.max() <= 0.1 and heights.std() > 0.03
    nominal = step(task, reset(task, keys), jnp.ones((BATCH, 1)))
    randomised = step(wide, states, jnp.ones((BATCH, 1)))
    assert (reset._cache_size(), step._cache_size()) == before
    # The same push moves the heavier carts less (the initial states differ by the same noise).
    speed = np.asarray(randomised.world.states[0].joint_velocities[:, 0]) - np.asarray(nominal.world.states[0].joint_velocities[:, 0])
    cart_scale = scales[:, task.world.models[0].link_index("cart")]
    assert np.corrcoef(cart_scale, speed)[0, 1] < -0.8


def test_bad_arguments_name_themselves(task):
    model = task.world.models[0]
    with pytest.raises(ValueError, match=r"action must have shape \(1,\), got \(2,\)"):
        task.actions.values(jnp.zeros(2))
    with pytest.raises(ValueError, match="kind must be one of"):
        tasks.ActionMap.build(model, "force")
    with pytest.raises(ValueError, match="needs the PID gains"):
        tasks.ActionMap.build(model, "position", ["slider"])
    with pytest.raises(ValueError, match="mass_scale must be a \\(low, high\\) pair"):
        tasks.Randomisation.build(mass_scale=1.0)
    with pytest.raises(ValueError, match="substeps must be at least 1"):
        task.replace(substeps=0)
    targets = tasks.ActionMap.build(model, "velocity", ["slider"], scale=2.0, gains=(5.0, 0.0, 0.0))
    inputs = targets.inputs(jnp.array([0.5]))
    assert inputs.joint_torques is None and float(inputs.table[0, control.VELOCITY_TARGET]) == 1.0
    modes = [control.JointControlMode(int(m)) for m in inputs.table[:, control.MODE]]
    assert modes == [control.JointControlMode.velocity, control.JointControlMode.idle]  # the hinge stays free
