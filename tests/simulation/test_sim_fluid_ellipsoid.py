"""MuJoCo's ellipsoid fluid model in the step (issue 31), on tests/assets/fluid_ellipsoids.xml (a
free hull with an oar and a rudder, a wind): 0.2 s under a travelling wave of torques equal to
MuJoCo's Euler with the explicit step (the model has no joint damping, so MuJoCo's Euler is
explicit too); the implicit step, which takes the drags at the end of the step, stays near
MuJoCo's ``implicitfast`` (which takes every fluid force's derivative, symmetrised); the gradient
of the hull's travel with respect to the density agrees with central differences. One
compilation per program."""

from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js

mujoco = pytest.importorskip("mujoco", reason="MJCF needs the mjcf extra (in the test extra)")
ELLIPSOIDS = Path(__file__).resolve().parents[1] / "assets" / "fluid_ellipsoids.xml"
DT, STEPS = 0.002, 100


def torques(steps: int) -> np.ndarray:
    """``(T, 3)`` [N m]: a travelling wave on swing, twist and steer."""
    t = DT * np.arange(steps)[:, None]
    return np.array([0.5, 0.05, 0.1]) * np.sin(20 * t + np.array([0.0, 1.0, 2.0]))


@pytest.fixture(scope="module")
def rowing() -> js.Model:
    model = js.load_model(ELLIPSOIDS)
    assert model.joint_names == ("swing", "twist", "steer") and model.fluid.geom_count == 4
    return model


def mujoco_rollout(integrator: str) -> tuple[np.ndarray, np.ndarray]:
    """MuJoCo's base positions ``(T, 3)`` and joint positions ``(T, 3)`` under :func:`torques`."""
    m = mujoco.MjModel.from_xml_path(str(ELLIPSOIDS))
    m.opt.timestep, m.opt.integrator = DT, getattr(mujoco.mjtIntegrator, f"mjINT_{integrator.upper()}")
    d = mujoco.MjData(m)
    dofs = [m.jnt_dofadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, name)] for name in ("swing", "twist", "steer")]
    base, joints = [], []
    for tau in torques(STEPS):
        d.qfrc_applied[dofs] = tau
        mujoco.mj_step(m, d)
        base.append(d.qpos[:3].copy())
        joints.append(d.qpos[7:].copy())
    return np.array(base), np.array(joints)


def params(model: js.Model, integrator: str) -> js.SimulationParams:
    no_contacts = np.zeros(model.number_of_links, bool)
    return js.SimulationParams.build(model, dt=DT, gravity=[0.0, 0.0, -9.81], integrator=integrator, contact_enabled_links=no_contacts)


@pytest.fixture(scope="module")
def explicit(rowing):
    """``explicit(density)``: the explicit step's base and joint positions after each step ``(T,
    3)`` and their derivatives by the density, by forward mode (one compilation)."""
    p = params(rowing, "semi_implicit_euler")
    tau = jnp.asarray(torques(STEPS))

    def positions(density: jax.Array) -> tuple[jax.Array, jax.Array]:
        model = rowing.replace(fluid=rowing.fluid.replace(density=density))
        _, (states, _) = js.rollout(model, js.State.build(rowing), tau, params=p)
        return states.base_position, states.joint_positions

    program = jax.jit(lambda x: jax.jvp(positions, (x,), (jnp.ones_like(x),)))
    return lambda density: program(jnp.asarray(density, dtype=jnp.float64))


def test_the_explicit_step_equals_mujocos_euler(explicit, figures):
    (base, joints), _ = explicit(1000.0)
    their_base, their_joints = mujoco_rollout("euler")
    distance = max(np.abs(np.asarray(base) - their_base).max(), np.abs(np.asarray(joints) - their_joints).max())
    figures("fluid_ellipsoids.xml: max |q - q_MuJoCo euler| over 0.2 s (explicit step)", float(distance))
    assert distance < 1e-12 and np.abs(their_joints).max() > 0.1  # the oar swings


def test_the_implicit_step_stays_near_mujocos_implicitfast(rowing, sim, figures):
    """Measured 0.036 rad over 0.2 s; MuJoCo's ``implicit`` is 0.017 from ``implicitfast`` and
    its Euler 0.3 (the rudder spins at 100 rad/s)."""
    _, states, outputs = sim(rowing, js.State.build(rowing), params(rowing, "implicit_euler"), steps=STEPS, torques=torques(STEPS))
    base, joints = mujoco_rollout("implicitfast")
    distance = max(np.abs(np.asarray(states.base_position) - base).max(), np.abs(np.asarray(states.joint_positions) - joints).max())
    figures("fluid_ellipsoids.xml: max |q - q_MuJoCo implicitfast| over 0.2 s (implicit step)", float(distance))
    assert np.all(np.asarray(outputs.finite)) and distance < 0.1


def test_gradient_of_the_travel_matches_central_differences(explicit):
    """d(hull's x after 0.2 s)/d(density) by forward mode against central differences."""
    density, eps = 1000.0, 1e-2
    (_, _), (slope, _) = explicit(density)
    (above, _), _ = explicit(density + eps)
    (below, _), _ = explicit(density - eps)
    central = (above[-1, 0] - below[-1, 0]) / (2 * eps)
    assert abs(float(slope[-1, 0])) > 1e-6
    np.testing.assert_allclose(float(slope[-1, 0]), float(central), rtol=1e-5)
