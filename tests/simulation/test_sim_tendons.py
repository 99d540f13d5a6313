"""MJCF fixed tendons in the step (issues 30 and 31): two hinges coupled by a tendon with a limit,
a spring (with MuJoCo's dead band), a damper and a motor on the tendon move as MuJoCo moves them
on the same file (mj_step, its Euler, dt 1 ms, 2 s); a tendon equality holds as MuJoCo's; the passive row
equals the dense solve it stands for; gradients through the tendon-coupled joints agree with
central differences; dm_control's stacker, whose fingers a tendon equality couples, falls as in
MuJoCo, and its point_mass, driven by motors on tendons, moves as MuJoCo's to rounding.

The hinges turn about the vertical (gravity does no work), the motor pushes the tendon against
its upper limit and back at 2 rad/s. One compilation per program for the module.
"""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like import tasks
from jaxsim_like.parsers import parse_mjcf
from jaxsim_like.simulation import constraint_rows

mujoco = pytest.importorskip("mujoco", reason="MJCF needs the mjcf extra (in the test extra)")

TENDON = 'limited="true" range="-0.3 0.2" stiffness="2" springlength="0.05 0.1" damping="0.05"'
XML = f"""<mujoco model="tendon">
  <option timestep="0.001"/>
  <worldbody>
    <body name="upper"><joint name="j1" type="hinge" axis="0 0 1" damping="0.02"/>
      <geom type="capsule" size="0.03" fromto="0 0 0 0.4 0 0" mass="1" contype="0" conaffinity="0"/>
      <body name="lower" pos="0.4 0 0"><joint name="j2" type="hinge" axis="0 0 1" damping="0.02"/>
        <geom type="capsule" size="0.03" fromto="0 0 0 0.3 0 0" mass="0.5" contype="0" conaffinity="0"/>
      </body>
    </body>
  </worldbody>
  <tendon><fixed name="t" {TENDON}><joint joint="j1" coef="1"/><joint joint="j2" coef="-0.5"/></fixed></tendon>
  <equality>{{equality}}</equality>
  <actuator><motor name="m" tendon="t" gear="2"/></actuator>
</mujoco>"""
STEPS, DT, UPPER = 2000, 0.001, 0.2


def control(t: np.ndarray) -> np.ndarray:
    return 0.2 * np.sin(2.0 * t)


@pytest.fixture(scope="module")
def scene():
    """The model, MuJoCo's joint positions after each step ``(T, 2)`` and the torques ``(T, 2)``
    of the motor's controls through the action map of the file's actuators."""
    xml = XML.format(equality="")
    description = parse_mjcf(xml)
    model = js.dynamics.build_model(description)
    mapping = tasks.ActionMap.of_actuators(model, description.actuators)
    m = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(m)
    reference = np.zeros((STEPS, 2))
    for k in range(STEPS):
        data.ctrl[0] = control(data.time)
        mujoco.mj_step(m, data)
        reference[k] = data.qpos
    controls = control(DT * np.arange(STEPS))
    torques = np.stack([np.asarray(mapping.inputs(jnp.asarray([u])).joint_torques) for u in controls])
    return model, reference, torques


def test_the_tendon_is_read_as_mujoco_compiles_it(scene):
    model, _, _ = scene
    tendons = model.tendons
    assert tendons.names == ("t",) and tendons.passive == (0,) and tendons.limited == (0,)
    np.testing.assert_array_equal(tendons.coefficients, [[1.0, -0.5]])
    np.testing.assert_array_equal([tendons.spring_lower[0], tendons.spring_upper[0], tendons.range_upper[0]], [0.05, 0.1, UPPER])
    np.testing.assert_array_equal([tendons.stiffness[0], tendons.damping[0], tendons.limit_time_constant[0]], [2.0, 0.05, 0.02])


def test_two_hinges_coupled_by_a_tendon_move_as_in_mujoco(scene, sim, figures):
    """Measured: 3.1e-4 rad max over 2 s (0.5 of them at the limit; 6.6e-4 while the limit's
    reference was an implicit oscillator, before MuJoCo's reference acceleration)."""
    model, reference, torques = scene
    params = js.SimulationParams.build(model, dt=DT, gravity=(0.0, 0.0, -9.81))
    _, states, outputs = sim(model, js.State.build(model), params, steps=STEPS, torques=torques)
    q = np.asarray(states.joint_positions)
    C = np.asarray(model.tendons.coefficients)[0]
    assert (reference @ C).max() > UPPER and np.mean(reference @ C > UPPER - 1e-3) > 0.3  # at the limit half the time
    error = figures("MJCF tendon: max |q - q_MuJoCo| over 2 s [rad]", float(np.abs(q - reference).max()))
    assert error < 1e-3
    assert (q @ C).max() < UPPER + 0.01 and bool(np.all(outputs.finite))


def test_a_tendon_equality_holds_as_mujocos(sim, figures):
    """``L - L_0 = 0.05`` with joint torques driving the joints apart, from a state 0.05 m off:
    the rule gives under the load as MuJoCo's (its default ``solimp``). Measured over the last
    0.1 s of 0.5 s: the rule off by 9.3e-4 m at most here, MuJoCo's by 8.6e-4 m; the lengths
    within 4.0e-4 m of MuJoCo's (an impedance of one held the rule within 5e-6 m)."""
    xml = XML.format(equality='<tendon tendon1="t" polycoef="0.05 0 0 0 0"/>').replace(TENDON, "")
    model = js.load_model(xml)
    assert model.tendons.equality_names == ("#0",) and model.tendons.passive == ()
    params = js.SimulationParams.build(model, dt=DT, integrator="semi_implicit_euler")
    torques = np.array([0.3, 0.5])
    _, states, _ = sim(model, js.State.build(model), params, steps=500, torques=torques)
    L = np.asarray(states.joint_positions) @ np.asarray(model.tendons.coefficients)[0]
    m = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(m)
    reference = np.zeros(500)
    for k in range(500):
        data.qfrc_applied[:] = torques
        mujoco.mj_step(m, data)
        reference[k] = data.ten_length[0]
    off = figures("tendon equality: max |L - L_0 - 0.05| over the last 0.1 s [m]", float(np.abs(L[-100:] - 0.05).max()))
    mujoco_off = figures("tendon equality: MuJoCo's [m]", float(np.abs(reference[-100:] - 0.05).max()))
    distance = figures("tendon equality: max |L - L_MuJoCo| [m]", float(np.abs(L - reference).max()))
    assert np.ptp(np.asarray(states.joint_positions)[:, 0]) > 0.05
    assert off < 2e-3 and abs(off - mujoco_off) < 0.2 * mujoco_off and distance < 1e-3


def test_a_soft_row_is_the_dense_solve_of_its_rank_one_term():
    """The passive row's force ``lambda = f - s w+`` makes ``a = a_free + M^-1 C^T lambda`` the
    solution of ``(M + h s C^T C) a = tau + C^T (f - s w)``, checked on a random 3x3 system."""
    rng = np.random.default_rng(0)
    B = rng.normal(size=(3, 3))
    M, C, tau, nu = B @ B.T + np.eye(3), rng.normal(size=(1, 3)), rng.normal(size=3), rng.normal(size=3)
    h, f, s = 0.01, np.array([0.7]), np.array([3.0])
    a_free = np.linalg.solve(M, tau)
    rows = constraint_rows.Rows(jnp.asarray(C), jnp.asarray(f), jnp.asarray(s), jnp.ones(1, bool), np.ones(1, bool), np.zeros(1, bool))
    A = C @ np.linalg.solve(M, C.T)
    lam = np.asarray(constraint_rows.row_forces(rows, jnp.asarray(A), jnp.asarray(C @ (nu + h * a_free)), jnp.asarray(h)))
    dense = np.linalg.solve(M + h * s[0] * C.T @ C, tau + C.T @ (f - s * (C @ nu)))
    np.testing.assert_allclose(a_free + np.linalg.solve(M, C.T @ lam), dense, rtol=1e-12)


def test_gradients_through_tendon_coupled_joints_match_central_differences(scene):
    """d(final joint positions)/d(tendon stiffness, damping, upper limit) over 0.2 s in which
    the tendon reaches its limit, against central differences (float64)."""
    model, _, torques = scene
    params = js.SimulationParams.build(model, dt=DT)
    start = js.State.build(model).replace(joint_velocities=jnp.array([1.5, -1.0]))

    def final(theta: jax.Array) -> jax.Array:
        tendons = model.tendons.replace(stiffness=theta[:1], damping=theta[1:2], range_upper=theta[2:])
        end, _ = js.rollout(model.replace(tendons=tendons), start, jnp.asarray(torques[:200]), params=params)
        return end.joint_positions

    theta = jnp.array([2.0, 0.05, 0.2])
    eps = 1e-6
    # One forward-mode program: the derivatives along each input at theta (rows 0-2), the values
    # at the shifted points (rows 3-8, zero tangents).
    points = jnp.concatenate([jnp.broadcast_to(theta, (3, 3)), theta + eps * jnp.eye(3), theta - eps * jnp.eye(3)])
    tangents = jnp.concatenate([jnp.eye(3), jnp.zeros((6, 3))])
    values, derivatives = jax.jit(jax.vmap(lambda x, t: jax.jvp(final, (x,), (t,))))(points, tangents)
    central = (values[3:6] - values[6:]) / (2 * eps)
    L = np.asarray(values[0]) @ np.asarray(model.tendons.coefficients)[0]
    assert abs(L - 0.2) < 0.01  # ends at the limit
    assert np.all(np.isfinite(derivatives[:3]))
    np.testing.assert_allclose(np.asarray(derivatives[:3]), np.asarray(central), rtol=1e-5, atol=1e-8)


_DM_CONTROL = importlib.util.find_spec("dm_control")  # its files only
STACKER = Path(_DM_CONTROL.submodule_search_locations[0], "suite", "stacker.xml") if _DM_CONTROL else None


@pytest.mark.skipif(STACKER is None, reason="dm_control's files come with the dm_control package (test extra)")
def test_dm_controls_stacker_falls_as_in_mujoco(sim, figures):
    """dm_control's stacker (20 joints; its fingers coupled by the equality on the tendon
    ``coupling``) from ``qpos0`` under gravity for 0.2 s at its 1 ms: the joints as MuJoCo's
    (5.4e-12 rad max, 1.5e-9 at an impedance of one: nothing touches, its finger springs stay at
    rest) and the rule exact."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", js.ModelLoadWarning)  # the fingertips' springs
        model = js.load_model(STACKER)
    assert model.tendons.equality_names == ("coupling",)
    m = mujoco.MjModel.from_xml_path(str(STACKER))
    data = mujoco.MjData(m)
    for _ in range(200):
        mujoco.mj_step(m, data)
    address = [m.jnt_qposadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, name)] for name in model.joint_names]
    reference = data.qpos[address] - m.qpos0[address]
    params = js.SimulationParams.build(model, dt=0.001, gravity=m.opt.gravity.copy())
    final, _, _ = sim(model, js.State.build(model), params, steps=200)
    q = np.asarray(final.joint_positions)
    distance = figures("dm_control stacker: max |q - q_MuJoCo| after 0.2 s [rad]", float(np.abs(q - reference).max()))
    assert np.abs(reference).max() > 0.1 and distance < 1e-6
    rule = np.asarray(model.tendons.equality_rows) @ q - np.asarray(model.tendons.equality_offset)
    assert np.abs(rule).max() < 1e-9


def test_reduce_folds_locked_joints_into_the_tendon(scene):
    """Locking ``j1`` at 0.1 rad: the tendon ``L = 0.1 - 0.5 q2`` keeps its parameters; a model
    without ``j2`` has no tendon left."""
    model, _, _ = scene
    reduced = js.dynamics.reduce(model, ["j2"], {"j1": 0.1})
    tendons = reduced.tendons
    assert tendons.names == ("t",) and tendons.passive == (0,) and tendons.limited == (0,)
    np.testing.assert_allclose(tendons.coefficients, [[-0.5]], rtol=0)
    np.testing.assert_allclose([tendons.length0[0], tendons.range_upper[0], tendons.stiffness[0]], [0.1, UPPER, 2.0], rtol=1e-15)
    assert js.dynamics.reduce(model, ["j1"]).tendons.count == 1
    assert js.dynamics.reduce(reduced, [], {}).tendons.count == 0


@pytest.mark.skipif(STACKER is None, reason="dm_control's files come with the dm_control package (test extra)")
def test_dm_controls_point_mass_moves_as_in_mujoco_under_its_tendon_motors(sim):
    """dm_control's point_mass: its two slides driven only through motors on the fixed tendons
    ``t1``, ``t2`` (gear 0.1), 1 s at its 20 ms under a constant action: the same joint
    positions as MuJoCo's Euler (which takes the joints' damping implicitly, as here), to
    rounding."""
    path = STACKER.with_name("point_mass.xml")
    description = parse_mjcf(path)
    model = js.dynamics.build_model(description)
    mapping = tasks.ActionMap.of_actuators(model, description.actuators)
    action = np.array([0.5, -0.3])
    m = mujoco.MjModel.from_xml_path(str(path))
    data = mujoco.MjData(m)
    data.ctrl[:] = action
    for _ in range(50):
        mujoco.mj_step(m, data)
    params = js.SimulationParams.build(model, dt=m.opt.timestep, gravity=m.opt.gravity.copy())
    final, _, _ = sim(model, js.State.build(model), params, steps=50, torques=mapping.inputs(action).joint_torques)
    reference = data.qpos - m.qpos0
    assert np.abs(reference).min() > 0.01
    np.testing.assert_allclose(np.asarray(final.joint_positions), reference, rtol=0, atol=1e-12)
