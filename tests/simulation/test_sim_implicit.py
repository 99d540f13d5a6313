"""The implicit step: its linear system, stability at large steps, inelastic impacts, resting
contacts, a heavy slender body standing, and divergence reporting.

The 64 perturbed humanoid drops (in batches of 16) and the 16 resting ones run in one jitted
function for every step size (``dt`` and the number of steps are traced), in float64 here and in
float32 in a subprocess.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxsim_like as js
from jaxsim_like.batching import first_nonfinite_step
from jaxsim_like.dynamics import crba, kinematics, rnea
from jaxsim_like.simulation import contact_slots, contacts, joint_effects, terrain

step_module = importlib.import_module("jaxsim_like.simulation.step")
model_step = importlib.import_module("jaxsim_like.simulation.model_step")

WORLDS = 64
ROBOT_WORLDS = 16
FLOAT32_WORLDS = 16
DROP_SECONDS = 0.6
REST_SECONDS = 12.0
RESTING_DROPS = 16

DROPS = textwrap.dedent(
    '''
    import functools, json, sys
    import jax, jax.numpy as jnp, numpy as np
    import jaxsim_like as js
    from jaxsim_like.simulation.step import contact_point_positions

    def drops(model, worlds, seed, level=3, spread=0.5):
        """Limp drops of ``worlds`` copies with joints perturbed by up to +-``spread`` rad (world 0 unperturbed),
        the lowest point 0.5 m above the ground, run by one program compiled at XLA's backend
        optimisation ``level`` (3: the 64 humanoids' thousands of steps; 0, the suite's default,
        compiles faster where running is cheap: a single world, or 16 worlds' 300 steps)."""
        q = np.random.default_rng(seed).uniform(-spread, spread, (worlds, model.dofs))
        q[0] = 0.0

        def lifted(q):
            state = js.State.build(model, base_position=jnp.zeros(3), joint_positions=q)
            lowest = contact_point_positions(model, state)[:, 2].min()
            return state.replace(base_position=jnp.array([0.0, 0.0, 0.5]) - jnp.array([0.0, 0.0, 1.0]) * lowest)

        states = jax.jit(jax.vmap(lifted))(jnp.asarray(q, dtype=jnp.asarray(0.0).dtype))

        @functools.partial(jax.jit, compiler_options={"xla_backend_optimization_level": level})
        def compiled(states, params, steps, settled_after):
            dt = params.dt

            def one(state):
                def body(i, carry):
                    state, finite, touched, rebound, speed = carry
                    state, out = js.step(model, state, params=params)
                    touched = touched | jnp.any(out.in_contact)
                    lowest = contact_point_positions(model, state)[:, 2].min()
                    rebound = jnp.where(touched, jnp.maximum(rebound, lowest), rebound)
                    late = (i + 1) * dt >= settled_after
                    speed = jnp.where(late, jnp.maximum(speed, jnp.abs(state.joint_velocities).max()), speed)
                    return state, finite & out.finite, touched, rebound, speed

                zero = jnp.zeros((), states.joint_positions.dtype)
                return jax.lax.fori_loop(0, steps, body, (state, jnp.array(True), jnp.array(False), zero, zero))[1:]

            return jax.vmap(one)(states)

        def run(states, dt, steps, settled_after):
            return compiled(states, js.SimulationParams.build(model, dt=dt), steps, settled_after)

        return states, run

    if __name__ == "__main__":
        model = js.load_model(js.models.path("humanoid"))
        states, run = drops(model, int(sys.argv[1]), 0)
        out = {}
        for dt in (0.001, 0.002, 0.005):
            finite, _, _, _ = run(states, dt, int(round(float(sys.argv[2]) / dt)), 1e9)
            out[str(dt)] = int((~np.asarray(finite)).sum())
        print(json.dumps({"dtype": str(states.joint_positions.dtype), "diverged": out}))
    '''
)


@pytest.fixture(scope="module")
def drop_module(tmp_path_factory):
    path = tmp_path_factory.mktemp("drops") / "drops.py"
    path.write_text(DROPS)
    sys.path.insert(0, str(path.parent))
    try:
        yield importlib.import_module("drops")
    finally:
        sys.path.remove(str(path.parent))


@pytest.fixture(scope="module")
def resting_humanoid(drop_module, humanoid):
    """``RESTING_DROPS`` drops, the unperturbed one and others with the joints offset by up to
    +-0.1 rad (as ``benchmarks/resting.py``'s): a limp drop is chaotic, and one drop may still
    tumble at 5 s where most lie still."""
    return drop_module.drops(humanoid, RESTING_DROPS, 0, spread=0.1)


@pytest.fixture(scope="module")
def humanoid_drops(drop_module, humanoid, resting_humanoid):
    """The ``WORLDS`` perturbed drops' states and a ``run`` of them in batches of ``RESTING_DROPS``
    worlds on the resting drops' compiled program (one compilation for both fixtures)."""
    states, _ = drop_module.drops(humanoid, WORLDS, 0)
    _, run = resting_humanoid

    def batched(states, *args):
        parts = [run(jax.tree.map(lambda x: x[k : k + RESTING_DROPS], states), *args) for k in range(0, WORLDS, RESTING_DROPS)]
        return tuple(np.concatenate([np.asarray(part[i]) for part in parts]) for i in range(len(parts[0])))

    return states, batched


@pytest.mark.parametrize("dt", [0.001, 0.002, 0.005, 0.01, 0.02])
def test_perturbed_humanoid_drops_never_diverge(humanoid_drops, dt, figures):
    """64 limp humanoids, joints perturbed by up to +-0.5 rad, dropped from 0.5 m: every world stays
    finite at 1, 2, 5, 10 and 20 ms (the explicit step diverged in 22-27 of 64 at 1 ms); world 0,
    unperturbed, rebounds by less than 5 % of the drop."""
    states, run = humanoid_drops
    finite, touched, rebound, _ = (np.asarray(x) for x in run(states, dt, int(round(DROP_SECONDS / dt)), 1e9))
    figures(f"humanoid drops, dt {dt * 1000:g} ms: diverged", int((~finite).sum()))
    figures(f"humanoid drop, dt {dt * 1000:g} ms: rebound of the lowest point", rebound[0], "m")
    assert finite.all() and touched.all()
    assert rebound[0] < 0.05 * 0.5


def robot_path(name: str) -> str:
    """A robot description that a PyPI package ships: the iCub of ``icub-models``, Solo-12 of
    ``example-robot-data``."""
    if name == "icub":
        import icub_models

        return str(icub_models.get_model_file("iCubGazeboV2_5"))
    import site
    from pathlib import Path

    for root in site.getsitepackages():
        path = Path(root) / "cmeel.prefix/share/example-robot-data/robots/solo_description/robots/solo12.urdf"
        if path.exists():
            return str(path)
    pytest.fail("example-robot-data (the test extra) is not installed")


@pytest.mark.parametrize("name", ["icub", "solo12"])
def test_perturbed_drops_of_real_robots_never_diverge_at_2ms(drop_module, name, figures):
    """16 limp drops of a humanoid (iCub, 32 joints, 33 kg) and a quadruped (Solo-12, 2.5 kg) from
    their PyPI packages, joints perturbed by up to +-0.5 rad, from 0.5 m at dt 2 ms: none diverges
    (8 points per mesh and 16 worlds, to keep the test short: running the worlds is most of its
    cost; the humanoid's test above drops 64)."""
    model = js.load_model(robot_path(name), contact_sampling=js.ContactSampling(mesh_max_points=8))
    states, run = drop_module.drops(model, ROBOT_WORLDS, 0, level=0)
    finite, touched, _, _ = (np.asarray(x) for x in run(states, 0.002, int(round(DROP_SECONDS / 0.002)), 1e9))
    figures(f"{name} drops, dt 2 ms: diverged", int((~finite).sum()))
    assert touched.all() and finite.all()


def test_perturbed_humanoid_drops_never_diverge_in_float32(drop_module):
    """The first 16 of the same drops in float32 (a subprocess with x64 off): none diverges at 1, 2
    or 5 ms (16 worlds: the 64 took a minute of this suite)."""
    env = {**os.environ, "JAX_ENABLE_X64": "0"}
    result = subprocess.run(
        [sys.executable, drop_module.__file__, str(FLOAT32_WORLDS), str(DROP_SECONDS)], capture_output=True, text=True, env=env, timeout=600
    )
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["dtype"] == "float32"
    assert report["diverged"] == {"0.001": 0, "0.002": 0, "0.005": 0}


@pytest.mark.parametrize("dt", [0.005, 0.01])
def test_resting_humanoid_joints_are_still(resting_humanoid, dt, figures):
    """At dt 5 and 10 ms, from 5 to 12 s after the drop no joint of the median lying humanoid
    moves faster than 0.05 rad/s, nor any joint of half of them (joint damping, friction, limits
    and contacts do not chatter, and no limb creeps back from deep past its limit; at 10 and 20
    ms a light point that separates at the start of a step but pushes at its end keeps its
    force: :mod:`~jaxsim_like.simulation.separating_rows`). At 20 ms the drops settle later, and
    16 of them are too few to say how many lie still after 5 s (``benchmarks/resting.py``)."""
    states, run = resting_humanoid
    finite, _, _, speed = (np.asarray(x) for x in run(states, dt, int(round(REST_SECONDS / dt)), 5.0))
    figures(f"humanoid at rest, dt {dt * 1000:g} ms: fastest joint from 5 to 12 s, median of {RESTING_DROPS} drops", np.median(speed), "rad/s")
    figures(f"humanoid at rest, dt {dt * 1000:g} ms: drops still from 5 to 12 s, of {RESTING_DROPS}", int((speed < 0.05).sum()))
    assert finite.all()
    assert np.median(speed) < 0.05
    assert (speed < 0.05).sum() >= RESTING_DROPS / 2


def _ours_and_dense(model, state, tau, params):
    """The step's accelerations ``(6 + n,)`` at ``state`` (inertial velocities) and those of the dense
    linearised system (see :func:`test_one_pass_solves_the_linearised_system`), the points that
    touch and those the slots carry, the gain of the separating row (positive when it acts) and the
    step's contact forces ``(points, 3)``."""
    points = len(model.point_link)
    _, out = js.step(model, state, joint_torques=tau, params=params)
    kin = kinematics.kinematics(model, state)
    centres = model_step._point_positions(model, kin.G_H_L)
    if model.ring_rim is not None:  # the cylinders' rims turned towards the terrain, as the step turns them
        centres = model_step._rims_facing_terrain(model, params.terrain, kin.G_H_L, kin.origin, centres)
    depth, normal, W_p = terrain.touch(params.terrain, centres + kin.origin, model.point_radius)
    W_p = W_p - kin.origin  # the swept points' contact points
    W_v = model_step._point_velocities(model, kin.G_v, W_p)
    enabled = params.contact_enabled[np.asarray(model.point_link)]
    counts = params.contact_slots
    if params.plane_slots is not None and params.plane_slots.off == counts and terrain.is_plane(params.terrain):  # rim rings on their squares
        counts, enabled = params.plane_slots.counts, enabled & params.plane_slots.candidates(points)
    chosen = contact_slots.contact_slots(model, depth, enabled, counts)
    touching = chosen.mask((chosen.take(depth) > 0) & chosen.take(enabled))
    law = model_step._shared_law(model, params.contact, depth, chosen.scatter(touching.astype(jnp.int32), points) > 0)
    linear = contacts.implicit_contact_forces(
        law, depth, normal, chosen.take(W_v), state.contact_deformation, enabled, params.dt, model_step._moved_mass(model), chosen
    )

    def point_velocities(nu):
        moved = kinematics.kinematics(model, state.replace(base_velocity=nu[:6], joint_velocities=nu[6:]))
        return model_step._point_velocities(model, moved.G_v, W_p).reshape(-1)

    nu = jnp.concatenate([state.base_velocity, state.joint_velocities])
    J = jax.jacfwd(point_velocities)(nu)
    effects = joint_effects.joint_effects(
        model, state.joint_positions, state.joint_velocities, tau, limit_stiffness=params.limit_stiffness,
        limit_damping=params.limit_damping, friction_velocity=params.friction_velocity,
    )
    h = params.dt
    armature = jnp.concatenate([jnp.zeros(6), h * (effects.damping + h * effects.stiffness)])
    J_s = chosen.take(J.reshape(points, 3, -1))
    contact_terms = jnp.einsum("pia,pij,pjb->ab", J_s, linear.matrices, J_s)
    lhs = crba.mass_matrix(model, state) + h * contact_terms + jnp.diag(armature)
    generalized = jnp.concatenate([jnp.zeros(6), effects.torques - h * effects.stiffness * state.joint_velocities])
    forces = chosen.scatter(linear.step_forces, points)
    rhs = generalized - rnea.bias_forces(model, state, gravity=params.gravity) + J.T @ forces.reshape(-1)
    # The clipped slot whose unclipped law pushes most at the end of this solve, a soft row.
    predicted = (J @ (nu + h * jnp.linalg.solve(lhs, rhs))).reshape(points, 3)
    rows = contacts.separating_law(law, linear, depth, chosen.take(W_v), h).rows(linear.normal, chosen.take(predicted))
    k = jnp.argmax(rows.gain)
    row = linear.normal[k] @ J_s[k]
    lhs = lhs + h * rows.slope[k] * jnp.outer(row, row)
    rhs = rhs + row * (rows.target[k] - rows.slope[k] * row @ nu)
    ours = jnp.concatenate([out.base_acceleration, out.joint_accelerations])
    return ours, jnp.linalg.solve(lhs, rhs), depth > 0, out.in_contact, rows.gain[k], out.contact_forces


@pytest.mark.parametrize("slots", [None, "auto"])
def test_one_pass_solves_the_linearised_system(humanoid, slots):
    """The articulated-body pass with augmented inertias and armature gives the accelerations of the
    dense linear system ``(M + h J_s^T (W + h C) J_s + diag(0, h (D_j + h K_j))) a = tau_h - h(q, nu)
    + J_s^T (f - h C v)`` (float64, most of the 163 points touching, sliding and sticking, limits and
    friction), where ``J_s`` stacks the point Jacobians of the contact slots: with every point a
    slot, and with the default slots (fewer than the points that touch, the others carrying no
    force)."""
    rng = np.random.default_rng(0)
    n, points = humanoid.dofs, len(humanoid.point_link)
    state = js.State.build(
        humanoid,
        base_position=[0.0, 0.0, 0.05],
        joint_positions=rng.uniform(-0.5, 0.5, n),
        joint_velocities=rng.normal(0, 1, n),
        base_velocity=rng.normal(0, 0.5, 6),
        velocity_representation="inertial",
        contact_deformation=rng.normal(0, 1e-3, (points, 3)),
    )
    params = js.SimulationParams.build(humanoid, dt=0.005, contact_slots=slots)
    tau = jnp.asarray(rng.normal(0, 5, n))
    ours, dense, touching, carried, _, _ = (np.asarray(x) for x in jax.jit(lambda state, tau: _ours_and_dense(humanoid, state, tau, params))(state, tau))
    assert touching.sum() > 50
    assert (carried.sum() < touching.sum()) == (slots is not None)
    np.testing.assert_allclose(ours, dense, rtol=1e-9, atol=1e-9 * np.abs(dense).max())


def test_a_separating_point_that_would_push_at_the_end_of_the_step_keeps_its_force():
    """A 5 kg cube 1 mm deep leaving the ground at 6 cm/s, at dt 10 ms: its corners separate fast
    enough that their damping clips their forces to zero, but gravity turns the cube back within
    the step, so the unclipped law pushes at its end. The step adds the corner that would push
    hardest as a soft row (:mod:`~jaxsim_like.simulation.separating_rows`): its accelerations equal the dense
    system with that row, and no corner pulls."""
    cube = js.load_model(CUBE)
    points = jax.jit(lambda state: step_module.contact_point_positions(cube, state))(js.State.build(cube, base_position=jnp.zeros(3)))
    lowest = float(np.min(np.asarray(points)[:, 2]))
    state = js.State.build(cube, base_position=[0.0, 0.0, -lowest - 0.001], base_velocity=[0.0, 0.0, 0.06, 0.0, 0.0, 0.0], velocity_representation="inertial")
    params = js.SimulationParams.build(cube, dt=0.01)
    ours, dense, touching, _, gain, forces = (np.asarray(x) for x in jax.jit(lambda state: _ours_and_dense(cube, state, jnp.zeros(0), params))(state))
    assert touching.sum() == 4 and gain > 0
    np.testing.assert_allclose(ours, dense, rtol=1e-9, atol=1e-9 * np.abs(dense).max())
    assert np.all(forces[:, 2] >= 0.0)


CUBE = """<robot name="cube"><link name="cube">
  <inertial><mass value="5"/><inertia ixx="0.008333" iyy="0.008333" izz="0.008333" ixy="0" ixz="0" iyz="0"/></inertial>
  <collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision></link></robot>"""

SUPPORT = """<robot name="support_pendulum">
  <link name="support">
    <inertial><origin xyz="0 0 0.3"/><mass value="1000"/>
      <inertia ixx="30.83" iyy="30.21" izz="1.042" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0 0 0.3"/><geometry><box size="0.05 0.1 0.6"/></geometry></collision>
  </link>
  <joint name="hinge" type="continuous"><parent link="support"/><child link="arm"/>
    <origin xyz="0 0.08 0.55"/><axis xyz="0 1 0"/></joint>
  <link name="arm">
    <inertial><origin xyz="0 0 -0.25"/><mass value="1"/>
      <inertia ixx="0.0209" iyy="0.0209" izz="0.0001" ixy="0" ixz="0" iyz="0"/></inertial>
  </link>
</robot>"""


def test_cube_rests_on_its_weight_within_100_ms(sim, figures):
    """A 5 kg cube released 1 cm above the ground at the default 1 ms: 100 ms after touchdown its
    normal forces sum to m g within 0.5 %, and it rests at most 1 mm deep."""
    cube = js.load_model(CUBE)
    params = js.SimulationParams.build(cube)
    _, states, outputs = sim(cube, js.State.build(cube, base_position=[0.0, 0.0, 0.06]), params, steps=500)
    normal = np.asarray(outputs.contact_forces)[:, :, 2].sum(axis=1)
    touchdown = int(np.argmax(np.asarray(outputs.in_contact).any(axis=1)))
    weight = 5.0 * 9.81
    figures("5 kg cube: sum f_n / (m g) - 1, 100 ms after touchdown", normal[touchdown + 100] / weight - 1)
    figures("5 kg cube: depth at rest", float(np.asarray(outputs.penetration)[-1].max()), "m")
    assert abs(normal[touchdown + 100] / weight - 1) < 0.005
    assert np.abs(normal[touchdown + 100 :] / weight - 1).max() < 0.005
    assert 0 < np.asarray(outputs.penetration)[-1].max() <= 0.001 + 1e-12


SUPPORT_CHUNK = 2000


@pytest.mark.parametrize("dt", [0.001, 0.005])
def test_heavy_slender_support_stands(sim, dt, figures):
    """A pendulum hung on a 1000 kg support of 5 x 10 x 60 cm standing on the ground (a floating
    base on a small footprint): 10 s later the support is tilted below 1 degree (the explicit step
    rocked it to NaN within 2.1 s)."""
    model = js.load_model(SUPPORT)
    params = js.SimulationParams.build(model, dt=dt)
    state = js.State.build(model, base_position=[0.0, 0.0, 0.0])
    quaternions, finite = [], []
    for _ in range(int(round(10.0 / dt)) // SUPPORT_CHUNK):  # one compiled rollout for both step sizes
        state, states, outputs = sim(model, state, params, steps=SUPPORT_CHUNK)
        quaternions.append(np.asarray(states.base_quaternion))
        finite.append(np.asarray(outputs.finite))
    quaternions = np.concatenate(quaternions)
    tilt = np.degrees(2 * np.arccos(np.clip(np.abs(quaternions[:, 0]) / np.linalg.norm(quaternions, axis=1), 0, 1)))
    figures(f"1000 kg support, dt {dt * 1000:g} ms: largest tilt over 10 s", tilt.max(), "deg")
    assert len(quaternions) == int(round(10.0 / dt)) and np.concatenate(finite).all()
    assert tilt.max() < 1.0


def test_divergence_is_reported(box, sim):
    """``StepOutput.finite`` flags the first step whose result is not finite, and
    ``first_nonfinite_step`` finds it per world (-1 where every step is finite)."""
    params = js.SimulationParams.build(box)
    state = js.State.build(box, base_position=[0.0, 0.0, 0.2])
    _, _, outputs = sim(box, state, params, steps=20, link_wrenches=np.zeros((20, 1, 6)))
    assert np.asarray(outputs.finite).all()
    wrenches = np.zeros((20, 1, 6))
    wrenches[7, 0, 2] = np.inf
    _, states, outputs = sim(box, state, params, steps=20, link_wrenches=wrenches)
    finite = np.asarray(outputs.finite)
    assert finite[:7].all() and not finite[7:].any()
    assert not np.isfinite(np.asarray(states.base_velocity)[7]).all()
    flags = jnp.stack([outputs.finite, jnp.ones(20, bool)])
    assert np.asarray(first_nonfinite_step(flags)).tolist() == [7, -1]
