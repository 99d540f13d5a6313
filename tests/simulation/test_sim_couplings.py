"""Joint couplings (mimic joints) enforced in the step (issue 30): the rules hold through motion
at dt 1, 2 and 5 ms with every integrator, on a two-finger model written here and on the Panda's
and Talos's grippers of example-robot-data, and while fingers squeeze a cube of another model;
the coupled pair moves as its reduced one-degree system and conserves energy; gradients through
a coupling equal central differences."""

from __future__ import annotations

import functools
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from collision_worlds import cube

import jaxsim_like as js
from jaxsim_like.simulation import control
from jaxsim_like.simulation.constraint_rows import solve_spd
from jaxsim_like.simulation.world import ModelInputs, WorldModel, world_step

# Two rods hanging from hinges about x on a palm welded to the world (loaded with a fixed base); 'right' mimics 'left': q_r = -0.5 q_l + 0.1.
MASS, LENGTH, I_COM = (0.3, 0.2), (0.12, 0.08), (4e-4, 1e-4)
MULTIPLIER, OFFSET = -0.5, 0.1
FINGERS = f"""<robot name="fingers">
  <link name="palm"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="left" type="continuous"><parent link="palm"/><child link="left_finger"/>
    <origin xyz="0 0.04 1"/><axis xyz="1 0 0"/></joint>
  <link name="left_finger"><inertial><origin xyz="0 0 -{LENGTH[0]}"/><mass value="{MASS[0]}"/>
    <inertia ixx="{I_COM[0]}" iyy="{I_COM[0]}" izz="1e-5" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="right" type="continuous"><parent link="palm"/><child link="right_finger"/>
    <origin xyz="0 -0.04 1"/><axis xyz="1 0 0"/><mimic joint="left" multiplier="{MULTIPLIER}" offset="{OFFSET}"/></joint>
  <link name="right_finger"><inertial><origin xyz="0 0 -{LENGTH[1]}"/><mass value="{MASS[1]}"/>
    <inertia ixx="{I_COM[1]}" iyy="{I_COM[1]}" izz="1e-5" ixy="0" ixz="0" iyz="0"/></inertial></link>
</robot>"""
G = js.dynamics.kinematics.STANDARD_GRAVITY
CHUNK = 200  # steps per compiled call: 2 s is 10, 5 or 2 calls at dt 1, 2 and 5 ms
DTS = [0.001, 0.002, 0.005]


@pytest.fixture(scope="module")
def fingers() -> js.Model:
    model = js.load_model(FINGERS, floating_base=False)
    assert model.link_mass.dtype == np.float64
    assert model.couplings.follower == (1,) and model.couplings.leader == (0,)
    return model


@functools.partial(jax.jit, static_argnames="steps")
def _world_run(world: WorldModel, state, inputs, *, steps: int):
    """``steps`` world steps; the final state and model 0's joint positions after each step."""

    def one(current, _):
        current, _ = world_step(world, current, inputs)
        return current, current.states[0].joint_positions

    return jax.lax.scan(one, state, None, length=steps)


def _pd_run(model: js.Model, dt: float, q0, targets, gains, integrator: str = "implicit_euler") -> np.ndarray:
    """2 s under position PIDs (every joint, follower included) whose targets switch between the
    two rows of ``targets`` every ``CHUNK`` steps (0.2, 0.4 and 1 s at dt 1, 2 and 5 ms); the
    joint positions ``(T, n)`` after each step."""
    world = WorldModel.build([model], dt=dt, integrator=integrator, collisions=False)
    state = world.initial_state([js.State.build(model).replace(joint_positions=jnp.asarray(q0, float))])
    table = control.default_table(np.full(model.dofs, 1e3), np.full(model.dofs, 10.0))
    table[:, control.MODE] = int(control.JointControlMode.position)
    table[:, control.KP], table[:, control.KI], table[:, control.KD] = gains[0], 0.0, gains[1]
    positions = []
    for k in range(int(round(2.0 / dt)) // CHUNK):
        table[:, control.POSITION_TARGET] = targets[k % 2]
        inputs = [ModelInputs(table=jnp.asarray(table), period=jnp.asarray(0.0))]
        state, q = _world_run(world, state, inputs, steps=CHUNK)
        positions.append(np.asarray(q))
    return np.concatenate(positions)


def _torque_run(sim, model: js.Model, state: js.State, params: js.SimulationParams, torques: np.ndarray) -> np.ndarray:
    """The joint positions ``(T, n)`` after each step under ``torques (T, n)``, ``T`` a multiple
    of ``CHUNK`` (one compilation per model and integrator, whatever the step size)."""
    positions = []
    for chunk in np.split(torques, len(torques) // CHUNK):
        state, states, _ = sim(model, state, params, steps=CHUNK, torques=chunk)
        positions.append(np.asarray(states.joint_positions))
    return np.concatenate(positions)


@jax.jit
def _largest_violation(model: js.Model, positions: jax.Array) -> jax.Array:
    return jnp.abs(jax.vmap(model.couplings.violation)(positions)).max()


def _rule_error(model: js.Model, positions: np.ndarray) -> float:
    """The largest violation [rad or m] of any coupling rule over ``positions (T, n)`` (one
    program per model, not op by op)."""
    return float(_largest_violation(model, jnp.asarray(positions)))


@pytest.mark.parametrize("integrator", ["implicit_euler", "semi_implicit_euler", "rk4"])
@pytest.mark.parametrize("dt", DTS)
def test_mimic_rule_holds_under_a_leader_torque(fingers, sim, figures, dt, integrator):
    """A torque on the leader swinging the pair for 2 s: the follower keeps q_r = -0.5 q_l + 0.1
    within 1e-4 rad at every step (from a state off the rule by nothing)."""
    steps = int(round(2.0 / dt))
    time = dt * np.arange(steps)
    torques = np.stack([0.3 * np.sin(2 * np.pi * time), np.zeros(steps)], axis=1)
    state = js.State.build(fingers).replace(joint_positions=jnp.array([0.0, OFFSET]))
    params = js.SimulationParams.build(fingers, dt=dt, integrator=integrator)
    q = _torque_run(sim, fingers, state, params, torques)
    assert np.ptp(q[:, 0]) > 1.0  # the pair swings
    error = figures(f"fingers, torque, {integrator}, dt {dt}: max |rule error| [rad]", _rule_error(fingers, q))
    assert error < 1e-4


@pytest.mark.parametrize("dt", DTS)
def test_mimic_rule_holds_under_pd_targets_and_the_follower_target_is_ignored(fingers, dt):
    """Position PIDs on both joints, the follower's target off the rule: the leader reaches its
    targets, the follower keeps the rule (its controller is idle)."""
    targets = np.array([[0.8, -2.0], [-0.4, 2.0]])
    q = _pd_run(fingers, dt, [0.0, OFFSET], targets, (20.0, 1.0))
    assert _rule_error(fingers, q) < 1e-4
    at_switch = q[CHUNK - 1 :: CHUNK, 0]  # the leader before each switch: its target, less gravity's sag
    assert np.abs(at_switch[0::2] - 0.8).max() < 0.05 and np.abs(at_switch[1::2] + 0.4).max() < 0.05


def test_the_rows_effective_mass_solve_equals_a_dense_solve():
    """The unrolled Cholesky of the coupling rows' ``c x c`` system equals numpy's solve."""
    rng = np.random.default_rng(0)
    for size in (1, 2, 6):
        B = rng.normal(size=(size, size))
        A, b = B @ B.T + 0.1 * np.eye(size), rng.normal(size=size)
        np.testing.assert_allclose(jax.jit(solve_spd)(jnp.asarray(A), jnp.asarray(b)), np.linalg.solve(A, b), rtol=1e-10, atol=1e-12)


def test_a_violation_decays_with_the_time_constant(fingers, sim):
    """A state 0.05 rad off the rule returns to it as the critically damped reference of time
    constant 0.02 s: within 1 % of the violation after 0.2 s (10 time constants), no overshoot."""
    state = js.State.build(fingers).replace(joint_positions=jnp.array([0.0, OFFSET + 0.05]))
    params = js.SimulationParams.build(fingers, dt=0.001)
    _, states, _ = sim(fingers, state, params, steps=CHUNK)
    violation = np.asarray(jax.vmap(fingers.couplings.violation)(states.joint_positions))[:, 0]
    assert abs(violation[-1]) < 5e-4 and violation.min() > -1e-6
    assert violation[19] == pytest.approx(0.05 * 2 * np.exp(-1), rel=0.1)  # (1 + t/tau) e^(-t/tau) at t = tau


def _reduced_pendulum(q0: float, dt: float, steps: int) -> np.ndarray:
    """The leader's angle ``(steps,)`` of the pair reduced to its one degree of freedom
    (``q_r = m q_l + o``; the inertia about each hinge ``I + m L^2``), by RK4 at ``dt / 5``."""
    inertia = [I_COM[k] + MASS[k] * LENGTH[k] ** 2 for k in range(2)]
    reduced = inertia[0] + MULTIPLIER**2 * inertia[1]

    def rates(x):
        q, qd = x
        torque = -MASS[0] * G * LENGTH[0] * np.sin(q) - MULTIPLIER * MASS[1] * G * LENGTH[1] * np.sin(MULTIPLIER * q + OFFSET)
        return np.array([qd, torque / reduced])

    h, x, out = dt / 5, np.array([q0, 0.0]), []
    for _ in range(steps):
        for _ in range(5):
            k1 = rates(x)
            k2 = rates(x + h / 2 * k1)
            k3 = rates(x + h / 2 * k2)
            k4 = rates(x + h * k3)
            x = x + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        out.append(x[0])
    return np.array(out)


def test_coupled_pendulums_move_as_their_reduced_system_and_conserve_energy(fingers, sim, figures):
    """Released 1.2 rad from rest, no friction, dt 1 ms, 2 s: the leader's angle equals the
    reduced one-degree system's within 1e-2 rad, and the energy stays within 1 % of the swing's."""
    dt, steps, q0 = 0.001, 2000, 1.2
    state = js.State.build(fingers).replace(joint_positions=jnp.array([q0, MULTIPLIER * q0 + OFFSET]))
    params = js.SimulationParams.build(fingers, dt=dt)
    q = _torque_run(sim, fingers, state, params, np.zeros((steps, 2)))
    reference = _reduced_pendulum(q0, dt, steps)
    deviation = figures("coupled pendulums vs reduced system: max |q_l error| [rad]", float(np.abs(q[:, 0] - reference).max()))
    assert deviation < 1e-2
    # The velocities from the positions' differences: semi-implicit Euler's end-of-step velocities.
    qd = np.diff(np.concatenate([np.asarray(state.joint_positions)[None], q]), axis=0) / dt
    energy = np.asarray(jax.jit(jax.vmap(
        lambda q, qd: js.dynamics.centroidal.mechanical_energy(fingers, state.replace(joint_positions=q, joint_velocities=qd))
    ))(jnp.asarray(q), jnp.asarray(qd)))
    energy_at = jax.jit(lambda s: js.dynamics.centroidal.mechanical_energy(fingers, s))  # one program, not op by op
    bottom = energy_at(js.State.build(fingers).replace(joint_positions=jnp.array([0.0, OFFSET])))
    initial = energy_at(state)
    swing = float(initial - bottom)
    drift = figures("coupled pendulums: max |energy drift| / swing energy", float(np.abs(energy - initial).max()) / swing)
    assert drift < 0.01


def test_gradient_of_the_follower_through_the_coupling(fingers):
    """d(final follower angle)/d(leader torque) and d/d(multiplier) over 0.2 s at dt 5 ms:
    reverse mode equals central differences (the multiplier is a traced parameter), and the
    torque's is the reduced system's sign (the follower turns by -0.5 times the leader)."""
    params = js.SimulationParams.build(fingers, dt=0.005)
    state = js.State.build(fingers).replace(joint_positions=jnp.array([0.2, MULTIPLIER * 0.2 + OFFSET]))

    @jax.jit
    def follower(torque, multiplier):
        model = fingers.replace(couplings=fingers.couplings.replace(multiplier=jnp.reshape(multiplier, (1,))))
        final, _ = js.rollout(model, state, jnp.zeros((40, 2)).at[:, 0].set(torque), params=params)
        return final.joint_positions[1]

    def value(*args):
        """The value from the forward program that ``jax.grad`` compiled (its residuals unused)."""
        return jax.vjp(follower, *args)[0]

    point, eps = (0.1, MULTIPLIER), 1e-5
    gradient = jax.grad(follower, argnums=(0, 1))(*point)
    central = (
        (value(point[0] + eps, point[1]) - value(point[0] - eps, point[1])) / (2 * eps),
        (value(point[0], point[1] + eps) - value(point[0], point[1] - eps)) / (2 * eps),
    )
    assert float(gradient[0]) < 0
    for ours, reference in zip(gradient, central):
        assert float(ours) == pytest.approx(float(reference), rel=1e-6, abs=1e-9)


# example-robot-data is a cmeel package: its files lie under site-packages/cmeel.prefix.
def _erd(relative: str) -> Path:
    try:
        import cmeel
    except ImportError:
        pytest.skip("example-robot-data is not installed")
    path = Path(cmeel.__file__).resolve().parents[1] / "cmeel.prefix" / "share" / "example-robot-data" / "robots" / relative
    if not path.exists():
        pytest.skip("example-robot-data is not installed")
    return path


@pytest.fixture(scope="module")
def panda() -> js.Model:
    """The Panda welded at the origin: 7 arm joints and two fingers, the second mimicking the first."""
    model = js.load_model(_erd("panda_description/urdf/panda.urdf"), floating_base=False)
    assert model.couplings.rows == 1
    return model


@pytest.fixture(scope="module")
def talos_gripper() -> js.Model:
    """Talos's left gripper (``talos_full_v2``: the leader and six revolute mimic joints), the
    rest of the robot locked, welded 2 m above the ground; without the leader's 1 N m Coulomb
    friction, which equals its effort limit (the motor could not move it)."""
    model = js.load_model(_erd("talos_data/robots/talos_full_v2.urdf"), floating_base=False)
    model = js.reduce(model, [name for name in model.joint_names if name.startswith("gripper_left")])
    assert model.couplings.rows == 6
    return model.replace(base_transform=model.base_transform.at[2, 3].add(2.0), joint_friction=0 * model.joint_friction)


@pytest.mark.parametrize("dt", DTS)
def test_panda_fingers_keep_their_mimic_while_the_arm_turns(panda, dt, figures):
    """The arm's PIDs turn joint 1 by +-0.5 rad and the first finger opens and closes every
    ``CHUNK`` steps (its follower's own target off the rule): the fingers stay equal within 1e-4 m."""
    ready = np.array([0, -0.785, 0, -2.356, 0, 1.571, 0.785, 0.02, 0.02])
    opened, closed = ready.copy(), ready.copy()
    opened[[0, 7, 8]], closed[[0, 7, 8]] = [0.5, 0.035, 0.0], [-0.5, 0.005, 0.04]
    gains = (np.r_[np.full(7, 300.0), 100.0, 100.0], np.r_[np.full(7, 20.0), 5.0, 5.0])
    q = _pd_run(panda, dt, ready, [opened, closed], gains)
    assert np.ptp(q[:, 7]) > 0.02 and np.ptp(q[:, 0]) > 0.5
    assert figures(f"Panda fingers, dt {dt}: max |rule error| [m]", _rule_error(panda, q)) < 1e-4


@pytest.mark.parametrize("dt", DTS)
def test_talos_gripper_keeps_its_six_mimics(talos_gripper, dt, figures):
    """The gripper's leader driven between -0.8 and -0.1 rad by its PID, switching every
    ``CHUNK`` steps: its six followers stay on their rules within 1e-4 rad."""
    lead = talos_gripper.joint_names.index("gripper_left_joint")
    closed, opened = np.zeros(talos_gripper.dofs), np.zeros(talos_gripper.dofs)
    closed[lead], opened[lead] = -0.8, -0.1
    q = _pd_run(talos_gripper, dt, np.zeros(talos_gripper.dofs), [closed, opened], (np.full(7, 20.0), np.full(7, 0.5)))
    assert np.ptp(q[:, lead]) > 0.3
    assert figures(f"Talos gripper, dt {dt}: max |rule error| [rad]", _rule_error(talos_gripper, q)) < 1e-4


# A gripper on the ground whose fingers turn about z towards each other ('right' = -'left'),
# and a 4 cm, 0.1 kg cube between them.
SQUEEZE = """<robot name="squeezer">
  <link name="palm"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="left" type="continuous"><parent link="palm"/><child link="left_finger"/><origin xyz="0 0.06 0.025"/><axis xyz="0 0 1"/></joint>
  <link name="left_finger"><inertial><origin xyz="0.05 0 0"/><mass value="0.05"/><inertia ixx="1e-5" iyy="5e-5" izz="5e-5" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0.05 0 0"/><geometry><box size="0.1 0.01 0.04"/></geometry></collision></link>
  <joint name="right" type="continuous"><parent link="palm"/><child link="right_finger"/><origin xyz="0 -0.06 0.025"/><axis xyz="0 0 1"/>
    <mimic joint="left" multiplier="-1"/></joint>
  <link name="right_finger"><inertial><origin xyz="0.05 0 0"/><mass value="0.05"/><inertia ixx="1e-5" iyy="5e-5" izz="5e-5" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0.05 0 0"/><geometry><box size="0.1 0.01 0.04"/></geometry></collision></link>
</robot>"""


def test_fingers_squeezing_a_cube_keep_their_rule_in_the_contact_sweeps():
    """The leader closes the fingers on a cube of another model (contacts between links, solved
    by the block Gauss-Seidel sweeps with each model's projection): the rule holds within 1e-4
    rad at every step, the fingers stop on the cube's corners at the angle its width leaves, and
    the cube stays centred between them."""
    gripper = js.load_model(SQUEEZE, floating_base=False)
    block = cube("block", mass=0.1, side=0.04)
    world = WorldModel.build([gripper, block], dt=0.002)
    start = js.State.build(block).replace(base_position=jnp.array([0.07, 0.0, 0.0201]))
    state = world.initial_state([js.State.build(gripper), start])
    inputs = [ModelInputs(joint_torques=jnp.array([-0.2, 0.0])), None]
    positions = []
    for _ in range(3):
        state, q = _world_run(world, state, inputs, steps=CHUNK)
        positions.append(np.asarray(q))
    q = np.concatenate(positions)
    assert _rule_error(gripper, q) < 1e-4
    # Each finger's inner face (5 mm off its axis, 6 cm from the centre line) rests on the cube's
    # far corner (9 cm out, 2 cm off the line): 0.09 tan(a) + 0.005 / cos(a) = 0.04.
    closed = 0.0
    for _ in range(50):
        closed = np.arctan((0.04 - 0.005 / np.cos(closed)) / 0.09)
    assert q[-1, 0] == pytest.approx(-closed, abs=0.01)
    assert abs(float(state.states[1].base_position[1])) < 2e-3
