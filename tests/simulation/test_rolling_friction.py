"""Torsional and rolling friction (MuJoCo's condim 4 and 6, issue 29) against ``mj_step`` in float64.

``SCENE``: on a floor, a sphere rolling at 0.2 m/s (``roller``), a sphere spinning at 10 rad/s
about the vertical (``spinner``), and a sphere rolling at 0.2 m/s on a heavy free box (``rider``
on ``slab``: a contact between two models), every geom ``condim="6"`` with friction ``1 0.01
0.002``. A sphere of radius ``r`` rolling without slipping under a rolling torque ``mu_r m g``
decelerates at ``5/7 mu_r g / r`` (0.280 m/s^2 here) and stops at 0.71 s; one spinning under a
torsional torque ``mu_t m g`` at ``mu_t m g / I`` (98.1 rad/s^2), stopping at 0.10 s. MuJoCo runs
with its elliptic cone and ``impratio="100"``: at its default ``impratio`` its soft friction
turns viscous at low speeds, and the sphere never stops. One compiled rollout of the scene, and
one compiled step for a derivative.
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like.dynamics.model import build_model
from jaxsim_like.loading import ContactSampling
from jaxsim_like.parsers import ModelLoadWarning, parse_mjcf_world
from jaxsim_like.simulation.world import WorldModel, world_rollout

mujoco = pytest.importorskip("mujoco", reason="MJCF needs the mjcf extra (in the test extra)")

DT = 0.002  # [s]
R, V0, SPIN = 0.05, 0.2, 10.0  # sphere radius [m], rolling speed [m/s], spin [rad/s]
H = 0.05  # [m]: the slab's half height
FRICTION = 'friction="1 0.01 0.002" condim="6"'
SCENE = f"""<mujoco><option timestep="{DT}"/><worldbody><geom name="floor" type="plane" size="5 5 .1" {FRICTION}/>
<body name="roller" pos="0 0 {R}"><freejoint/><geom type="sphere" size="{R}" mass="1" {FRICTION}/></body>
<body name="spinner" pos="0 1 {R}"><freejoint/><geom type="sphere" size="{R}" mass="1" {FRICTION}/></body>
<body name="slab" pos="0 -1 {H}"><freejoint/><geom type="box" size=".5 .5 {H}" mass="20" {FRICTION}/></body>
<body name="rider" pos="-.2 -1 {2 * H + R}"><freejoint/><geom type="sphere" size="{R}" mass="1" {FRICTION}/></body>
</worldbody></mujoco>"""
VELOCITY = {"roller": [V0, 0, 0, 0, V0 / R, 0], "spinner": [0, 0, 0, 0, 0, SPIN], "rider": [V0, 0, 0, 0, V0 / R, 0]}
SAMPLES, EVERY = 10, 50  # ten samples, 0.1 s apart


def mujoco_run() -> dict[str, np.ndarray]:
    """MuJoCo's speed along x of the rolling spheres and spin of the spinner [m/s, rad/s] at each sample."""
    m = mujoco.MjModel.from_xml_string(SCENE.replace("<option", '<option cone="elliptic" impratio="100"'))
    d = mujoco.MjData(m)
    for body, velocity in VELOCITY.items():
        address = m.jnt_dofadr[m.body_jntadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, body)]]
        d.qvel[address : address + 6] = velocity  # the free joint's angular velocity is in the body frame: the same at the start
    taken = {name: [] for name in VELOCITY}
    for _ in range(SAMPLES):
        mujoco.mj_step(m, d, EVERY)
        for name in VELOCITY:
            b = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, name)
            world = d.xmat[b].reshape(3, 3) @ d.qvel[m.jnt_dofadr[m.body_jntadr[b]] + 3 : m.jnt_dofadr[m.body_jntadr[b]] + 6]
            taken[name].append(world[2] if name == "spinner" else d.qvel[m.jnt_dofadr[m.body_jntadr[b]]])
    return {name: np.asarray(values) for name, values in taken.items()}


@pytest.fixture(scope="module")
def runs():
    """MuJoCo's samples, ours, and our final positions and speeds (the last sample's and 0.1 s
    before's), the scene loaded with warnings as errors (condim 6 is read, not warned about)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelLoadWarning)
        description = parse_mjcf_world(SCENE)
    models = [build_model(x, collidable_points=ContactSampling().points) for x in description.models]
    world = WorldModel.build(models, dt=DT)
    start = world.initial_state()
    depth = 0.001  # [m]: the default max_penetration, our rest depth
    states = [s.replace(base_velocity=jnp.asarray(VELOCITY.get(m.name, [0.0] * 6), s.base_velocity.dtype),
                        base_position=s.base_position - jnp.asarray([0, 0, depth * (2 if m.name == "rider" else 1)]))
              for m, s in zip(models, start.states)]
    chunk = jax.jit(lambda s: world_rollout(world, s, None, EVERY)[0])
    state, taken, positions = start._replace(states=tuple(states)), {name: [] for name in VELOCITY}, []
    for _ in range(SAMPLES):
        state = chunk(state)
        positions.append({m.name: np.asarray(s.base_position) for m, s in zip(models, state.states)})
        for m, s in zip(models, state.states):
            if m.name in VELOCITY:
                taken[m.name].append(float(s.base_velocity[5] if m.name == "spinner" else s.base_velocity[0]))
    final = {m.name: np.asarray(s.base_velocity) for m, s in zip(models, state.states)}
    return mujoco_run(), {name: np.asarray(values) for name, values in taken.items()}, positions, final


def test_the_scene_reads_the_files_torsional_and_rolling_friction():
    """Every point carries the file's coefficients against the floor (the rider's against the
    slab come from the table's pairs), without a warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelLoadWarning)
        models = [build_model(x, collidable_points=ContactSampling().points) for x in parse_mjcf_world(SCENE).models]
    for model in models:
        np.testing.assert_array_equal(np.asarray(model.point_torsion), 0.01)
        np.testing.assert_array_equal(np.asarray(model.point_rolling), 0.002)


@pytest.mark.parametrize("name", ["roller", "rider"])
def test_a_rolling_sphere_slows_down_as_in_mujoco_and_stops(runs, figures, name):
    """On the floor (terrain) and on the slab (a contact between models): the deceleration over
    0.1-0.5 s within 2 % of ``5/7 mu_r g / r`` (MuJoCo's within 0.3 %), the speed within 5 mm/s
    of MuJoCo's while rolling; at rest by 0.8 s, as MuJoCo's, then creeping below 10 um/s (the
    stick's creep under the slab's slight tilt, :mod:`jaxsim_like.simulation.contact_torques`). The torque's bound takes the
    normal force at the step's start: a rolling sphere's weight, as a resting one's (its contact
    moves with its centre, :func:`jaxsim_like.simulation.contacts.round_drift`)."""
    theirs, ours, positions, final = runs
    expected = 5 / 7 * 0.002 * 9.81 / R
    for who, speed in (("ours", ours[name]), ("MuJoCo", theirs[name])):
        deceleration = (speed[0] - speed[4]) / 0.4
        figures(f"rolling friction: {name} deceleration {who} (5/7 mu_r g / r = {expected:.4f})", deceleration, "m/s^2")
        assert deceleration == pytest.approx(expected, rel=0.02 if who == "ours" else 3e-3), who
    figures(f"rolling friction: {name} speed ours - MuJoCo, largest", np.max(np.abs(ours[name] - theirs[name])), "m/s")
    np.testing.assert_allclose(ours[name][:6], theirs[name][:6], atol=5e-3)
    assert np.all(np.abs(theirs[name][7:]) < 1e-4)
    assert np.all(np.abs(ours[name][8:]) < 1e-5)
    drift = np.linalg.norm(positions[-1][name] - positions[-2][name])
    figures(f"rolling friction: {name} drift over 0.1 s at rest", drift, "m")
    assert drift < 1e-6
    assert np.linalg.norm(final[name][3:]) < 1e-5 / R


def test_a_spinning_sphere_stops_turning_as_in_mujoco(runs, figures):
    """Spinning at 10 rad/s on the floor: stopped by 0.2 s, as ``mu_t m g / I`` and MuJoCo say,
    after 0.1 s within 0.15 rad/s of MuJoCo's spin (of 10)."""
    theirs, ours, _, _ = runs
    figures("torsional friction: spin at 0.1 s ours", ours["spinner"][0], "rad/s")
    figures("torsional friction: spin at 0.1 s MuJoCo", theirs["spinner"][0], "rad/s")
    assert ours["spinner"][0] == pytest.approx(theirs["spinner"][0], abs=0.15)
    assert 0 < ours["spinner"][0] < SPIN - 0.1 * 90
    assert np.all(np.abs(ours["spinner"][1:]) < 1e-6) and np.all(np.abs(theirs["spinner"][2:]) < 1e-3)


def ball() -> js.Model:
    """A solid sphere of radius ``R`` and 1 kg (URDF: no file friction)."""
    inertia = 0.4 * R * R
    return js.load_model(
        f'<robot name="ball"><link name="l"><inertial><mass value="1"/><inertia ixx="{inertia}" iyy="{inertia}" izz="{inertia}" '
        f'ixy="0" ixz="0" iyz="0"/></inertial><collision><geometry><sphere radius="{R}"/></geometry></collision></link></robot>')


def test_the_rolling_distance_has_the_gradient_of_central_differences():
    """A sphere given ``rolling_friction`` by the builder rolls 0.2 s at 0.2 m/s: the derivative
    of its distance with respect to the rolling coefficient equals central differences (and is
    within 5 % of ``-5/7 g t^2 / 2r``: see the deceleration's test). One compiled step, forward
    mode, its tangent carried from step to step."""
    sphere = ball()
    params = js.SimulationParams.build(sphere, dt=DT, friction=1.0, torsional_friction=0.01, rolling_friction=0.002)
    state = js.State.build(sphere, base_position=[0.0, 0.0, R - 0.001], base_velocity=VELOCITY["roller"])

    def stepped(s, rolling):
        return js.step(sphere, s, params=params.replace(contact=params.model.contact.replace(rolling=rolling)))[0]

    tangent_step = jax.jit(lambda s, r, ds: jax.jvp(stepped, (s, r), (ds, jnp.ones_like(r))))

    def distance(rolling):
        s, ds = state, jax.tree.map(jnp.zeros_like, state)
        for _ in range(100):
            s, ds = tangent_step(s, rolling, ds)
        return float(s.base_position[0]), float(ds.base_position[0])

    mu, step = jnp.asarray(0.002), 1e-6
    value, derivative = distance(mu)
    central = (distance(mu + step)[0] - distance(mu - step)[0]) / (2 * step)
    assert value == pytest.approx(V0 * 0.2 - 5 / 7 * 0.002 * 9.81 / R * 0.2**2 / 2, rel=0.01)
    assert derivative == pytest.approx(central, rel=1e-6)
    assert derivative == pytest.approx(-5 / 7 * 9.81 / R * 0.2**2 / 2, rel=0.05)


def test_the_explicit_integrators_refuse_torsional_and_rolling_friction_and_leave_a_files_out():
    """They have no torque law: the builder refuses the coefficients, naming the integrator, and
    warns that a model whose file gives them (condim 4 and 6) steps without them, as a model
    without them does. A negative coefficient is refused by name."""
    with pytest.raises(ValueError, match="need the implicit_euler integrator, not 'semi_implicit_euler'"):
        js.SimulationParams.build(ball(), integrator="semi_implicit_euler", rolling_friction=0.01)
    with pytest.raises(ValueError, match=r"torsional_friction must be finite and >= 0 \[m\], got -0.1"):
        js.SimulationParams.build(ball(), torsional_friction=-0.1)
    roller = build_model(parse_mjcf_world(SCENE).models[0], collidable_points=ContactSampling().points)
    with pytest.warns(UserWarning, match=r"model 'roller' gives its collisions torsional or rolling friction .* 'semi_implicit_euler' leaves them out"):
        params = js.SimulationParams.build(roller, integrator="semi_implicit_euler")
    without = roller.replace(point_torsion=None, point_rolling=None)
    state = js.State.build(roller, base_velocity=[0.5, 0.0, 0.0, 0.0, 3.0, 1.0])
    stepped = jax.jit(lambda m, s: js.step(m, s, params=params)[0])
    for got, want in zip(jax.tree.leaves(stepped(roller, state)), jax.tree.leaves(stepped(without, state))):
        np.testing.assert_array_equal(got, want)
