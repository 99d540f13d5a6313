"""Loop closures between two models of a world (issue 30): MJCF connects and welds across trees.

- They load as the world's closures (``WorldDescription.closures``), not into either model
  (a single-model load warns that it leaves them out; ``jaxsim-like info`` lists them), and a
  closure naming a model the world lacks is refused at its line.
- Two free boxes connected at a point, and a free box welded to a pendulum, move as MuJoCo's
  ``mj_step`` on the same file (float64, dt 1 ms, 1 s, consistent initial velocities; MuJoCo's
  closures made stiff as in ``test_sim_loops``); the rows stay closed.
- Derivatives through the connected boxes equal central differences.

One compiled run per scene, shared by the module; MuJoCo steps the same files.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like.dynamics.kinematics import kinematics
from jaxsim_like.dynamics.model import build_model
from jaxsim_like.simulation.world import WorldModel, world_step
from jaxsim_like.simulation.world_closures import closure_rows

mujoco = pytest.importorskip("mujoco", reason="MJCF needs the mjcf extra (in the test extra)")

STIFF = 'solref="0.002 1" solimp="0.9999 0.9999 0.001"'
BAR = 'contype="0" conaffinity="0"'
TWO = f"""<mujoco model="two">
  <worldbody>
    <body name="a" pos="0 0 1">
      <freejoint/>
      <geom type="box" size="0.1 0.05 0.04" mass="1" {BAR}/>
    </body>
    <body name="b" pos="0.3 0 1">
      <freejoint/>
      <geom type="box" size="0.1 0.06 0.05" mass="2" {BAR}/>
    </body>
  </worldbody>
  <equality>
    <connect name="link" body1="a" body2="b" anchor="0.15 0 0" {STIFF}/>
  </equality>
</mujoco>"""
WELDED = f"""<mujoco model="welded">
  <worldbody>
    <body name="arm" pos="0 0 1">
      <joint name="pivot" type="hinge" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.02" mass="0.5" {BAR}/>
    </body>
    <body name="box" pos="0.35 0 1">
      <freejoint/>
      <geom type="box" size="0.05 0.04 0.03" mass="0.4" {BAR}/>
    </body>
  </worldbody>
  <equality>
    <weld name="grip" body1="box" body2="arm" {STIFF}/>
  </equality>
</mujoco>"""
# MuJoCo's qvel: each free joint's linear velocity (world axes) and angular velocity (body axes,
# here the world's); consistent with the closures (the anchor's velocity the same on both sides).
QVEL = {"two": np.array([0.5, 0.0, 1.0, 0.0, 2.0, 1.0, 0.5, 0.0, 0.7, 1.0, 0.0, -1.0]), "welded": np.array([1.0, 0.0, 0.0, -0.35, 0.0, 1.0, 0.0])}
DT = 0.001
STEPS = 1000


def _world(xml: str) -> tuple[WorldModel, list[js.Model]]:
    description = js.load_world(xml)
    models = [build_model(d) for d in description.models]
    return WorldModel.build(models, dt=DT, gravity=description.gravity, collisions=False, closures=description.closures), models


def _states(models: list[js.Model], qvel: np.ndarray) -> list[js.State]:
    """The models' states at MuJoCo's ``qvel`` (in MuJoCo's body order: the tree under the world
    first, then the free bodies; here the free trees come first)."""
    fixed = [m for m in models if not m.floating_base]
    fixed_dofs = sum(m.dofs for m in fixed)
    states, k = [], fixed_dofs
    for model in models:
        if model.floating_base:
            states.append(js.State.build(model, base_velocity=qvel[k : k + 6]))
            k += 6
        else:
            states.append(js.State.build(model, joint_velocities=qvel[:fixed_dofs]))
    return states


@jax.jit
def _trajectory(world: WorldModel, state, steps_marker: jax.Array):
    """MuJoCo's ``qpos`` layout after each step ``(T, nq)`` (the jointed tree's, then each free
    body's position and quaternion) and the closures' largest violation ``(T,)`` [m or 1]."""

    def one(current, _):
        following, _ = world_step(world, current)
        kins = [kinematics(m, s) for m, s in zip(world.models, following.states)]
        poses = jnp.concatenate([k.G_H_L.at[:, :3, 3].add(k.origin) for k in kins])
        still = jnp.zeros((poses.shape[0], 6), poses.dtype)
        violation = jnp.max(jnp.abs(closure_rows(world.closures, poses, still, still).violation))
        fixed = [s.joint_positions for m, s in zip(world.models, following.states) if not m.floating_base]
        free = [jnp.concatenate([s.base_position, s.base_quaternion]) for m, s in zip(world.models, following.states) if m.floating_base]
        return following, (jnp.concatenate(fixed + free), violation)

    _, (q, violation) = jax.lax.scan(one, state, steps_marker)
    return q, violation


def _mujoco(xml: str, qvel: np.ndarray) -> tuple[np.ndarray, float]:
    """MuJoCo's ``qpos (T, nq)`` after each step and its closures' largest translation violation."""
    m = mujoco.MjModel.from_xml_string(xml)
    m.opt.timestep = DT
    data = mujoco.MjData(m)
    data.qvel[:] = qvel
    qpos, opened = np.zeros((STEPS, m.nq)), 0.0
    for k in range(STEPS):
        mujoco.mj_step(m, data)
        qpos[k] = data.qpos
        opened = max(opened, float(np.abs(data.efc_pos[:3]).max()))
    return qpos, opened


@pytest.fixture(scope="module", params=["two", "welded"])
def scene(request):
    """1 s here and in MuJoCo: our ``qpos`` and violations, MuJoCo's ``qpos`` and violation."""
    xml = TWO if request.param == "two" else WELDED
    world, models = _world(xml)
    q, violation = _trajectory(world, world.initial_state(_states(models, QVEL[request.param])), jnp.zeros(STEPS))
    return request.param, np.asarray(q), np.asarray(violation), *_mujoco(xml, QVEL[request.param])


def test_closures_across_trees_load_as_the_worlds():
    description = js.load_world(WELDED)
    assert [m.name for m in description.models] == ["box", "welded"]
    assert all(not m.loops for m in description.models)
    (closure,) = description.closures
    assert (closure.kind, closure.model1, closure.link1, closure.model2, closure.link2) == ("weld", "box", "box", "welded", "arm")
    assert closure.location.line == 13
    with pytest.warns(js.ModelLoadWarning, match="the file has 2 trees"), pytest.warns(js.ModelLoadWarning, match="weld equality 'grip' joins two trees"):
        js.parsers.parse_mjcf(WELDED)


def test_info_lists_the_closures_between_models(tmp_path, capsys):
    from jaxsim_like.cli import main

    path = tmp_path / "welded.xml"
    path.write_text(WELDED)
    assert main(["info", str(path)]) == 0
    assert capsys.readouterr().out.splitlines()[-2:] == ["closures between models (1, load_world):", "  grip  weld  box:box -- welded:arm"]


def test_a_closure_naming_a_missing_model_is_refused_at_its_line():
    description = js.load_world(TWO)
    models = [build_model(d) for d in description.models]
    closure = description.closures[0]
    closure.model2 = "c"
    with pytest.raises(js.ModelLoadError, match=r"loop closure 'link': no model named 'c'") as error:
        WorldModel.build(models, closures=[closure])
    assert error.value.line == 13


def test_closures_between_models_need_the_implicit_step():
    description = js.load_world(TWO)
    models = [build_model(d) for d in description.models]
    world = WorldModel.build(models, integrator="semi_implicit_euler", collisions=False, closures=description.closures)
    with pytest.raises(ValueError, match="loop closures between models \\(link\\) need the implicit_euler integrator"):
        jax.eval_shape(world_step, world, world.initial_state())


def test_closed_models_move_as_in_mujoco(scene, figures):
    """The largest distance to MuJoCo's ``qpos`` over 1 s and the largest violation of the rows
    are recorded (see docs/changelog.md)."""
    name, q, violation, reference, opened = scene
    q = q.copy()
    # The quaternions' sign is free.
    for start in range(q.shape[1] - 7 * (1 if name == "welded" else 2), q.shape[1], 7):
        flip = np.sign(np.sum(q[:, start + 3 : start + 7] * reference[:, start + 3 : start + 7], axis=1))[:, None]
        q[:, start + 3 : start + 7] *= flip
    distance = figures(f"world closure, {name}: max |qpos - qpos_MuJoCo| over 1 s", float(np.abs(q - reference).max()))
    figures(f"world closure, {name}: max violation (MuJoCo's {opened:.2g} m)", float(violation.max()))
    assert distance < 1e-3
    assert violation.max() < 1e-5


def test_gradients_through_connected_boxes_equal_central_differences():
    """d(box b's final x after 0.1 s) / d(box a's initial x and z velocity, the connect's time
    constant), through the world step's closure block (forward mode: a third of reverse mode's
    compilation here)."""
    world, models = _world(TWO)

    def final_x(z):
        states = _states(models, np.zeros(12))
        states[0] = states[0].replace(base_velocity=jnp.zeros(6).at[0].set(z[0]).at[2].set(z[1]))
        closed = world.replace(closures=world.closures.replace(loops=world.closures.loops.replace(time_constant=z[2:3])))
        state = closed.initial_state(states)
        final = jax.lax.fori_loop(0, 100, lambda _, s: world_step(closed, s)[0], state)
        return final.states[1].base_position[0]

    # One tangent per input; the values at the shifted points from the same program.
    value_and_jacobian = jax.jit(lambda z: jax.vmap(lambda t: jax.jvp(final_x, (z,), (t,)), out_axes=(None, 0))(jnp.eye(3)))
    gradient = np.asarray(value_and_jacobian(z := jnp.array([0.5, 1.0, 0.01]))[1])
    eps = np.array([1e-6, 1e-6, 1e-7])
    central = np.array([(value_and_jacobian(z + e)[0] - value_and_jacobian(z - e)[0]) / (2 * e.sum()) for e in np.diag(eps)])
    assert np.all(np.isfinite(gradient)) and np.all(np.abs(gradient[:2]) > 1e-3)
    np.testing.assert_allclose(gradient, central, rtol=1e-5, atol=1e-8)
