"""An SDF ``gearbox`` joint held in the step (``tests/assets/sdf_joints/gears.sdf``): a torque
on the input gear swings both gears for 1 s at dt 1 ms, and the output follows the input by the
ratio, ``q_output = 2 q_input``, within the mimic joints' tolerance (1e-4 rad); without the
gearbox the output gear does not follow."""

from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js

GEARS = Path(__file__).resolve().parents[1] / "assets" / "sdf_joints" / "gears.sdf"
STEPS, DT = 1000, 0.001


@jax.jit
def _positions(model: js.Model, params: js.SimulationParams, torques: jax.Array) -> jax.Array:
    """The joint positions ``(T, 2)`` after each step from rest at zero under ``torques (T, 2)``."""
    _, (states, _) = js.rollout(model, js.State.build(model), torques, params=params)
    return states.joint_positions


def _torques() -> jax.Array:
    time = DT * np.arange(STEPS)
    return jnp.asarray(np.stack([0.4 * np.sin(2 * np.pi * time), np.zeros(STEPS)], axis=1))


@pytest.mark.parametrize("geared", [True, False])
def test_the_output_gear_follows_the_input_by_the_ratio(geared):
    source = GEARS.read_text()
    if not geared:
        source = source[: source.index('<joint name="mesh"')] + "</model></sdf>"
    model = js.load_model(source)
    q = np.asarray(_positions(model, js.SimulationParams.build(model, dt=DT), _torques()))
    assert np.ptp(q[:, 0]) > 0.5  # the input swings
    error = np.abs(q[:, 1] - 2.0 * q[:, 0]).max()
    if geared:
        assert error < 1e-4
    else:
        assert error > 0.1
