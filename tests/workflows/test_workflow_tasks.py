"""The learning examples in their --quick form: analytic policy gradients through the cart-pole
task (and the gradient they follow against central finite differences), PPO through the
Brax-style adapter."""

from __future__ import annotations

from pathlib import Path

import jax
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree

from jaxsim_like import tasks


@pytest.fixture(scope="module")
def apg(example):
    return example("cart_pole_apg")


def test_policy_gradient_matches_central_differences(apg):
    """The gradient of the quick run's return (its worlds, horizon and policy size, so the same
    compiled function) along two random directions of the MLP's parameters."""
    config = apg.settings(quick=True)
    task = tasks.cart_pole_swing_up(horizon=0, auto_reset=False)
    params = apg.init_policy(jax.random.PRNGKey(5), config["hidden"])
    keys = jax.random.split(jax.random.PRNGKey(6), config["worlds"])
    horizon = config["horizon"]
    value, grads = apg.value_and_grad(params, keys, task, horizon=horizon, balancing=config["balancing"])
    flat, unflatten = ravel_pytree(params)
    gradient = ravel_pytree(grads)[0]
    eps = 1e-6
    for seed in (0, 1):
        direction = jax.random.normal(jax.random.PRNGKey(seed), flat.shape)
        plus = apg.value_and_grad(unflatten(flat + eps * direction), keys, task, horizon=horizon, balancing=config["balancing"])[0]
        minus = apg.value_and_grad(unflatten(flat - eps * direction), keys, task, horizon=horizon, balancing=config["balancing"])[0]
        numeric = float(plus - minus) / (2 * eps)
        assert float(gradient @ direction) == pytest.approx(numeric, rel=1e-4)
    assert np.isfinite(float(value)) and apg.value_and_grad._cache_size() == 1


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
