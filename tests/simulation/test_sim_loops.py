"""Loop closures (issue 30): MJCF ``connect`` and ``weld`` equalities enforced in the step.

- The violation and rows of connects and welds (bodies, sites, ``relpose``, ``torquescale``,
  the world) equal MuJoCo's ``efc_pos`` and ``efc_J`` at a random state.
- Their impedance (``solimp`` at the norm of a closure's violation) and compliance are MuJoCo's.
- A four-bar linkage and a slider-crank closed by a connect move as MuJoCo's on the same file
  (semi-implicit Euler here, MuJoCo's Euler, dt 1 ms, 2 s; MuJoCo's connect made stiff with
  ``solref="0.002 1"`` and a solimp of nearly one, which our step reads as MuJoCo does),
  keep their loop closed and their energy; with a soft ``solimp`` a connect and a weld open as
  far as MuJoCo's.
- A floating base hanging from the world by a weld at the tip of its arm, and a spinning
  floating base whose arm is welded to it (the base columns of the rows), move as MuJoCo's.
- Gradients through the four-bar, stiff and soft, equal central differences.

Each run compiles once for the module; MuJoCo steps the same files.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like.dynamics.kinematics import kinematics
from jaxsim_like.dynamics.loops import loop_rows
from jaxsim_like.simulation.couplings import loop_impedance

mujoco = pytest.importorskip("mujoco", reason="MJCF needs the mjcf extra (in the test extra)")

STIFF = 'solref="0.002 1" solimp="0.9999 0.9999 0.001"'
BAR = 'contype="0" conaffinity="0"'
FOUR_BAR = f"""<mujoco model="four_bar">
  <worldbody>
    <body name="crank" pos="0 0 1">
      <joint name="crank" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.1 0 0" size="0.01" mass="0.2" {BAR}/>
      <body name="coupler" pos="0.1 0 0">
        <joint name="coupler" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.2 0 0.2" size="0.01" mass="0.3" {BAR}/>
      </body>
    </body>
    <body name="rocker" pos="0.3 0 1">
      <joint name="rocker" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 0.2" size="0.01" mass="0.25" {BAR}/>
    </body>
  </worldbody>
  <equality>
    <connect name="loop" body1="coupler" body2="rocker" anchor="0.2 0 0.2" {STIFF}/>
  </equality>
</mujoco>"""
SLIDER_CRANK = f"""<mujoco model="slider_crank">
  <worldbody>
    <body name="crank" pos="0 0 1">
      <joint name="crank" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.0866 0 -0.05" size="0.01" mass="0.4" {BAR}/>
      <body name="rod" pos="0.0866 0 -0.05">
        <joint name="rod" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.295804 0 0.05" size="0.01" mass="0.2" {BAR}/>
      </body>
    </body>
    <body name="slider" pos="0.382404 0 1">
      <joint name="slider" type="slide" axis="1 0 0"/>
      <geom type="box" size="0.03 0.02 0.02" mass="0.5" {BAR}/>
    </body>
  </worldbody>
  <equality>
    <connect name="pin" body1="rod" body2="slider" anchor="0.295804 0 0.05" {STIFF}/>
  </equality>
</mujoco>"""
ROWS = f"""<mujoco model="rows">
  <worldbody>
    <body name="a" pos="0 0 1">
      <joint name="j1" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.02" mass="0.5" {BAR}/>
      <site name="sa" pos="0.1 0.02 0" quat="0.9 0.1 0.3 0.2"/>
      <body name="b" pos="0.2 0 0">
        <joint name="j2" type="hinge" axis="1 0 1"/>
        <geom type="capsule" fromto="0 0 0 0.2 0.05 0" size="0.02" mass="0.4" {BAR}/>
        <body name="c" pos="0.2 0 0">
          <joint name="j3" type="slide" axis="0 0.6 0.8"/>
          <geom type="box" size="0.03 0.02 0.01" mass="0.3" {BAR}/>
          <site name="sc" pos="0.05 0 0.01" quat="0.7 -0.2 0.1 0.4"/>
        </body>
      </body>
    </body>
    <body name="d" pos="0.3 0.1 0.8">
      <joint name="j4" type="hinge" axis="1 0 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 0.2" size="0.02" mass="0.2" {BAR}/>
    </body>
  </worldbody>
  <equality>
    <connect body1="c" body2="d" anchor="0.05 0 0" solimp="0.5 0.9 1 0.4 3"/>
    <weld body1="b" body2="d" relpose="0.1 0.2 0 0.8 0.2 0.1 0.3" torquescale="0.5" solimp="0.3 0.8 0.5 0.6 1"/>
    <weld site1="sa" site2="sc"/>
    <weld body1="c" anchor="0.1 0 0" torquescale="2"/>
    <connect site1="sc" site2="sa"/>
  </equality>
</mujoco>"""
ARMED = """<mujoco model="armed">
  <option gravity="{gravity}"/>
  <worldbody>
    <body name="torso" pos="0 0 1">
      <freejoint/>
      <geom type="box" size="0.1 0.06 0.04" mass="2" {bar}/>
      <body name="upper" pos="0.1 0 0">
        <joint name="shoulder" type="hinge" axis="0 1 0"/>
        <geom type="capsule" fromto="0 0 0 0.2 0 0.1" size="0.02" mass="0.5" {bar}/>
        <body name="lower" pos="0.2 0 0.1">
          <joint name="elbow" type="hinge" axis="1 0 0.3"/>
          <geom type="capsule" fromto="0 0 0 0.05 0.15 0" size="0.02" mass="0.3" {bar}/>
        </body>
      </body>
    </body>
  </worldbody>
  <equality>
    <weld name="hold" body1="lower" {body2} {stiff}/>
  </equality>
</mujoco>"""
HANGING = ARMED.format(gravity="0 0 -9.81", body2="", bar=BAR, stiff=STIFF)
SPINNING = ARMED.format(gravity="0 0 0", body2='body2="torso"', bar=BAR, stiff=STIFF)
DT = 0.001


@jax.jit
def _rollout(model: js.Model, state: js.State, params: js.SimulationParams, torques: jax.Array):
    """The states after each step, and at them the closures' violations ``(T, r)``, the
    mechanical and the kinetic energy ``(T,)`` [J]."""
    _, (states, _) = js.rollout(model, state, torques, params=params)

    def measure(s):
        energy = js.dynamics.mechanical_energy(model, s, gravity=params.gravity)
        return loop_rows(model, kinematics(model, s)).violation, energy, js.dynamics.kinetic_energy(model, s)

    return states, jax.vmap(measure)(states)


def _ours(xml: str, steps: int, state: js.State | None = None, mujoco_reference: bool = False) -> tuple[js.Model, js.State, tuple[np.ndarray, ...]]:
    """Our run of ``steps`` steps of ``xml`` from ``state`` (default: at rest at ``qpos0``), its
    states and the measures of :func:`_rollout`; ``mujoco_reference``: the closures held on
    MuJoCo's reference (:attr:`.LoopClosures.mujoco_reference`)."""
    model = js.load_model(xml)
    model = model.replace(loops=model.loops.replace(mujoco_reference=mujoco_reference))
    params = js.SimulationParams.build(model, dt=DT, integrator="semi_implicit_euler", gravity=js.load_world(xml).gravity)
    state = js.State.build(model) if state is None else state
    states, measures = _rollout(model, state, params, jnp.zeros((steps, model.dofs)))
    return model, states, tuple(np.asarray(m) for m in measures)


def _mujoco(xml: str, steps: int, qvel: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """MuJoCo's ``qpos - qpos0 (T, nq)`` and mechanical energy ``(T,)`` [J] after each step
    (Euler, dt 1 ms)."""
    m = mujoco.MjModel.from_xml_string(xml)
    m.opt.timestep = DT
    m.opt.enableflags |= int(mujoco.mjtEnableBit.mjENBL_ENERGY)
    data = mujoco.MjData(m)
    if qvel is not None:
        data.qvel[:] = qvel
    qpos, energy = np.zeros((steps, m.nq)), np.zeros(steps)
    for k in range(steps):
        mujoco.mj_step(m, data)
        qpos[k] = data.qpos - m.qpos0
        energy[k] = data.energy.sum()
    return qpos, energy


def _rms(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.sqrt(np.mean((a - b) ** 2)))


@pytest.fixture(scope="module", params=["four_bar", "slider_crank"])
def mechanism(request) -> tuple[str, js.Model, js.State, np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """2 s from rest here and in MuJoCo: the states, our loop violations and MuJoCo's ``q`` and
    energy."""
    xml = FOUR_BAR if request.param == "four_bar" else SLIDER_CRANK
    model, states, measures = _ours(xml, 2000)
    return request.param, model, states, measures, _mujoco(xml, 2000)


def test_rows_and_violations_equal_mujocos():
    """Connects and welds between bodies and sites, with a relpose, torque scales, the world and
    ``solimp``s: at a random state, our violation, rows ``G (r, n)``, impedances and resistances
    are MuJoCo's ``efc_pos``, ``efc_J``, ``efc_KBIP[:, 2]`` and ``efc_R``."""
    model = js.load_model(ROWS)
    assert model.loops.kind == ("connect", "weld", "weld", "weld", "connect") and model.loops.rows == 24
    m = mujoco.MjModel.from_xml_string(ROWS)
    data = mujoco.MjData(m)
    q = np.random.default_rng(3).uniform(-0.8, 0.8, m.nq)
    data.qpos[:] = m.qpos0 + q
    mujoco.mj_forward(m, data)
    state = js.State.build(model).replace(joint_positions=jnp.asarray(q))

    @jax.jit
    def violation_and_rows(state):
        def rows_at(velocities):
            return loop_rows(model, kinematics(model, state.replace(joint_velocities=velocities)))

        violation = rows_at(jnp.zeros(model.dofs)).violation
        d, _, resistance = loop_impedance(model.loops, violation)
        return violation, jax.vmap(lambda v: rows_at(v).rate)(jnp.eye(model.dofs)).T, d, resistance

    violation, G, d, resistance = (np.asarray(x) for x in violation_and_rows(state))
    assert data.ne == 24
    np.testing.assert_allclose(violation, data.efc_pos[:24], rtol=0, atol=1e-12)
    np.testing.assert_allclose(G, data.efc_J.reshape(-1, m.nv)[:24], rtol=0, atol=1e-12)
    np.testing.assert_allclose(d, data.efc_KBIP.reshape(-1, 4)[:24, 2], rtol=1e-12)
    np.testing.assert_allclose(resistance, data.efc_R[:24], rtol=1e-12)
    assert 0.5 < d[0] < 0.9 and 0.3 < d[3] < 0.8  # inside their sigmoids


def test_path_bias_is_the_violations_second_derivative():
    """``path_bias`` is ``d^2 phi / dt^2`` at constant joint velocities (central differences)."""
    model = js.load_model(ROWS)
    rng = np.random.default_rng(4)
    q, v = jnp.asarray(rng.uniform(-0.8, 0.8, model.dofs)), jnp.asarray(rng.uniform(-2, 2, model.dofs))
    state = js.State.build(model).replace(joint_positions=q, joint_velocities=v)

    @jax.jit
    def phi(t):
        return loop_rows(model, kinematics(model, state.replace(joint_positions=q + t * v))).violation

    rows = jax.jit(lambda s: loop_rows(model, kinematics(model, s)))(state)
    h = 1e-4
    np.testing.assert_allclose(rows.rate, (phi(h) - phi(-h)) / (2 * h), rtol=0, atol=1e-8)
    np.testing.assert_allclose(rows.path_bias, (phi(h) - 2 * phi(0.0) + phi(-h)) / h**2, rtol=0, atol=2e-6)


def test_closed_mechanisms_move_as_in_mujoco(mechanism, figures):
    """Measured: four-bar 3.2e-4 rad RMS over its joints (a 3.6 rad swing of the crank),
    slider-crank 6.2e-5 rad (2.1 rad); the difference is first order in dt (a tenth at 0.1 ms):
    the two discretise the closure differently (velocity here, acceleration in MuJoCo)."""
    name, _, states, _, (reference, _) = mechanism
    q = np.asarray(states.joint_positions)
    rms = figures(f"{name}: joint RMS vs MuJoCo over 2 s [rad]", _rms(q[:, :2], reference[:, :2]))
    assert np.ptp(q[:, 0]) > 2.0
    assert rms < 1e-3


def test_the_loop_stays_closed_and_energy_is_kept(mechanism, figures):
    """Measured: the loop open by 2.1e-6 m at most (four-bar; MuJoCo's stiff connect 6.2e-5 m),
    1.4e-7 m (slider-crank). The energy oscillates without drift within 1.2 % (four-bar) and
    0.5 % (slider-crank) of the largest kinetic energy: semi-implicit Euler's own error at 1 ms
    (it halves at 0.5 ms; RK4: 3e-7), the same as MuJoCo's Euler within 3e-4 of it, so the
    closure adds or removes none of its own."""
    name, _, _, (violations, energy, kinetic), (_, reference_energy) = mechanism
    loop = figures(f"{name}: max loop error [m]", float(np.abs(violations).max()))
    drift = figures(f"{name}: max |energy change| / max kinetic energy", float(np.abs(energy - energy[0]).max() / kinetic.max()))
    like_mujoco = np.abs((energy - energy[0]) - (reference_energy - reference_energy[0])).max() / kinetic.max()
    assert loop < 1e-5
    assert drift < 0.015 and like_mujoco < 1e-3


def test_a_floating_base_hangs_from_the_world_by_a_weld(figures):
    """A free torso with a two-hinge arm whose tip is welded to the world swings as a double
    pendulum: the weld's rows have base columns. Measured: the weld open by 1.4e-5 at most, as
    its compliance at ``solimp`` 0.9999 allows (MuJoCo's: 2.8e-5; 3.9e-7 with an impedance of
    one)."""
    model, states, (violations, _, _) = _ours(HANGING, 1000)
    assert model.floating_base and model.loops.kind == ("weld",) and model.loops.link2 == (-1,)
    reference, _ = _mujoco(HANGING, 1000)
    position = np.asarray(states.base_position)
    base = figures("hanging weld: torso position RMS vs MuJoCo over 1 s [m]", _rms(position, reference[:, :3] + np.array([0.0, 0.0, 1.0])))
    joints = figures("hanging weld: joint RMS vs MuJoCo [rad]", _rms(np.asarray(states.joint_positions), reference[:, 7:]))
    weld = figures("hanging weld: max violation [m or 1]", float(np.abs(violations).max()))
    assert np.ptp(position[:, 2]) > 0.05
    assert base < 1e-3 and joints < 1e-3
    assert weld < 2e-5


def test_a_weld_between_two_links_of_a_spinning_floating_base_holds(figures):
    """A torso spinning about a skew axis with its arm's tip welded to it (no gravity) turns as
    one rigid body: the joints stay where they are and the base turns as MuJoCo's."""
    omega = np.array([0.5, 3.0, 1.0])
    state = js.State.build(js.load_model(SPINNING), base_velocity=jnp.concatenate([jnp.zeros(3), jnp.asarray(omega)]))
    model, states, (violations, _, _) = _ours(SPINNING, 1000, state)
    reference, _ = _mujoco(SPINNING, 1000, qvel=np.concatenate([np.zeros(3), omega, np.zeros(2)]))
    quaternion = np.asarray(states.base_quaternion)
    joints = figures("spinning weld: max |joint motion| [rad]", float(np.abs(np.asarray(states.joint_positions)).max()))
    weld = figures("spinning weld: max violation [m or 1]", float(np.abs(violations).max()))
    assert joints < 1e-5 and weld < 1e-6
    assert 1.0 - np.abs(np.sum(quaternion[-1] * (reference[-1, 3:7] + np.array([1.0, 0.0, 0.0, 0.0])))) < 1e-6
    assert _rms(np.asarray(states.base_position), reference[:, :3] + np.array([0.0, 0.0, 1.0])) < 1e-4


SOFT = 'solimp="0.5 0.9 0.01"'


@pytest.mark.parametrize("mujoco_reference", [False, True], ids=["oscillator", "mujoco_reference"])
@pytest.mark.parametrize("name", ["four_bar", "hanging"])
def test_closures_with_mujocos_impedance_move_as_in_mujoco(name, mujoco_reference, figures):
    """A connect (the four-bar) and a weld (the hanging arm) at MuJoCo's default ``solref`` and a
    soft ``solimp``, 1 s: the loop opens as far as MuJoCo's (its impedance and compliance). On
    the default reference the motion stays near MuJoCo's, apart by the two references'
    discretisation (measured: 3.5e-2 rad (four-bar) and 0.12 (hanging: rad or m) at most,
    against 0.14 and 1.6 with an impedance of one); on MuJoCo's reference it is MuJoCo's to
    rounding."""
    xml = FOUR_BAR.replace(STIFF, SOFT) if name == "four_bar" else ARMED.format(gravity="0 0 -9.81", body2="", bar=BAR, stiff=SOFT)
    model, states, (violations, _, _) = _ours(xml, 1000, mujoco_reference=mujoco_reference)
    reference, _ = _mujoco(xml, 1000)
    m = mujoco.MjModel.from_xml_string(xml)
    m.opt.timestep = DT
    data = mujoco.MjData(m)
    opened = 0.0
    for _ in range(1000):
        mujoco.mj_step(m, data)
        opened = max(opened, np.linalg.norm(data.efc_pos[: data.ne]))
    ours = np.linalg.norm(violations, axis=1).max()
    if model.floating_base:
        q = np.concatenate([np.asarray(states.base_position) - np.array([0.0, 0.0, 1.0]), np.asarray(states.joint_positions)], axis=1)
        reference = np.concatenate([reference[:, :3], reference[:, 7:]], axis=1)
    else:
        q = np.asarray(states.joint_positions)
    label = f"{name}, solimp 0.5 0.9 0.01{', MuJoCo reference' if mujoco_reference else ''}"
    distance = figures(f"{label}: max |q - q_MuJoCo| over 1 s", float(np.abs(q - reference).max()))
    figures(f"{label}: largest violation, ours / MuJoCo's", float(ours / opened))
    assert 0.8 < ours / opened < 1.25 and opened > 1e-3
    assert distance < (1e-8 if mujoco_reference else 0.05 if name == "four_bar" else 0.15)


def test_gradients_through_a_soft_connect_equal_central_differences():
    """d(crank angle after 0.2 s) / d(the connect's ``solimp`` d0 and d_width, initial crank
    velocity) through the four-bar with a soft ``solimp``."""
    model = js.load_model(FOUR_BAR.replace(STIFF, SOFT))
    params = js.SimulationParams.build(model, dt=DT, integrator="semi_implicit_euler", gravity=(0.0, 0.0, -9.81))

    def final_angle(z):
        solimp = model.loops.solimp.at[0, :2].set(z[:2])
        soft = model.replace(loops=model.loops.replace(solimp=solimp))
        state = js.State.build(soft).replace(joint_velocities=jnp.zeros(3).at[0].set(z[2]))
        final, _ = js.rollout(soft, state, jnp.zeros((200, 3)), params=params)
        return final.joint_positions[0]

    value_and_grad = jax.jit(jax.value_and_grad(final_angle))
    z = jnp.array([0.5, 0.9, 0.5])
    gradient = np.asarray(value_and_grad(z)[1])
    eps = 1e-5
    central = np.array([(value_and_grad(z + eps * e)[0] - value_and_grad(z - eps * e)[0]) / (2 * eps) for e in np.eye(3)])
    assert np.all(np.isfinite(gradient)) and np.all(np.abs(gradient) > 1e-4)
    np.testing.assert_allclose(gradient, central, rtol=1e-4)


def test_gradients_through_the_four_bar_equal_central_differences():
    """d(crank angle after 0.2 s) / d(constant crank torque, initial crank velocity), finite."""
    model = js.load_model(FOUR_BAR)
    params = js.SimulationParams.build(model, dt=DT, integrator="semi_implicit_euler", gravity=(0.0, 0.0, -9.81))

    def final_angle(z):
        state = js.State.build(model).replace(joint_velocities=jnp.zeros(3).at[0].set(z[1]))
        final, _ = js.rollout(model, state, jnp.zeros((200, 3)).at[:, 0].set(z[0]), params=params)
        return final.joint_positions[0]

    value_and_grad = jax.jit(jax.value_and_grad(final_angle))  # one program for the values too
    z = jnp.array([0.05, 0.5])
    gradient = np.asarray(value_and_grad(z)[1])
    eps = 1e-5
    central = np.array([(value_and_grad(z + eps * e)[0] - value_and_grad(z - eps * e)[0]) / (2 * eps) for e in np.eye(2)])
    assert np.all(np.isfinite(gradient)) and np.all(np.abs(gradient) > 1e-3)
    np.testing.assert_allclose(gradient, central, rtol=1e-4)


def test_reduce_keeps_a_closure_on_the_body_its_locked_link_joins():
    """Locking the rocker lumps it into the world link: the closure's frame moves there, and
    the violation at any state is the full model's with the rocker at its locked position."""
    model = js.load_model(FOUR_BAR)
    reduced = js.reduce(model, ["crank", "coupler"], {"rocker": 0.3})
    assert reduced.loops.link2 == (reduced.link_index("world"),) and reduced.loops.names == ("loop",)
    q = jnp.array([0.4, -0.7])
    full = js.State.build(model).replace(joint_positions=jnp.array([0.4, -0.7, 0.3]))
    violation = jax.jit(lambda model, state: loop_rows(model, kinematics(model, state)).violation)  # not op by op
    np.testing.assert_allclose(
        violation(reduced, js.State.build(reduced).replace(joint_positions=q)),
        violation(model, full),
        rtol=0,
        atol=1e-15,
    )
