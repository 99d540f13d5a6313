"""The quadruped task: floating base on randomised ground, position targets through the PD table."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxsim_like import tasks
from jaxsim_like.tasks import quadruped


def test_quadruped_stands_on_randomised_ground_and_survives_random_targets():
    randomisation = tasks.Randomisation.build(mass_scale=(0.9, 1.1), friction=(0.8, 1.2), terrain_height=(-0.05, 0.05))
    task = tasks.quadruped_walk(randomisation=randomisation, auto_reset=False)
    worlds = 16
    reset = jax.jit(jax.vmap(task.reset))
    step = jax.jit(jax.vmap(task.step))
    start = reset(jax.random.split(jax.random.PRNGKey(0), worlds))
    assert start.obs.shape == (worlds, 34) and task.action_size == 12
    heights = np.asarray(start.sample.terrain_height)
    np.testing.assert_allclose(np.asarray(start.obs[:, 0]), quadruped.STANCE_HEIGHT + 0.01, atol=1e-9)  # above its own ground
    state = start
    for _ in range(50):  # 1 s of zero actions: hold the stance
        state = step(state, jnp.zeros((worlds, 12)))
    assert not np.asarray(state.terminated).any()
    robot = state.world.states[0]
    np.testing.assert_allclose(np.asarray(robot.base_position[:, 2]) - heights, quadruped.STANCE_HEIGHT, atol=0.03)
    assert np.abs(np.asarray(robot.joint_positions) - quadruped.stance()).max() < 0.15  # the PD holds the targets
    # It settles rocking gently on its PD (a few cm/s, decaying), where it landed.
    assert np.abs(np.asarray(state.metrics["forward_speed"])).max() < 0.15
    assert np.abs(np.asarray(robot.base_position[:, :2])).max() < 0.1
    np.testing.assert_allclose(np.asarray(state.reward), 0.5, atol=0.16)  # alive, nearly still, a small effort
    np.testing.assert_array_equal(np.asarray(state.metrics["feet_touching"]), 4.0)  # on its own ground
    robot_up = start.world.states[0].replace(base_position=start.world.states[0].base_position.at[:, 2].add(0.3))
    lifted = step(start._replace(world=start.world._replace(states=(robot_up,))), jnp.zeros((worlds, 12)))
    np.testing.assert_array_equal(np.asarray(lifted.metrics["feet_touching"]), 0.0)  # 0.3 m up in the air
    falls = np.zeros(worlds, bool)
    for i in range(25):  # then random targets
        state = step(state, jax.random.uniform(jax.random.PRNGKey(i), (worlds, 12), minval=-1, maxval=1))
        falls |= np.asarray(state.terminated)
        assert np.isfinite(np.asarray(state.obs)).all()
    assert falls.sum() <= worlds // 4
