"""Soft joint limits of MJCF hinges and slides in the step (issue 31): an arm on a hinge and a
block on a slide, thrown against both sides of their ranges (and the arm started outside its
range, as gymnasium's Ant starts its ankles), move as MuJoCo's ``mj_step`` on the same file over
1 s at 1 ms with each of our integrators; the row pushes up at the lower side and down at the
upper side only within the margin; the file's limit parameters are read as MuJoCo compiles them;
URDF joints keep the spring-damper limit; gradients through a rollout into a limit equal central
differences.
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like.simulation.joint_effects import joint_effects

mujoco = pytest.importorskip("mujoco", reason="MJCF needs the mjcf extra (in the test extra)")

XML = """<mujoco><option timestep="0.001" integrator="{integrator}"/><worldbody>
  <body name="arm" pos="0 0 2">
    <joint name="hinge" type="hinge" axis="0 1 0" range="-20 30"/>
    <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.04" mass="1" contype="0" conaffinity="0"/>
    <geom type="sphere" pos="0 0 -0.3" size="0.08" mass="2" contype="0" conaffinity="0"/>
  </body>
  <body name="block" pos="1 0 2">
    <joint name="slide" type="slide" axis="0.6 0 0.8" range="-0.1 0.15" {slide}/>
    <geom type="box" size="0.05 0.05 0.05" mass="1.5" contype="0" conaffinity="0"/>
  </body></worldbody></mujoco>"""
SLIDE = 'margin="0.01" solreflimit="0.03 0.8" solimplimit="0.8 0.9 0.01 0.4 3"'
DT, STEPS = 0.001, 1000
# Thrown against both sides; the arm started 14 degrees below its range, at rest.
STARTS = np.array([[0.0, 0.0], [-0.6, 0.0]])
SPEEDS = np.array([[6.0, 1.5], [0.0, 0.0]])
LOWER, UPPER = np.array([np.radians(-20.0), -0.1]), np.array([np.radians(30.0), 0.15])
MARGIN = np.array([0.0, 0.01])
# Our integrator and MuJoCo's; the largest joint distance over 1 s [rad or m] (measured: 1.1e-12,
# 1.1e-12, 9.5e-13: the row is MuJoCo's, and nothing else acts but gravity).
INTEGRATORS = {"implicit_euler": "Euler", "semi_implicit_euler": "Euler", "rk4": "RK4"}


@pytest.fixture(scope="module")
def model() -> js.Model:
    return js.load_model(XML.format(integrator="Euler", slide=SLIDE))


@pytest.fixture(scope="module")
def runs(model):
    """Per integrator: MuJoCo's ``qpos`` after each step ``(2, T, 2)`` from both starts, and our
    states and outputs (one program per integrator, over both starts)."""

    def run(params: js.SimulationParams):
        def one(q0, v0):
            state = js.State.build(model, joint_positions=q0, joint_velocities=v0)
            return js.rollout(model, state, jnp.zeros((STEPS, 2)), params=params)[1]

        return jax.jit(jax.vmap(one))(jnp.asarray(STARTS), jnp.asarray(SPEEDS))

    results = {}
    for ours, theirs in INTEGRATORS.items():
        m = mujoco.MjModel.from_xml_string(XML.format(integrator=theirs, slide=SLIDE))
        d = mujoco.MjData(m)
        reference = np.zeros((len(STARTS), STEPS, 2))
        for case, (q0, v0) in enumerate(zip(STARTS, SPEEDS)):
            mujoco.mj_resetData(m, d)
            d.qpos[:], d.qvel[:] = q0, v0
            for k in range(STEPS):
                mujoco.mj_step(m, d)
                reference[case, k] = d.qpos
        states, outputs = run(js.SimulationParams.build(model, dt=DT, integrator=ours))
        results[ours] = reference, jax.tree.map(np.asarray, states), jax.tree.map(np.asarray, outputs)
    return results


def test_the_limits_are_read_as_mujoco_compiles_them(model):
    m = mujoco.MjModel.from_xml_string(XML.format(integrator="Euler", slide=SLIDE))
    limits = model.soft_limits
    assert limits.dofs == (0, 1) and model.joint_names == ("hinge", "slide")
    np.testing.assert_allclose(model.position_limit_lower, LOWER, rtol=1e-15)
    np.testing.assert_allclose(model.position_limit_upper, UPPER, rtol=1e-15)
    np.testing.assert_allclose(limits.margin, MARGIN, rtol=0, atol=0)
    np.testing.assert_allclose(limits.time_constant, [0.02, 0.024], rtol=1e-15)  # solref (t, z): t z
    np.testing.assert_allclose(limits.damping_ratio, [1.0, 0.8], rtol=1e-15)
    np.testing.assert_array_equal(limits.solimp, m.jnt_solimp)
    np.testing.assert_array_equal(limits.inverse_weight, m.dof_invweight0)
    assert np.all(np.asarray(limits.inverse_weight) > 0)


def test_urdf_joints_keep_the_spring_damper_limit(model):
    """The soft-limited joint feels no spring-damper past its range; a URDF joint still does."""
    urdf = js.load_model(js.models.path("pendulum"))
    assert urdf.soft_limits.count == 0 and np.isfinite(np.asarray(urdf.position_limit_upper)).all()
    ones = jnp.ones(1)
    past = urdf.position_limit_upper + 0.1
    urdf_torque = joint_effects(urdf, past, jnp.zeros(1), jnp.zeros(1), limit_stiffness=ones, limit_damping=ones, friction_velocity=ones).torques
    np.testing.assert_allclose(urdf_torque, [-0.1], rtol=1e-12)
    twos = jnp.ones(2)
    ours = joint_effects(model, model.position_limit_upper + 0.1, jnp.zeros(2), jnp.zeros(2), limit_stiffness=twos, limit_damping=twos, friction_velocity=twos)
    assert np.all(np.asarray(ours.torques) == 0.0) and np.all(np.asarray(ours.stiffness) == 0.0)


@pytest.mark.parametrize("integrator", sorted(INTEGRATORS))
def test_a_hinge_and_a_slide_thrown_into_their_limits_move_as_mujoco(runs, integrator, figures):
    reference, states, _ = runs[integrator]
    below = reference < LOWER + MARGIN
    above = reference > UPPER - MARGIN
    assert below[0].any(axis=0).all() and above[0].any(axis=0).all()  # both sides of both joints
    assert reference[1, :, 0].max() > UPPER[0]  # from below the range, thrown through it
    distance = np.abs(states.joint_positions - reference).max()
    figures(f"soft joint limits, {integrator}: max |q - q_MuJoCo| over 1 s", float(distance))
    assert distance < 1e-10


def test_the_row_pushes_up_at_the_lower_side_and_down_at_the_upper_side(runs):
    """Semi-implicit Euler: the joint torques are the rows' (no damping here); no force inside
    the range less its margins."""
    _, states, outputs = runs["semi_implicit_euler"]
    start = np.concatenate([STARTS[:, None], states.joint_positions[:, :-1]], axis=1)
    torques = outputs.joint_torques
    below, above = start < LOWER + MARGIN, start > UPPER - MARGIN
    inside = ~below & ~above
    assert inside.sum() > 1000 and below.sum() > 100 and above.sum() > 100
    assert np.all(torques[inside] == 0.0)
    assert torques[below].min() >= 0.0 and torques[below].max() > 1.0
    assert torques[above].max() <= 0.0 and torques[above].min() < -1.0


def test_gradients_through_a_rollout_into_a_limit_equal_central_differences(model):
    """d(final positions and velocities)/d(upper bounds, initial speed scale) over 0.2 s, both
    joints thrown into their upper sides (the hinge at 0.09 s)."""
    params = js.SimulationParams.build(model, dt=DT)

    def final(theta: jax.Array) -> jax.Array:
        moved = model.replace(position_limit_upper=theta[:2])
        start = js.State.build(moved, joint_velocities=theta[2] * jnp.asarray(SPEEDS[0]))
        end, (states, _) = js.rollout(moved, start, jnp.zeros((200, 2)), params=params)
        return jnp.concatenate([end.joint_positions, end.joint_velocities, jnp.max(states.joint_positions, axis=0)])

    directional = jax.jit(lambda x, d: jax.jvp(final, (x,), (d,)))
    theta, eps = jnp.asarray([UPPER[0], UPPER[1], 1.0]), 1e-6
    for i, direction in enumerate(jnp.eye(3)):
        value, derivative = directional(theta, direction)
        assert np.all(np.asarray(value[4:]) > UPPER - MARGIN)  # both reached their limits
        central = (directional(theta + eps * direction, direction)[0] - directional(theta - eps * direction, direction)[0]) / (2 * eps)
        assert np.all(np.isfinite(np.asarray(derivative)))
        np.testing.assert_allclose(np.asarray(derivative), np.asarray(central), rtol=1e-5, atol=1e-7, err_msg=f"direction {i}")


def test_a_range_narrower_than_twice_its_margin_warns_with_its_line():
    xml = XML.format(integrator="Euler", slide='margin="0.2"')
    with pytest.warns(js.ModelLoadWarning, match="'slide' is narrower than twice its margin") as caught:
        js.load_model(xml)
    assert any(w.message.line == 8 and w.message.element == "<joint name=\"slide\">" for w in caught)


def test_reduce_keeps_the_soft_limits_of_the_kept_joints(model):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", js.ModelLoadWarning)
        reduced = js.dynamics.reduce(model, ["slide"])
    assert reduced.soft_limits.dofs == (0,)
    np.testing.assert_array_equal(reduced.soft_limits.margin, [0.01])
    np.testing.assert_array_equal(reduced.soft_limits.solimp, model.soft_limits.solimp[1:])
