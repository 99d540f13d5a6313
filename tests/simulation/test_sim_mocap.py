"""Mocap bodies (issue 30): MJCF ``mocap="true"`` bodies as moving frames whose pose is an
input of the step, held on by connect and weld closures, and the closures' forces.

- The loader: a mocap body belongs to no tree; a closure naming it holds on a moving frame at
  its pose in the file; what cannot be represented is refused (or warned about) with its line.
- A free box welded to a mocap body that circles, and a rod hanging by a connect from a mocap
  point that swings sideways, move as MuJoCo's with the same ``mocap_pos`` sequence
  (semi-implicit Euler here, MuJoCo's Euler, dt 1 ms, 1 s; MuJoCo's equality made stiff with
  ``solref="0.002 1"`` and a solimp of nearly one, as in ``test_sim_loops.py``); the weld's
  row forces (``StepOutput.loop_forces``) are MuJoCo's ``efc_force``.
- The gradient of the rod's final position with respect to the mocap trajectory, through
  :func:`world_step` with the poses as :class:`ModelInputs`, equals central differences.

Each model compiles one rollout for the module; MuJoCo steps the same files.
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like.parsers import parse_mjcf
from jaxsim_like.simulation.world import ModelInputs, WorldModel, world_step

mujoco = pytest.importorskip("mujoco", reason="MJCF needs the mjcf extra (in the test extra)")

STIFF = 'solref="0.002 1" solimp="0.9999 0.9999 0.001"'
QUIET = 'contype="0" conaffinity="0"'
DT = 0.001
STEPS = 1000
GRAVITY = (0.0, 0.0, -9.81)
BOX = f"""<mujoco model="carried_box">
  <option timestep="{DT}" gravity="0 0 -9.81"/>
  <worldbody>
    <body name="hand" mocap="true" pos="0.3 0 1" quat="0.9 0 0.1 0.2">
      <geom type="sphere" size="0.02" {QUIET}/>
    </body>
    <body name="box" pos="0.3 0.02 0.9" euler="0.1 0.2 0">
      <freejoint/>
      <geom type="box" size="0.05 0.04 0.03" mass="0.5" {QUIET}/>
    </body>
  </worldbody>
  <equality>
    <weld name="grip" body1="box" body2="hand" {STIFF}/>
  </equality>
</mujoco>"""
ROD = f"""<mujoco model="swung_rod">
  <option timestep="{DT}" gravity="0 0 -9.81"/>
  <worldbody>
    <body name="pivot" mocap="true" pos="0 0 1">
      <site name="tip" pos="0 0 0"/>
    </body>
    <body name="rod" pos="0 0 1">
      <freejoint/>
      <geom type="capsule" fromto="0 0 0 0 0 -0.3" size="0.015" mass="0.4" {QUIET}/>
      <site name="top" pos="0 0 0"/>
    </body>
  </worldbody>
  <equality>
    <connect name="hang" site1="top" site2="tip" {STIFF}/>
  </equality>
</mujoco>"""


def _circle(steps: int) -> tuple[np.ndarray, np.ndarray]:
    """The hand's position ``(T, 1, 3)`` and quaternion ``(T, 1, 4)`` at the start of each step:
    a circle of 0.1 m radius once a second from its pose in the file, turning by a quarter turn
    about the vertical."""
    t = np.arange(steps) * DT
    start = np.array([0.3, 0.0, 1.0])
    positions = start + 0.1 * np.stack([np.cos(2 * np.pi * t) - 1, np.sin(2 * np.pi * t), 0 * t], -1)
    turn = np.stack([np.cos(np.pi / 4 * t), 0 * t, 0 * t, np.sin(np.pi / 4 * t)], -1)
    q0 = np.array([0.9, 0.0, 0.1, 0.2]) / np.linalg.norm([0.9, 0.1, 0.2])
    w, x, y, z = turn.T  # turn * q0 (wxyz): the file's orientation turned about the world's z
    quaternions = np.stack([
        w * q0[0] - z * q0[3], w * q0[1] - z * q0[2], w * q0[2] + z * q0[1], w * q0[3] + z * q0[0],
    ], -1)
    return positions[:, None, :], quaternions[:, None, :]


def _swing(steps: int, amplitude: float = 0.08) -> tuple[np.ndarray, np.ndarray]:
    """The pivot's position ``(T, 1, 3)``, moved sideways by ``amplitude sin(2 pi 1.5 t)`` [m]
    along x, and quaternion ``(T, 1, 4)`` (the identity)."""
    t = np.arange(steps) * DT
    positions = np.stack([amplitude * np.sin(3 * np.pi * t), 0 * t, 0 * t + 1.0], -1)
    return positions[:, None, :], np.tile([1.0, 0.0, 0.0, 0.0], (steps, 1, 1))


@jax.jit
def _rollout(model: js.Model, state: js.State, params: js.SimulationParams, positions: jax.Array, quaternions: jax.Array):
    """The states and outputs of a rollout with the mocap bodies at ``positions (T, k, 3)`` and
    ``quaternions (T, k, 4)``."""
    torques = jnp.zeros((positions.shape[0], model.dofs))
    return js.rollout(model, state, torques, params=params, mocap_positions=positions, mocap_quaternions=quaternions)[1]


def _params(model: js.Model) -> js.SimulationParams:
    return js.SimulationParams.build(model, dt=DT, integrator="semi_implicit_euler", gravity=GRAVITY)


def _mujoco(xml: str, positions: np.ndarray, quaternions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """MuJoCo's ``qpos (T, nq)`` and equality rows' ``efc_force (T, ne)`` after each step, with
    ``mocap_pos`` and ``mocap_quat`` set to ``positions (T, k, 3)`` and ``quaternions (T, k, 4)``
    before it."""
    m = mujoco.MjModel.from_xml_string(xml)
    data = mujoco.MjData(m)
    qpos, forces = np.zeros((len(positions), m.nq)), np.zeros((len(positions), m.neq * 6))
    for k, (position, quaternion) in enumerate(zip(positions, quaternions)):
        data.mocap_pos[:], data.mocap_quat[:] = position, quaternion
        mujoco.mj_step(m, data)
        qpos[k] = data.qpos
        forces[k, : data.ne] = data.efc_force[: data.ne]
    return qpos, forces[:, : data.ne]


def _angle(a: np.ndarray, b: np.ndarray) -> float:
    """The largest rotation angle [rad] between the quaternions ``a`` and ``b (T, 4)``."""
    return float((2 * np.arccos(np.minimum(np.abs(np.sum(a * b, axis=1)), 1.0))).max())


@pytest.fixture(scope="module")
def carried() -> tuple[js.Model, tuple[js.State, js.StepOutput], tuple[np.ndarray, np.ndarray]]:
    """The box carried around the circle for 1 s, here and in MuJoCo."""
    model = js.load_model(BOX)
    poses = _circle(STEPS)
    return model, _rollout(model, js.State.build(model), _params(model), *map(jnp.asarray, poses)), _mujoco(BOX, *poses)


@pytest.fixture(scope="module")
def rod() -> js.Model:
    return js.load_model(ROD)


@pytest.fixture(scope="module")
def swung(rod) -> tuple[tuple[js.State, js.StepOutput], tuple[np.ndarray, np.ndarray]]:
    """The rod swung for 1 s, here and in MuJoCo."""
    poses = _swing(STEPS)
    return _rollout(rod, js.State.build(rod), _params(rod), *map(jnp.asarray, poses)), _mujoco(ROD, *poses)


def test_a_mocap_body_loads_as_a_moving_frame_of_the_closures():
    """The box is the file's only tree; the weld holds it on the mocap body ``hand``, at its
    pose in the file, with the weld's frames in the two bodies."""
    model = js.load_model(BOX)
    loops = model.loops
    assert model.link_names == ("box",) and model.floating_base
    assert loops.mocap_names == ("hand",) and loops.link2 == (-1,) and loops.mocap2 == (0,) and loops.mocap1 == (-1,)
    m = mujoco.MjModel.from_xml_string(BOX)
    np.testing.assert_allclose(loops.mocap_position, [m.body_pos[1]], rtol=0, atol=1e-15)
    np.testing.assert_allclose(loops.mocap_quaternion, [m.body_quat[1]], rtol=0, atol=1e-15)
    reduced = js.reduce(model, [])
    assert reduced.loops.mocap_names == ("hand",) and reduced.loops.mocap2 == (0,)
    np.testing.assert_allclose(reduced.loops.mocap_quaternion, loops.mocap_quaternion, rtol=0, atol=1e-15)


def test_what_mocap_bodies_cannot_do_here_is_refused_or_warned_with_its_line():
    """A weld between a mocap body and the world holds nothing; a mocap body that carries a
    body is not supported; a mocap body whose geom collides is a model of the world of its own."""
    welded = BOX.replace('body1="box" body2="hand"', 'body1="hand"')
    with pytest.raises(js.ModelLoadError, match=r":13: .*weld equality 'grip' holds no moving body \('hand', 'world'"):
        parse_mjcf(welded)
    carrying = ROD.replace('<site name="tip" pos="0 0 0"/>', '<site name="tip"/><body name="ball"><geom size="0.01"/></body>')
    with pytest.raises(js.ModelLoadError, match=r":4: .*mocap body 'pivot' carries bodies \('ball'\)"):
        parse_mjcf(carrying)
    colliding = BOX.replace(f'size="0.02" {QUIET}', 'size="0.02"')
    with pytest.warns(js.ModelLoadWarning, match=r"the file has 2 trees \('box', 'hand'\)"):
        parse_mjcf(colliding)
    assert [m.name for m in js.load_world(colliding).models] == ["box", "hand"]  # see test_sim_mocap_contacts.py
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parse_mjcf(BOX)


def test_a_box_welded_to_a_circling_mocap_body_moves_as_in_mujoco(carried, figures):
    """Measured: the box within 6.6e-4 m and 1.6e-3 rad of MuJoCo's over 1 s (the hand goes
    round a circle of 0.2 m across at 0.63 m/s and turns by 45 degrees): the two discretise the
    stiff weld differently."""
    _, (states, _), (qpos, _) = carried
    position = np.asarray(states.base_position)
    distance = figures("mocap weld: box distance from MuJoCo's over 1 s [m]", float(np.linalg.norm(position - qpos[:, :3], axis=1).max()))
    angle = figures("mocap weld: box orientation from MuJoCo's [rad]", _angle(np.asarray(states.base_quaternion), qpos[:, 3:7]))
    assert np.ptp(position[:, 0]) > 0.19 and np.ptp(position[:, 1]) > 0.19
    assert _angle(np.asarray(states.base_quaternion[-1:]), np.asarray(states.base_quaternion[:1])) > 0.7
    assert distance < 1e-3 and angle < 5e-3


def test_the_welds_forces_are_mujocos(carried, figures):
    """``StepOutput.loop_forces``: the weld's six row forces, MuJoCo's ``efc_force`` of its rows
    (on the box: about the centripetal force, 1.97 N, and the weight, 4.905 N up) once the start's
    jolt (the hand sets off at 0.63 m/s, 35 N here, 78 N in MuJoCo) has settled, after 50 ms."""
    _, (_, outputs), (_, efc) = carried
    forces = np.asarray(outputs.loop_forces)
    assert forces.shape == (STEPS, 6)
    settled = slice(50, None)
    np.testing.assert_allclose(forces[settled, 2], 0.5 * 9.81, rtol=1e-6)  # the jolt moves it by 0.026 N, MuJoCo's 0.058
    difference = figures("mocap weld: max |row force - MuJoCo's| after 50 ms [N or N m]", float(np.abs(forces - efc)[settled].max()))
    assert np.linalg.norm(forces[settled, :2], axis=1).min() > 1.9
    assert difference < 0.03


def test_a_rod_hanging_from_a_swinging_mocap_point_moves_as_in_mujoco(swung, figures):
    """A connect between the rod's top and a mocap site moved sideways at 1.5 Hz: the rod
    swings as MuJoCo's (measured: within 7.6e-4 m and 8e-3 rad of a 1.08 rad swing; both
    halve at 0.5 ms, as do the box's: the discretisations differ at first order)."""
    (states, outputs), (qpos, efc) = swung
    position = np.asarray(states.base_position)
    distance = figures("mocap connect: rod distance from MuJoCo's over 1 s [m]", float(np.linalg.norm(position - qpos[:, :3], axis=1).max()))
    angle = figures("mocap connect: rod orientation from MuJoCo's [rad]", _angle(np.asarray(states.base_quaternion), qpos[:, 3:7]))
    tilt = figures("mocap connect: rod's largest tilt [rad]", float(2 * np.arccos(np.minimum(np.abs(qpos[:, 3]), 1.0)).max()))
    forces = figures("mocap connect: max |row force - MuJoCo's| after 50 ms [N]", float(np.abs(np.asarray(outputs.loop_forces) - efc)[50:].max()))
    assert tilt > 0.3
    assert distance < 1e-3 and angle < 1e-2 and forces < 0.1


def test_the_gradient_with_respect_to_the_mocap_trajectory_equals_central_differences(rod, swung):
    """d(rod's final x after 0.2 s through the world step) / d(the pivot's trajectory): along
    its amplitude and along a random perturbation of every step's position. The world step
    with the poses as inputs moves the rod as :func:`js.rollout` does."""
    world = WorldModel.build([rod], dt=DT, integrator="semi_implicit_euler", gravity=GRAVITY, collisions=False)
    start = world.initial_state()
    base = jnp.asarray(_swing(200, amplitude=1.0)[0])
    direction = jnp.asarray(np.random.default_rng(5).normal(size=base.shape) * 0.01)

    def final_x(z):
        positions = base * jnp.array([z[0], 1.0, 1.0]) + z[1] * direction

        def one(state, position):
            return world_step(world, state, [ModelInputs(mocap_positions=position)])[0], None

        final, _ = jax.lax.scan(one, start, positions)
        return final.states[0].base_position[0]

    # Forward mode, one tangent per input: one program for the values too, compiled in less
    # than reverse mode's (reverse mode through closures: test_sim_loops.py's four-bar).
    value_and_gradient = jax.jit(lambda z: jax.vmap(lambda t: jax.jvp(final_x, (z,), (t,)), out_axes=(None, 0))(jnp.eye(2)))
    z = jnp.array([0.08, 0.0])
    value, gradient = value_and_gradient(z)
    eps = 1e-5
    central = np.array([(value_and_gradient(z + eps * e)[0] - value_and_gradient(z - eps * e)[0]) / (2 * eps) for e in np.eye(2)])
    assert np.all(np.abs(gradient) > 1e-3)
    np.testing.assert_allclose(gradient, central, rtol=1e-5)
    (states, _), _ = swung
    np.testing.assert_allclose(value, states.base_position[199, 0], rtol=0, atol=1e-12)
