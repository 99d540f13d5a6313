"""SDF loop closures in the step: the four-bar of ``tests/assets/sdf_loops/four_bar.sdf``, closed by
its revolute joint 'pin' (a hinge), moves as the same linkage written as MJCF with two connect
equalities on the pin's axis: to rounding in our step (the planar linkage moves neither), and
as MuJoCo's ``mj_step`` within the first-order difference of the two discretisations (see
``test_sim_loops.py``); closed by a ``fixed`` joint (a weld) it stays still; one step of it
equals Pinocchio's constrained dynamics; a ball joint closed by a revolute joint swings as a
revolute joint. Semi-implicit Euler (MuJoCo's Euler), dt 1 ms, 1 s from rest, the closures made
stiff as in ``test_sim_loops.py``: time constant 2 ms, damping ratio 1 (MuJoCo's ``solref="0.002
1"`` with an impedance of nearly one)."""

from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like.dynamics.kinematics import kinematics
from jaxsim_like.dynamics.loops import loop_rows

mujoco = pytest.importorskip("mujoco", reason="MJCF needs the mjcf extra (in the test extra)")

FOUR_BAR = (Path(__file__).resolve().parents[1] / "assets" / "sdf_loops" / "four_bar.sdf").read_text()
MJCF = """<mujoco model="four_bar">
  <option gravity="0 0 -9.8" integrator="Euler"/>
  <worldbody>
    <body name="crank" pos="0 0 1">
      <joint name="crank_joint" type="hinge" axis="0 1 0"/>
      <inertial pos="0.05 0 0" mass="0.2" diaginertia="1e-05 0.0002 0.0002"/>
      <body name="coupler" pos="0.1 0 0">
        <joint name="coupler_joint" type="hinge" axis="0 1 0"/>
        <inertial pos="0.1 0 0.1" mass="0.3" fullinertia="0.0005 0.001 0.0006 0 -0.0004 0"/>
      </body>
    </body>
    <body name="rocker" pos="0.3 0 1">
      <joint name="rocker_joint" type="hinge" axis="0 1 0"/>
      <inertial pos="0 0 0.1" mass="0.25" diaginertia="0.0008 0.0008 1e-05"/>
    </body>
  </worldbody>
  <equality>
    <connect name="pin" body1="rocker" body2="coupler" anchor="0 0 0.2" solref="0.002 1" solimp="0.9999 0.9999 0.001"/>
    <connect name="pin::axis" body1="rocker" body2="coupler" anchor="0 0.1 0.2" solref="0.002 1" solimp="0.9999 0.9999 0.001"/>
  </equality>
</mujoco>"""
DT, STEPS, STIFF = 0.001, 1000, 0.002


@jax.jit
def _rollout(model: js.Model, state: js.State, params: js.SimulationParams):
    """The joint positions ``(T, n)`` after each step and the closures' violations ``(T, r)``."""
    _, (states, _) = js.rollout(model, state, jnp.zeros((STEPS, model.dofs)), params=params)
    violations = jax.vmap(lambda s: loop_rows(model, kinematics(model, s)).violation)(states)
    return states.joint_positions, violations


def _ours(source: str, impedance_of: js.Model | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Our run of the model of ``source``; with ``impedance_of``, its closures take that model's
    ``solimp`` and inverse weights (SDF has neither: the loaders are compared on the rest)."""
    model = js.load_model(source)
    if impedance_of is not None:
        model = model.replace(loops=model.loops.replace(solimp=impedance_of.loops.solimp, inverse_weight=impedance_of.loops.inverse_weight))
    params = js.SimulationParams.build(
        model, dt=DT, integrator="semi_implicit_euler", gravity=jnp.array([0.0, 0.0, -9.8]), coupling_time_constant=STIFF
    )
    q, violations = _rollout(model, js.State.build(model), params)
    return np.asarray(q), np.asarray(violations)


@pytest.fixture(scope="module")
def runs() -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """Our runs of the SDF four-bar and of its MJCF twin."""
    return _ours(FOUR_BAR), _ours(MJCF, impedance_of=js.load_model(FOUR_BAR))


def test_the_sdf_four_bar_moves_as_its_mjcf_twin_to_rounding(runs, figures):
    (q, violations), (q_mjcf, violations_mjcf) = runs
    assert np.ptp(q[:, 0]) > 0.5
    difference = figures("SDF four-bar vs its MJCF twin, ours, 1 s [rad]", float(np.abs(q - q_mjcf).max()))
    assert difference < 1e-10
    np.testing.assert_allclose(np.abs(violations[:, :3]), np.abs(violations_mjcf[:, :3]), atol=1e-12)  # the pin's origin
    assert figures("SDF four-bar: max loop error over 1 s [m]", float(np.abs(violations).max())) < 1e-5


def test_the_sdf_four_bar_moves_as_mujocos_connect(runs, figures):
    (q, _), _ = runs
    m = mujoco.MjModel.from_xml_string(MJCF)
    m.opt.timestep = DT
    data = mujoco.MjData(m)
    reference = np.zeros((STEPS, m.nq))
    for k in range(STEPS):
        mujoco.mj_step(m, data)
        reference[k] = data.qpos
    rms = figures("SDF four-bar vs mj_step, joint RMS over 1 s [rad]", float(np.sqrt(np.mean((q - reference) ** 2))))
    assert rms < 1e-3


def test_a_fixed_joint_closing_the_four_bar_holds_it_still(figures):
    """The rocker's pivot lowered by 0.1 m, off the line of the crank's two hinges (there the weld's
    rows would be dependent: a dead point)."""
    source = (
        FOUR_BAR.replace('<joint name="pin" type="revolute">\n      <pose>0 0 0.2 0 0 0</pose>', '<joint name="pin" type="fixed">\n      <pose>0 0 0.3 0 0 0</pose>')
        .replace("<pose>0.3 0 1 0 0 0</pose>", "<pose>0.3 0 0.9 0 0 0</pose>")
    )
    q, violations = _ours(source)
    figures("four-bar welded by a fixed joint: max |q| over 1 s [rad]", float(np.abs(q).max()))
    assert np.abs(q).max() < 1e-9 and np.abs(violations).max() < 1e-9


def test_one_step_from_rest_equals_pinocchios_constrained_dynamics(figures):
    """Our step with the exact velocity constraint (``coupling_time_constant=0``), from rest under
    random torques, changes the velocities by ``dt`` times Pinocchio's ``constraintDynamics`` on the
    same linkage built joint by joint, closed by a ``CONTACT_3D`` at the pin's frame in the rocker
    and in the coupler (at rest the rows' path bias is zero, so the two agree to rounding; the
    hinge's two rotation rows are ones that no motion of the planar linkage moves)."""
    pin = pytest.importorskip("pinocchio")
    model = js.load_model(FOUR_BAR)
    reference = pin.Model()
    reference.gravity.linear = np.array([0.0, 0.0, -9.8])
    crank = reference.addJoint(0, pin.JointModelRY(), pin.SE3(np.eye(3), np.array([0.0, 0.0, 1.0])), "crank_joint")
    reference.appendBodyToJoint(crank, pin.Inertia(0.2, np.array([0.05, 0.0, 0.0]), np.diag([1e-5, 2e-4, 2e-4])), pin.SE3.Identity())
    coupler = reference.addJoint(crank, pin.JointModelRY(), pin.SE3(np.eye(3), np.array([0.1, 0.0, 0.0])), "coupler_joint")
    inertia = np.array([[5e-4, 0.0, -4e-4], [0.0, 1e-3, 0.0], [-4e-4, 0.0, 6e-4]])
    reference.appendBodyToJoint(coupler, pin.Inertia(0.3, np.array([0.1, 0.0, 0.1]), inertia), pin.SE3.Identity())
    rocker = reference.addJoint(0, pin.JointModelRY(), pin.SE3(np.eye(3), np.array([0.3, 0.0, 1.0])), "rocker_joint")
    reference.appendBodyToJoint(rocker, pin.Inertia(0.25, np.array([0.0, 0.0, 0.1]), np.diag([8e-4, 8e-4, 1e-5])), pin.SE3.Identity())
    closure = pin.RigidConstraintModel(
        pin.ContactType.CONTACT_3D, reference, rocker, pin.SE3(np.eye(3), np.array([0.0, 0.0, 0.2])),
        coupler, pin.SE3(np.eye(3), np.array([0.2, 0.0, 0.2])), pin.ReferenceFrame.LOCAL,
    )
    closures, closure_data = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
    closures.append(closure)
    closure_data.append(closure.createData())
    data = reference.createData()
    pin.initConstraintDynamics(reference, data, closures, closure_data)
    dt = 1e-4
    params = js.SimulationParams.build(
        model, dt=dt, integrator="semi_implicit_euler", gravity=jnp.array([0.0, 0.0, -9.8]), coupling_time_constant=0.0
    )
    state = js.State.build(model)
    step = jax.jit(lambda torques: js.step(model, state, joint_torques=torques, params=params)[0].joint_velocities)
    order = [model.joint_names.index(name) for name in ("crank_joint", "coupler_joint", "rocker_joint")]
    worst = 0.0
    for torques in np.random.default_rng(0).normal(scale=0.5, size=(4, 3)):
        ours = np.zeros(3)
        ours[order] = torques
        accelerations = np.asarray(step(jnp.asarray(ours)))[order] / dt
        expected = pin.constraintDynamics(reference, data, np.zeros(3), np.zeros(3), torques, closures, closure_data, pin.ProximalSettings(1e-14, 1e-12, 100))
        worst = max(worst, float(np.abs(accelerations - expected).max() / np.abs(expected).max()))
    assert figures("SDF four-bar, one step vs Pinocchio's constraintDynamics (relative)", worst) < 1e-9


HINGED = """<sdf version="1.9"><model name="hinged">
  <link name="ground"/>
  <link name="body">
    <inertial>
      <pose>0.1 0.02 -0.2 0 0 0</pose>
      <mass>1</mass>
      <inertia><ixx>0.02</ixx><iyy>0.03</iyy><izz>0.015</izz><ixy>0.001</ixy><ixz>0.002</ixz><iyz>-0.001</iyz></inertia>
    </inertial>
  </link>
  <joint name="weld" type="fixed"><parent>world</parent><child>ground</child></joint>
  <joint name="swing" type="{tree}"><parent>ground</parent><child>body</child><axis><xyz>0 1 0</xyz></axis></joint>
  {closing}
</model></sdf>"""


def test_a_revolute_joint_closing_a_loop_holds_as_a_hinge(figures):
    """A body on a ball joint whose loop is closed by a revolute joint about y at the ball's centre
    swings as the same body on a revolute joint (its centre of mass and products of inertia off the
    plane: a ball alone, or a single connect, would let it leave it)."""
    closing = '<joint name="hinge" type="revolute"><parent>ground</parent><child>body</child><axis><xyz>0 1 0</xyz></axis></joint>'
    poses = []
    for tree, extra in (("ball", closing), ("revolute", "")):
        model = js.load_model(HINGED.format(tree=tree, closing=extra))
        params = js.SimulationParams.build(model, dt=DT, integrator="semi_implicit_euler", coupling_time_constant=STIFF)
        body = model.link_names.index("body")

        @jax.jit
        def run(state, model=model, params=params, body=body):
            _, (states, _) = js.rollout(model, state, jnp.zeros((STEPS, model.dofs)), params=params)
            return jax.vmap(lambda s: kinematics(model, s).G_H_L[body])(states)  # both welded to the world at one place

        poses.append(np.asarray(run(js.State.build(model))))
    hinged, revolute = poses
    assert np.abs(revolute[:, :3, :3] - np.eye(3)).max() > 0.5
    assert figures("ball closed by a revolute joint vs a revolute joint, max pose difference over 1 s", float(np.abs(hinged - revolute).max())) < 1e-9
