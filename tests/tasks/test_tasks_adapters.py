"""The adapters: gymnasium's functional environment (its own checker, the vector environment)
and the Brax-style environment, on the cart-pole task."""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxsim_like import tasks
from jaxsim_like.tasks.brax_style import BraxStyleEnv, EnvState, for_brax

gymnasium = pytest.importorskip("gymnasium")
pytest.importorskip("array_api_compat")


@pytest.fixture(scope="module")
def task():
    return tasks.cart_pole_swing_up(horizon=20)


def test_gymnasium_checker_passes(task):
    from gymnasium.utils.env_checker import check_env

    from jaxsim_like.tasks.gym import make_env

    env = make_env(task)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*different from the unwrapped version.*")
        check_env(env, skip_render_check=True)
    obs, _ = env.reset(seed=3)
    assert isinstance(obs, np.ndarray) and obs.shape == env.observation_space.shape == (5,)
    again, _ = env.reset(seed=3)
    np.testing.assert_array_equal(obs, again)
    total, steps, truncated = 0.0, 0, False
    while not truncated:
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
        total, steps = total + reward, steps + 1
        assert not terminated and set(info) == {"upright", "cart_position"}
    assert steps == task.horizon and np.isfinite(total)


def test_gymnasium_vector_env_resets_finished_worlds(task):
    from jaxsim_like.tasks.gym import make_vector_env

    env = make_vector_env(task, num_envs=4, max_episode_steps=5)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (4, 5)
    for i in range(6):
        obs, reward, terminated, truncated, info = env.step(np.zeros((4, 1)))
        assert np.asarray(truncated).all() == (i == 4)
    assert np.isfinite(np.asarray(obs)).all() and np.asarray(obs)[:, 1].max() < -0.99  # restarted, pole down
    assert info["upright"].shape == (4,)


def test_brax_style_env_follows_brax_state_fields(task):
    env = BraxStyleEnv(task)
    assert (env.observation_size, env.action_size) == (5, 1) and env.unwrapped is env
    reset, step = jax.jit(env.reset), jax.jit(env.step)
    state = reset(jax.random.PRNGKey(0))
    assert isinstance(state, EnvState) and state.done.dtype == state.reward.dtype == state.obs.dtype
    state.info["steps"] = jnp.zeros(())  # Brax's wrappers write into info and metrics
    state.metrics["reward"] = state.reward
    dones = []
    for _ in range(task.horizon):
        state = step(state, jnp.ones(1))
        dones.append(float(state.done))
    assert dones[-1] == 1.0 and float(state.info["truncation"]) == 1.0 and sum(dones) == 1.0
    assert int(state.pipeline_state.steps) == 0 and "steps" in state.info  # restarted by the task
    assert set(state.metrics) == {"upright", "cart_position", "reward"}  # the wrapper's key carried over
    following = step(state, jnp.ones(1))
    assert float(following.metrics["upright"]) == float(following.pipeline_state.metrics["upright"])  # the task's, updated
    assert float(following.metrics["upright"]) != float(state.metrics["upright"])
    raw = for_brax(task)
    assert raw.task.horizon == 0 and not raw.task.auto_reset
    assert state.replace(reward=jnp.ones(())).reward == 1.0
