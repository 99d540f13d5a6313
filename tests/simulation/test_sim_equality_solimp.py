"""MJCF joint and tendon equalities with MuJoCo's ``solimp`` (issue 30): the row's impedance at
its violation and its compliance ``R = (1 - d) / d (w_a + w_b)``, ``w`` the ``dof_invweight0``
of its joints or the ``tendon_invweight0`` of its tendons.

- At violations across the ``solimp`` width, the row's impedance and resistance are MuJoCo's
  ``efc_KBIP[:, 2]`` and ``efc_R``.
- From a violated start, the coupling's distance ``q_a - c1 q_b - c0`` moves as ``mj_step``'s
  (1 ms, 1 s) with ``solimp="0.5 0.9 0.01"`` and with MuJoCo's default, closer than with an
  impedance of one (the coupling as it was before the ``solimp`` was read).
- Gradients through the coupled rollout, with respect to ``solimp``'s ``d0`` and the
  coupling's multiplier, equal central differences.
- A tendon equality between two fixed tendons of three hinges: its impedance and resistance
  are MuJoCo's, and it moves as ``mj_step``'s, closer than at an impedance of one.

Two hinged rods, ``q_2 = 0.1 + 0.5 q_1``; the two files share each compiled function (the
rollout compiles twice: with the soft coupling and held at an impedance of one).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like.dynamics.kinematics import kinematics
from jaxsim_like.simulation.couplings import equality_rows
from jaxsim_like.simulation.tendons import tendon_rows

mujoco = pytest.importorskip("mujoco", reason="MJCF needs the mjcf extra (in the test extra)")

C0, C1 = 0.1, 0.5
RODS = """<mujoco model="rods">
  <option timestep="0.001"/>
  <worldbody>
    <body name="upper" pos="0 0 1">
      <joint name="first" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02" mass="1" contype="0" conaffinity="0"/>
      <body name="lower" pos="0.2 0 0">
        <joint name="second" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02" mass="0.5" contype="0" conaffinity="0"/>
      </body>
    </body>
  </worldbody>
  <equality>
    <joint joint1="second" joint2="first" polycoef="{c0} {c1} 0 0 0" {solimp}/>
  </equality>
</mujoco>"""
SOLIMPS = {"soft": 'solimp="0.5 0.9 0.01"', "default": ""}
Q0 = np.array([0.3, 0.05])  # the distance 0.05 - 0.5 * 0.3 - 0.1 = -0.2 rad
STEPS, DT = 1000, 0.001
Q_TENDONS = np.array([0.3, 0.05, 0.0])  # the tendon equality 0.225 off


def _xml(name: str) -> str:
    return RODS.format(c0=C0, c1=C1, solimp=SOLIMPS[name])


def _distance(q: np.ndarray) -> np.ndarray:
    return q[..., 1] - C1 * q[..., 0] - C0


@jax.jit
def _rows(model: js.Model, params: js.SimulationParams, state: js.State) -> tuple[jax.Array, jax.Array]:
    rows = equality_rows(model, params.model, state, kinematics(model, state))
    return rows.impedance, rows.resistance


@jax.jit
def _positions(model: js.Model, state: js.State, params: js.SimulationParams) -> jax.Array:
    return js.rollout(model, state, jnp.zeros((STEPS, model.dofs)), params=params)[1][0].joint_positions


@pytest.mark.parametrize("name", list(SOLIMPS))
def test_impedance_and_resistance_are_mujocos(name):
    """Distances inside and beyond the width (0.01 rad soft, 0.001 rad default)."""
    model = js.load_model(_xml(name))
    assert model.couplings.soft == (True,)
    m = mujoco.MjModel.from_xml_string(_xml(name))
    data = mujoco.MjData(m)
    params = js.SimulationParams.build(model)
    ours, theirs = [], []
    for first, second in ((0.3, 0.05), (0.3, 0.2535), (0.3, 0.2493), (-0.4, -0.1004)):
        q = np.array([first, second])
        data.qpos[:] = m.qpos0 + q
        mujoco.mj_forward(m, data)
        assert data.ne == 1
        d, resistance = _rows(model, params, js.State.build(model).replace(joint_positions=jnp.asarray(q)))
        ours.append([float(d[0]), float(resistance[0])])
        theirs.append([data.efc_KBIP[0, 2], data.efc_R[0]])
    np.testing.assert_allclose(ours, theirs, rtol=1e-12)
    assert len({round(d, 6) for d, _ in ours}) >= 2  # inside the sigmoid and at its end


@pytest.mark.parametrize("name", list(SOLIMPS))
def test_the_distance_moves_as_mujocos(name, figures):
    """Measured (RMS of the distance's difference to MuJoCo's over 1 s): soft 1.1e-3 rad (8.3e-3
    at an impedance of one), default 8.8e-4 rad (3.8e-3); the distance left by gravity's load
    after 1 s, soft -8.18e-3 rad (MuJoCo -7.97e-3), default -3.71e-3 (-3.33e-3), where an
    impedance of one holds it at zero. The rest of the difference is the decay from -0.2 rad in
    the first steps: our implicit oscillator against MuJoCo's explicit reference."""
    model = js.load_model(_xml(name))
    m = mujoco.MjModel.from_xml_string(_xml(name))
    data = mujoco.MjData(m)
    data.qpos[:] = m.qpos0 + Q0
    reference = np.zeros((STEPS, 2))
    for k in range(STEPS):
        mujoco.mj_step(m, data)
        reference[k] = data.qpos - m.qpos0
    params = js.SimulationParams.build(model, dt=DT, integrator="semi_implicit_euler")
    state = js.State.build(model).replace(joint_positions=jnp.asarray(Q0))
    stiff = model.replace(couplings=model.couplings.replace(soft=(False,)))
    after, before = (_distance(np.asarray(_positions(mdl, state, params))) for mdl in (model, stiff))
    expected = _distance(reference)
    rms = figures(f"joint equality solimp {name}: distance RMS vs mj_step [rad]", float(np.sqrt(np.mean((after - expected) ** 2))))
    rms_before = figures(f"joint equality solimp {name}: the same at an impedance of one [rad]", float(np.sqrt(np.mean((before - expected) ** 2))))
    figures(f"joint equality solimp {name}: distance after 1 s [rad]", float(after[-1]))
    assert rms < 2e-3 and rms < rms_before / 3
    assert abs(after[-1] - expected[-1]) < 0.15 * abs(expected[-1]) and abs(before[-1]) < 1e-9


def test_gradients_through_the_soft_coupling_equal_central_differences():
    """The distance after 200 steps from the violated start, with respect to ``solimp``'s
    ``d0`` and the multiplier (both traced)."""
    model = js.load_model(_xml("soft"))
    params = js.SimulationParams.build(model, dt=DT, integrator="semi_implicit_euler")
    state = js.State.build(model).replace(joint_positions=jnp.asarray(Q0))

    @jax.jit
    def distance(d0, multiplier):
        couplings = model.couplings.replace(solimp=model.couplings.solimp.at[0, 0].set(d0), multiplier=jnp.reshape(multiplier, (1,)))
        final, _ = js.rollout(model.replace(couplings=couplings), state, jnp.zeros((200, 2)), params=params)
        q = final.joint_positions
        return q[1] - C1 * q[0] - C0

    point = (jnp.asarray(0.5), jnp.asarray(C1))
    gradients = jax.jit(jax.grad(distance, argnums=(0, 1)))(*point)
    h = 1e-6
    for k, gradient in enumerate(gradients):
        step = [jnp.zeros(()), jnp.zeros(())]
        step[k] = jnp.asarray(h)
        central = (distance(*(p + s for p, s in zip(point, step))) - distance(*(p - s for p, s in zip(point, step)))) / (2 * h)
        assert abs(float(gradient)) > 1e-4
        np.testing.assert_allclose(float(gradient), float(central), rtol=1e-6)


TENDONS = """<mujoco model="tendon_rods">
  <option timestep="0.001"/>
  <worldbody>
    <body pos="0 0 1">
      <joint name="first" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02" mass="1" contype="0" conaffinity="0"/>
      <body pos="0.2 0 0">
        <joint name="second" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02" mass="0.5" contype="0" conaffinity="0"/>
        <body pos="0.2 0 0">
          <joint name="third" type="hinge" axis="0 1 0"/>
          <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02" mass="0.5" contype="0" conaffinity="0"/>
        </body>
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="a"><joint joint="first" coef="1"/><joint joint="second" coef="0.5"/></fixed>
    <fixed name="b"><joint joint="third" coef="2"/></fixed>
  </tendon>
  <equality><tendon tendon1="a" tendon2="b" polycoef="0.1 0.5 0 0 0" solimp="0.5 0.9 0.01"/></equality>
</mujoco>"""


def test_a_tendon_equality_has_mujocos_impedance_and_moves_as_mj_step(figures):
    """At violations inside and beyond the width, the row's impedance and compliance are
    MuJoCo's; from a start 0.225 off, 1 s at 1 ms, the joints are from
    ``mj_step``'s 5.1e-3 rad RMS (5.0e-2 at an impedance of one)."""
    model = js.load_model(TENDONS)
    assert model.tendons.equality_soft == (True,)
    m = mujoco.MjModel.from_xml_string(TENDONS)
    data = mujoco.MjData(m)
    params = js.SimulationParams.build(model, dt=DT, integrator="semi_implicit_euler")
    rows = jax.jit(lambda state: tendon_rows(model, state, kinematics(model, state), params.model.friction_velocity, params.world.dt, False))
    for q in ((0.3, 0.05, 0.2), (0.3, 0.05, 0.2215), (0.3, 0.05, 0.2293)):  # 0.025, 0.0035, -0.0043 off
        data.qpos[:] = q
        mujoco.mj_forward(m, data)
        equality = rows(js.State.build(model).replace(joint_positions=jnp.asarray(q)))
        np.testing.assert_allclose(equality.compliance / DT, data.efc_R[:1], rtol=1e-12)
    data.qpos[:] = Q_TENDONS
    reference = np.zeros((STEPS, 3))
    for k in range(STEPS):
        mujoco.mj_step(m, data)
        reference[k] = data.qpos
    state = js.State.build(model).replace(joint_positions=jnp.asarray(Q_TENDONS))
    stiff = model.replace(tendons=model.tendons.replace(equality_soft=(False,)))
    after, before = (np.asarray(_positions(mdl, state, params)) for mdl in (model, stiff))
    rms = figures("tendon equality solimp: joints RMS vs mj_step [rad]", float(np.sqrt(np.mean((after - reference) ** 2))))
    rms_before = figures("tendon equality solimp: the same at an impedance of one [rad]", float(np.sqrt(np.mean((before - reference) ** 2))))
    assert rms < 1e-2 and rms < rms_before / 5
