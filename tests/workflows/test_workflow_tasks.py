"""The learning examples in their --quick form: analytic policy gradients through the cart-pole
task (and the gradient they follow against central finite differences), the compact PPO and
Brax's own PPO through the Brax-style adapter."""

from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree

from jaxsim_like import tasks


@pytest.fixture(scope="module")
def apg(example):
    return example("cart_pole_apg")


def test_policy_gradient_matches_central_differences(apg):
    """The gradient of the quick run's return (its worlds, horizon and policy size, so the same
    compiled function) along two random directions of the MLP's parameters: untruncated, against
    central differences of the return; truncated to the quick run's window, against central
    differences of the sum of the windows' returns, each window started from where the
    unperturbed rollout reached (what holding the window's first state constant means)."""
    config = apg.settings(quick=True)
    task = tasks.cart_pole_swing_up(horizon=0, auto_reset=False)
    params = apg.init_policy(jax.random.PRNGKey(5), config["hidden"])
    keys = jax.random.split(jax.random.PRNGKey(6), config["worlds"])
    horizon, window, balancing = config["horizon"], config["window"], config["balancing"]
    assert horizon % window == 0 and window < horizon

    def gradient_of(window_):
        value, grads = apg.value_and_grad(params, keys, task, window_, horizon=horizon, balancing=balancing)
        assert np.isfinite(float(value))
        return value, ravel_pytree(grads)[0]

    def trajectory(params_):
        def one(state, _):
            return task.step(state, apg.policy(params_, state.obs)), state

        return jax.vmap(lambda start: jax.lax.scan(one, start, None, length=horizon)[1])(
            apg.training_starts(task, keys, balancing)
        )

    window_starts = jax.tree.map(lambda a: a[:, ::window], jax.jit(trajectory)(params))  # (W, K, ...)

    @jax.jit
    def windows_loss(params_):
        returns, _ = jax.vmap(jax.vmap(lambda s: apg.episode_return(task, params_, s, window, window)))(window_starts)
        return -jnp.mean(jnp.sum(returns, axis=1))

    flat, unflatten = ravel_pytree(params)
    eps = 1e-6
    full_value, full = gradient_of(horizon)
    truncated_value, truncated = gradient_of(window)
    assert float(truncated_value) == pytest.approx(float(full_value), rel=1e-12)
    assert float(windows_loss(params)) == pytest.approx(float(full_value), rel=1e-10)
    for seed in (0, 1):
        direction = jax.random.normal(jax.random.PRNGKey(seed), flat.shape)
        plus, minus = unflatten(flat + eps * direction), unflatten(flat - eps * direction)
        loss_plus = apg.value_and_grad(plus, keys, task, horizon, horizon=horizon, balancing=balancing)[0]
        loss_minus = apg.value_and_grad(minus, keys, task, horizon, horizon=horizon, balancing=balancing)[0]
        assert float(full @ direction) == pytest.approx(float(loss_plus - loss_minus) / (2 * eps), rel=1e-4)
        numeric = float(windows_loss(plus) - windows_loss(minus)) / (2 * eps)
        assert float(truncated @ direction) == pytest.approx(numeric, rel=1e-4)
        assert abs(float(truncated @ direction) - float(full @ direction)) > 1e-3 * abs(float(full @ direction))
    assert apg.value_and_grad._cache_size() == 1  # the window is traced


def test_apg_quick_improves_the_return(apg, tmp_path, workflow_figures):
    figures = apg.run(quick=True, plot=str(tmp_path), verbose=False)
    for name, value in figures.items():
        if name != "plots":
            workflow_figures(f"cart-pole APG: {name}", value)
    assert figures["final_return"] > figures["initial_return"] + 5
    assert (Path(figures["plots"]) / "cart_pole_apg.png").stat().st_size > 5_000
    assert apg.value_and_grad._cache_size() == 1  # the gradient test's compilation, reused


def test_ppo_quick_improves_the_return(example, tmp_path, workflow_figures):
    figures = example("ppo_brax_style").run("cart_pole", quick=True, plot=str(tmp_path), verbose=False)
    for name, value in figures.items():
        if name != "plots":
            workflow_figures(f"cart-pole PPO: {name}", value)
    assert figures["final_episode_return"] > figures["first_episode_return"] + 2
    assert (Path(figures["plots"]) / "ppo_cart_pole.png").stat().st_size > 5_000


def test_brax_ppo_quick_improves_the_return(example, tmp_path, workflow_figures):
    """Brax's own PPO trainer, wrappers and evaluator, through the Brax-style adapter."""
    pytest.importorskip("brax")
    had_replicated = hasattr(jax, "device_put_replicated")
    try:
        figures = example("ppo_brax").run(quick=True, plot=str(tmp_path), verbose=False)
    finally:
        if not had_replicated and hasattr(jax, "device_put_replicated"):
            del jax.device_put_replicated
    for name, value in figures.items():
        if name != "plots":
            workflow_figures(f"cart-pole Brax PPO: {name}", value)
    assert figures["final_evaluation_return"] > figures["first_evaluation_return"] + 5
    assert (Path(figures["plots"]) / "ppo_brax_cart_pole.png").stat().st_size > 5_000
