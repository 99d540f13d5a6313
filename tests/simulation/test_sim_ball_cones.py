"""Cone limits of ball joints in the step (issue 30): a spherical pendulum whose rest lies outside
its 40 degree cone, thrown into it, moves as MuJoCo's ``mj_step`` on the same file (MuJoCo's
default ``solreflimit`` and ``solimplimit``) over 1 s at 1 ms with each of our integrators, and
with ``solimplimit`` at its nearest to one (a hard cone); the row has no force inside the cone
and pushes along the rotation axis on it; gradients through a rollout that starts at the identity (where
the axis is undefined) and hits the cone equal central differences; MJX's ``pendula.xml``
loads, and its welded tree steps as MuJoCo's.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like.dynamics import configuration
from jaxsim_like.dynamics.ball_cones import rotation_angle_axis
from jaxsim_like.parsers import parse_mjcf_world
from jaxsim_like.simulation import constraint_rows

mujoco = pytest.importorskip("mujoco", reason="MJCF needs the mjcf extra (in the test extra)")

PENDULA = Path(mujoco.__file__).resolve().parent / "mjx" / "test_data" / "pendula.xml"
XML = """<mujoco><option timestep="0.001" integrator="{integrator}"/><worldbody>
  <body name="bob" pos="0 0 2" euler="60 0 0">
    <joint name="ball" type="ball" pos="0 0 0.5" range="0 40" damping="0.5" {solimp}/>
    <geom type="capsule" fromto="0 0 0.5 0.2 0.1 -0.1" size="0.04" mass="1" contype="0" conaffinity="0"/>
    <geom type="sphere" pos="0.2 0.1 -0.1" size="0.08" mass="2" contype="0" conaffinity="0"/>
  </body></worldbody></mujoco>"""
CONE, DAMPING, DT, STEPS = np.radians(40.0), 0.5, 0.001, 1000
IDENTITY = np.array([1.0, 0.0, 0.0, 0.0])
W0 = np.array([3.0, -2.0, 1.0])
HARD = 'solimplimit="0.9999 0.9999 0.001"'
# Our integrator, MuJoCo's, the file's solimplimit and the largest quaternion distance over 1 s
# (measured: 1.9e-3, 2.9e-3, 2.0e-6 and, hard, 3.4e-3; the reference is MuJoCo's, and the Euler
# steps differ in the joint's damping: our semi-implicit Euler takes it explicitly, our implicit
# Euler solves the row with it, MuJoCo's Euler solves the row without it, then takes it
# implicitly).
INTEGRATORS = {
    "implicit_euler": ("Euler", "", 4e-3),
    "semi_implicit_euler": ("Euler", "", 5e-3),
    "rk4": ("RK4", "", 1e-5),
    "implicit_euler, hard": ("Euler", HARD, 5e-3),
}


def angles(quaternions: np.ndarray) -> np.ndarray:
    return 2 * np.arctan2(np.linalg.norm(quaternions[..., 1:], axis=-1), np.abs(quaternions[..., 0]))


@pytest.fixture(scope="module")
def pendulum() -> js.Model:
    return js.load_model(XML.format(integrator="Euler", solimp=""))


@pytest.fixture(scope="module")
def runs(pendulum):
    """Per case: MuJoCo's ``qpos`` after each step, and our states and outputs."""

    @jax.jit
    def run(model: js.Model, params: js.SimulationParams):
        state = js.State.build(model, joint_positions=IDENTITY, joint_velocities=W0)
        return js.rollout(model, state, jnp.zeros((STEPS, 3)), params=params)[1]

    results = {}
    for case, (theirs, solimp, _) in INTEGRATORS.items():
        xml = XML.format(integrator=theirs, solimp=solimp)
        m = mujoco.MjModel.from_xml_string(xml)
        d = mujoco.MjData(m)
        d.qpos[:], d.qvel[:] = IDENTITY, W0
        reference = np.zeros((STEPS, 4))
        for k in range(STEPS):
            mujoco.mj_step(m, d)
            reference[k] = d.qpos
        model = pendulum if not solimp else js.load_model(xml)
        states, outputs = run(model, js.SimulationParams.build(model, dt=DT, integrator=case.split(",")[0]))
        results[case] = reference, jax.tree.map(np.asarray, states), jax.tree.map(np.asarray, outputs)
    return results


def test_the_cone_is_read_as_mujoco_compiles_it():
    xml = XML.format(integrator="Euler", solimp='margin="0.01" solreflimit="0.03 0.8" solimplimit="0.8 0.9 0.01 0.4 3"')
    model = js.load_model(xml)
    cones = model.ball_cones
    assert cones.balls == (0,) and model.joint_position_size == 4
    np.testing.assert_allclose([cones.angle[0], cones.margin[0], cones.time_constant[0], cones.damping_ratio[0]], [CONE, 0.01, 0.024, 0.8], rtol=1e-15)
    m = mujoco.MjModel.from_xml_string(xml)
    np.testing.assert_array_equal(cones.solimp[0], [0.8, 0.9, 0.01, 0.4, 3.0])
    assert float(cones.inverse_weight[0]) == m.dof_invweight0[0] > 0
    assert np.all(np.isinf(np.asarray(model.position_limit_upper)))  # the cone is not a box on the rotation vector


def test_the_impedance_is_mujocos():
    """MuJoCo's ``efc_KBIP`` impedance of limit rows at depths across the ``solimp`` width."""
    solimp = np.array([0.8, 0.9, 0.01, 0.4, 3.0])
    depths = np.array([0.001, 0.002, 0.004, 0.006, 0.01, 0.02])
    xml = '<mujoco><worldbody><body><joint type="slide" range="0 1" solimplimit="0.8 0.9 0.01 0.4 3"/><geom size="0.1"/></body></worldbody></mujoco>'
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    expected = []
    for depth in depths:
        d.qpos[0] = -depth
        mujoco.mj_forward(m, d)
        expected.append(d.efc_KBIP[0, 2])
    ours = constraint_rows.impedance(jnp.tile(jnp.asarray(solimp), (len(depths), 1)), -jnp.asarray(depths))
    np.testing.assert_allclose(np.asarray(ours), expected, rtol=1e-14)


@pytest.mark.parametrize("case", sorted(INTEGRATORS))
def test_a_pendulum_thrown_into_its_cone_moves_as_mujoco(runs, case, figures):
    reference, states, _ = runs[case]
    q = states.joint_positions
    assert np.mean(angles(reference) > CONE - 1e-3) > 0.4  # against the cone for about half the run
    distance = np.abs(q * np.sign(q[:, :1]) - reference * np.sign(reference[:, :1])).max()
    figures(f"ball cone, {case}: max |Q - Q_MuJoCo| over 1 s", float(distance))
    assert distance < INTEGRATORS[case][2]
    assert angles(q).max() < CONE + 0.1 and abs(angles(q[-1]) - CONE) < 3e-3  # rests on the cone


def test_the_cone_row_has_no_force_inside_the_cone_and_pushes_along_the_axis_on_it(runs):
    """Semi-implicit Euler applies the damping at the start of the step, so the joint torques
    less ``-damping omega`` are the cone row's ``-lambda axis``."""
    _, states, outputs = runs["semi_implicit_euler"]
    start_q = np.concatenate([IDENTITY[None], states.joint_positions[:-1]])
    start_w = np.concatenate([W0[None], states.joint_velocities[:-1]])
    row = outputs.joint_torques + DAMPING * start_w
    theta, axis = (np.asarray(x) for x in rotation_angle_axis(jnp.asarray(start_q)))
    inside = theta < CONE
    assert inside.sum() > 400 and (~inside).sum() > 300
    assert np.abs(row[inside]).max() == 0.0
    force = -np.einsum("ki,ki->k", row[~inside], axis[~inside])
    assert force.min() >= 0.0 and force.max() > 1.0
    np.testing.assert_allclose(row[~inside], -force[:, None] * axis[~inside], rtol=0, atol=1e-12)


def test_gradients_through_a_rollout_into_the_cone_equal_central_differences(pendulum):
    """d(final angular velocity)/d(cone angle, initial speed) over 0.15 s from the identity (the
    row's axis undefined at the first step), hitting the cone after 0.107 s."""
    params = js.SimulationParams.build(pendulum, dt=DT)

    def final(theta: jax.Array) -> jax.Array:
        model = pendulum.replace(ball_cones=pendulum.ball_cones.replace(angle=theta[:1]))
        start = js.State.build(model, joint_positions=IDENTITY, joint_velocities=theta[1] * jnp.asarray(2 * W0))
        end, (states, _) = js.rollout(model, start, jnp.zeros((150, 3)), params=params)
        return jnp.concatenate([end.joint_velocities, jnp.max(jax.vmap(lambda q: rotation_angle_axis(q)[0])(states.joint_positions))[None]])

    directional = jax.jit(lambda x, d: jax.jvp(final, (x,), (d,)))
    theta, eps = jnp.array([CONE, 1.0]), 1e-6
    for i, direction in enumerate(jnp.eye(2)):
        value, derivative = directional(theta, direction)
        assert float(value[3]) > CONE  # it hit the cone
        central = (directional(theta + eps * direction, direction)[0] - directional(theta - eps * direction, direction)[0]) / (2 * eps)
        assert np.all(np.isfinite(np.asarray(derivative)))
        np.testing.assert_allclose(np.asarray(derivative), np.asarray(central), rtol=1e-5, atol=1e-7, err_msg=f"direction {i}")


def _mujoco_joint(m, name: str) -> int:
    """MuJoCo's id of our joint ``name`` (an unnamed one is ``joint<id>``, underscores appended
    when the file names another joint so)."""
    j = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, name)
    return j if j >= 0 else int(name.removeprefix("joint").rstrip("_"))


def test_mjx_pendula_loads_and_its_welded_tree_steps_as_mujoco():
    """The tree of the bodies jointed to the world (a ball with a 35 degree cone, a slide and a
    ball stacked in one body, hinge chains, fixed tendons), without joint and tendon damping
    (MuJoCo's Euler takes them implicitly, our semi-implicit Euler explicitly) and gravity
    compensation (not represented), one step of 1 ms from rest: inside its cone and past it,
    every velocity equals MuJoCo's to rounding (the cone's row is MuJoCo's soft limit)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", js.ModelLoadWarning)  # dropped actuators, the integrator
        descriptions = parse_mjcf_world(PENDULA).models
    (description,) = [d for d in descriptions if any(j.cone is not None for j in d.joints)]
    model = js.dynamics.build_model(description)
    model = model.replace(joint_damping=jnp.zeros(model.dofs), tendons=model.tendons.replace(damping=jnp.zeros_like(model.tendons.damping)))
    assert model.ball_cones.balls == (model.ball_joint_names.index("joint1"),) and len(model.ball_dofs) == 3
    np.testing.assert_allclose(model.ball_cones.angle, [np.radians(35.0)], rtol=1e-15)
    m = mujoco.MjModel.from_xml_path(str(PENDULA))
    m.opt.timestep = DT
    m.body_gravcomp[:] = 0.0
    m.dof_damping[:] = 0.0
    m.tendon_damping[:] = 0.0
    d = mujoco.MjData(m)
    ids = [_mujoco_joint(m, name.rpartition(":")[0] if start is not None else name) for name, start in _joints(model)]
    dof_adr = np.array([m.jnt_dofadr[j] + (k if start is not None else 0) for (name, start), j, k in zip(_joints(model), ids, _ball_axes(model))])
    layout = configuration.position_layout(model)
    ball = model.ball_cones.balls[0]
    ball_dofs = model.ball_dofs[ball] + np.arange(3)
    axis = np.array([0.3, -0.5, 0.8]) / np.linalg.norm([0.3, -0.5, 0.8])
    params = js.SimulationParams.build(model, dt=DT, integrator="semi_implicit_euler")
    one_step = jax.jit(lambda state: js.step(model, state, params=params)[0])
    for degrees in (20.0, 45.0):
        quaternion = np.r_[np.cos(np.radians(degrees) / 2), np.sin(np.radians(degrees) / 2) * axis]
        q = np.array(configuration.neutral_positions(model, float))
        q[layout.ball_positions[ball] : layout.ball_positions[ball] + 4] = quaternion
        mujoco.mj_resetData(m, d)
        adr = m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, "joint1")]
        d.qpos[adr : adr + 4] = quaternion
        mujoco.mj_step(m, d)
        theirs = d.qvel[dof_adr]
        ours = np.asarray(one_step(js.State.build(model, joint_positions=q)).joint_velocities)
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12)
        assert (ours[ball_dofs] @ axis < -0.3) == (degrees > 35.0)  # past the cone: pushed back into it


def _joints(model: js.Model) -> list[tuple[str, int | None]]:
    """Each degree of freedom's name and, for a ball joint's, the ball's first one."""
    starts = {start + k: start for start in model.ball_dofs for k in range(3)}
    return [(name, starts.get(k)) for k, name in enumerate(model.joint_names)]


def _ball_axes(model: js.Model) -> list[int]:
    """Each degree of freedom's index within its ball joint (0 for scalar joints)."""
    return [k - start if start is not None else 0 for k, (_, start) in enumerate(_joints(model))]
