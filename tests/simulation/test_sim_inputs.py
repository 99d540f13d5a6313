"""Bad input to the simulation API raises ValueError naming the culprit."""

from __future__ import annotations

import jax
import numpy as np
import pytest

import jaxsim_like as js


@pytest.fixture(scope="module")
def setup(pendulum):
    return pendulum, js.State.build(pendulum), js.SimulationParams.build(pendulum)


@pytest.mark.parametrize("torques", [np.zeros(2), np.zeros((1, 1)), np.zeros(0)])
def test_step_rejects_wrong_torque_shape(setup, torques):
    model, state, params = setup
    with pytest.raises(ValueError, match="joint_torques"):
        js.step(model, state, joint_torques=torques, params=params)


@pytest.mark.parametrize("torques", [np.zeros((10, 2)), np.zeros(10), np.zeros((10, 1, 1))])
def test_rollout_rejects_wrong_torque_shape(setup, torques):
    model, state, params = setup
    with pytest.raises(ValueError, match="joint_torques"):
        js.rollout(model, state, torques, params=params)


@pytest.mark.parametrize("at_com", [False, True])
def test_step_rejects_wrong_link_wrench_shape(setup, at_com):
    model, state, params = setup
    wrenches = np.zeros((model.number_of_links + 1, 6))
    with pytest.raises(ValueError, match="link_wrenches must have shape"):
        jax.eval_shape(lambda s: js.step(model, s, link_wrenches=wrenches, params=params, link_wrenches_at_com=at_com), state)


@pytest.mark.parametrize("integrator", ["euler", "RK4", ""])
def test_unknown_integrator_raises_at_build(setup, integrator):
    model, _, _ = setup
    with pytest.raises(ValueError, match="integrator"):
        js.SimulationParams.build(model, integrator=integrator)


def test_unknown_integrator_raises_at_step(setup):
    """An integrator set after building (``replace``) must not silently fall back to another one."""
    model, state, params = setup
    unknown = params.replace(integrator="explicit_euler")
    with pytest.raises(ValueError, match="integrator"):
        jax.eval_shape(lambda s: js.step(model, s, params=unknown), state)


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [("dt", 0.0, "dt"), ("dt", -1e-3, "dt"), ("gravity", (0.0, -9.81), "gravity"), ("contact_enabled_links", [True], "contact_enabled_links")],
)
def test_build_rejects_bad_options(setup, option, value, message):
    model, _, _ = setup
    with pytest.raises(ValueError, match=message):
        js.SimulationParams.build(model, **{option: value})
