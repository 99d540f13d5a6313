"""Fluid forces in the step (issue 31): gymnasium's swimmer, which only its fluid (density and
viscosity, MuJoCo's inertia-box model) propels, swims as in MuJoCo under a travelling wave of
torques (mj_step with MuJoCo's Euler; the file asks for RK4, whose comparison costs a longer
compilation); gradients of the distance swum with respect to the medium agree with central
differences. One compilation per program."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js

mujoco = pytest.importorskip("mujoco", reason="MJCF needs the mjcf extra (in the test extra)")
_GYMNASIUM = importlib.util.find_spec("gymnasium")  # its files only
SWIMMER = Path(_GYMNASIUM.submodule_search_locations[0], "envs", "mujoco", "assets", "swimmer.xml") if _GYMNASIUM else None
pytestmark = pytest.mark.skipif(SWIMMER is None, reason="gymnasium's files come with the gymnasium package (test extra)")
GEAR, DT = 150.0, 0.01  # the file's motors on motor1_rot and motor2_rot, its timestep


def controls(steps: int) -> np.ndarray:
    """``(T, 2)``: a travelling wave within the joints' ranges."""
    t = DT * np.arange(steps)
    return 0.3 * np.stack([np.sin(4 * t), np.cos(4 * t)], axis=1)


def torques(steps: int) -> np.ndarray:
    """``(T, 5)``: the motors' joint torques of :func:`controls`."""
    tau = np.zeros((steps, 5))
    tau[:, 3:] = GEAR * controls(steps)
    return tau


@pytest.fixture(scope="module")
def swimmer() -> js.Model:
    model = js.load_model(SWIMMER)
    assert model.joint_names == ("slider1", "slider2", "free_body_rot", "motor1_rot", "motor2_rot")
    assert float(model.fluid.density) == 4000.0 and float(model.fluid.viscosity) == 0.1 and model.fluid.count == 3
    return model


def test_the_swimmer_swims_as_in_mujoco(swimmer, sim, figures):
    """2 s: the same joint positions as MuJoCo's to rounding; without the fluid it goes elsewhere."""
    steps = 200
    m = mujoco.MjModel.from_xml_path(str(SWIMMER))
    m.opt.integrator = mujoco.mjtIntegrator.mjINT_EULER
    data = mujoco.MjData(m)
    for u in controls(steps):
        data.ctrl[:] = u
        mujoco.mj_step(m, data)
    reference = data.qpos - m.qpos0
    params = js.SimulationParams.build(swimmer, dt=DT, gravity=m.opt.gravity.copy(), integrator="semi_implicit_euler")
    final, _, _ = sim(swimmer, js.State.build(swimmer), params, steps=steps, torques=torques(steps))
    still = swimmer.replace(fluid=swimmer.fluid.replace(density=jnp.asarray(0.0), viscosity=jnp.asarray(0.0)))
    dry, _, _ = sim(still, js.State.build(still), params, steps=steps, torques=torques(steps))
    distance = figures("gymnasium swimmer: max |q - q_MuJoCo| after 2 s", float(np.abs(np.asarray(final.joint_positions) - reference).max()))
    assert distance < 1e-9 and np.abs(np.asarray(dry.joint_positions) - reference).max() > 0.01


def test_gradients_of_the_distance_swum_match_central_differences(swimmer):
    """d(x after 0.5 s)/d(density, viscosity), against central differences (float64)."""
    params = js.SimulationParams.build(swimmer, dt=DT, integrator="semi_implicit_euler")
    tau = jnp.asarray(torques(50))

    def swum(theta: jax.Array) -> jax.Array:
        fluid = swimmer.fluid.replace(density=theta[0], viscosity=theta[1])
        end, _ = js.rollout(swimmer.replace(fluid=fluid), js.State.build(swimmer), tau, params=params)
        return end.joint_positions[:1]

    theta = jnp.array([4000.0, 0.1])
    eps = jnp.array([1e-2, 1e-6])
    points = jnp.concatenate([theta[None], theta + jnp.diag(eps), theta - jnp.diag(eps)])
    values, jacobians = jax.jit(jax.vmap(lambda x: (swum(x), jax.jacfwd(swum)(x))))(points)  # one program
    central = (values[1:3] - values[3:]) / (2 * eps[:, None])
    assert np.all(np.isfinite(jacobians[0])) and np.all(np.abs(jacobians[0]) > 0)
    np.testing.assert_allclose(np.asarray(jacobians[0]), np.asarray(central).T, rtol=1e-5, atol=1e-12)
