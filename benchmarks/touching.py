"""Bodies touching bodies, against MuJoCo C and MJX: what each keeps still, and simulated seconds per wall second.

Scenes (float64 everywhere, MJX included; one step size each; the same masses, sizes, friction
and controls in every library):

- ``ramp``: a 1 kg, 10 cm box on a 20 degree ramp of another model (static in MuJoCo), friction 0.8;
- ``stack``: five 1 kg, 10 cm boxes stacked on the ground, aligned;
- ``lean``: the same five boxes turning by 3 cm a level (a stable lean, 2 cm of margin or more);
- ``grasp``: the two-finger gripper of ``tests/simulation/test_bodies_touching.py`` (a 1 kg palm on
  a lift, 0.1 kg box fingers squeezing with 20 N each) takes a 0.2 kg, 5 cm cube off the ground,
  friction 1, at 2 ms: it squeezes 0.3 s, lifts 10 cm in 1 s (minimum jerk, a PD of 20000 N/m and
  400 N s/m with the weight compensated), settles 0.7 s and holds.

For each scene and library: the largest displacement of a box after the scene has settled (0.5 s;
the grasp: 2 s) to the end of the run, ``drift`` (the grasp: of the cube relative to the palm,
its slip), and the simulated seconds per wall second of one world and of ``--batch`` worlds over
the settled part (jaxsim_like: ``jit(vmap(world_rollout))``; MJX: ``jit(vmap(scan(mjx.step)))``
with MuJoCo's default solver options; both after compilation and warm-up, the one-world compile
time apart; MuJoCo C: ``mujoco.rollout`` on a thread pool of every core), medians of
``--repeats`` calls, each waited for with ``block_until_ready``.

    python -m benchmarks.touching [--scenes ramp,stack,lean,grasp] [--libraries ours,mujoco,mjx] [--seconds 10] [--batch 64] [--repeats 3] [--json results/touching.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

from benchmarks import timing  # noqa: F401  (applies the XLA CPU settings first)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

jax.config.update("jax_enable_x64", True)

import jaxsim_like as js  # noqa: E402
from jaxsim_like.dynamics.kinematics import STANDARD_GRAVITY  # noqa: E402
from jaxsim_like.simulation import control  # noqa: E402
from jaxsim_like.simulation.world import ModelInputs, WorldModel, world_rollout  # noqa: E402

TILT = np.deg2rad(20.0)
LEAN = [(0, 0), (1, 0), (1, 1), (0, 1), (0, 0)]
SCENES = {"ramp": 0.005, "stack": 0.005, "lean": 0.005, "grasp": 0.002}
SETTLED = {"ramp": 0.5, "stack": 0.5, "lean": 0.5, "grasp": 2.0}  # [s]: drift and rates are taken after this
CHUNK = 0.5  # [s]: the simulated time of one call (the positions are read after each)

# The grasp (lengths [m], masses [kg], forces [N]): the gripper's fingers start 0.2 mm off the cube.
SQUEEZE, LIFT, LIFT_KP, LIFT_KD, LIFTED_MASS = 20.0, 0.1, 20000.0, 400.0, 1.4
SQUEEZING, LIFTING = 0.3, 1.0  # [s]: the squeeze alone, then the lift
FINGER_START = 0.0098
GRIPPER = """<robot name="gripper">
  <link name="world"/>
  <joint name="lift" type="prismatic"><parent link="world"/><child link="palm"/><origin xyz="0 0 0.025"/>
    <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1000" velocity="5"/></joint>
  <link name="palm"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="left" type="prismatic"><parent link="palm"/><child link="left_finger"/><origin xyz="-0.045 0 0"/>
    <axis xyz="1 0 0"/><limit lower="-0.05" upper="0.05" effort="100" velocity="1"/></joint>
  <link name="left_finger"><inertial><mass value="0.1"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><box size="0.02 0.04 0.04"/></geometry></collision></link>
  <joint name="right" type="prismatic"><parent link="palm"/><child link="right_finger"/><origin xyz="0.045 0 0"/>
    <axis xyz="-1 0 0"/><limit lower="-0.05" upper="0.05" effort="100" velocity="1"/></joint>
  <link name="right_finger"><inertial><mass value="0.1"/><inertia ixx="1e-4" iyy="1e-4" izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><geometry><box size="0.02 0.04 0.04"/></geometry></collision></link>
</robot>"""


def _box_urdf(name: str, side: float, mass: float) -> str:
    inertia = mass * side**2 / 6
    return (f'<robot name="{name}"><link name="link"><inertial><mass value="{mass}"/><inertia ixx="{inertia}" iyy="{inertia}"'
            f' izz="{inertia}" ixy="0" ixz="0" iyz="0"/></inertial><collision><geometry><box size="{side} {side} {side}"/>'
            "</geometry></collision></link></robot>")


def _box_positions(scene: str) -> list[np.ndarray]:
    """The start positions [m] of the free boxes of ``scene`` (just touching)."""
    if scene == "grasp":
        return [np.array([0.0, 0.0, 0.0248])]
    if scene == "ramp":
        normal = np.array([-np.sin(TILT), 0.0, np.cos(TILT)])  # the ramp turned by -TILT about y
        return [np.array([0.0, 0.0, 1.0]) + (0.15 - 2e-4) * normal]
    offset = 0.03 if scene == "lean" else 0.0
    return [np.array([LEAN[i][0] * offset, LEAN[i][1] * offset, 0.05 + 0.1 * i - 2e-4 * (i + 1)]) for i in range(5)]


def _lift_reference(t: np.ndarray) -> np.ndarray:
    """The grasp's lift target [m] at times ``t`` [s]: the squeeze alone, then a minimum-jerk lift."""
    return control.minimum_jerk(0.0, LIFT, SQUEEZING, LIFTING, t, np)


def _mujoco_controls(scene: str, dt: float, start: int, steps: int) -> np.ndarray:
    """``(steps, nu)``: MuJoCo's controls of steps ``start`` to ``start + steps``. The grasp's lift
    actuator pushes ``KP (ctrl - q) - KD q_dot`` plus the weight: its control is the reference at the
    end of the step plus ``KD / KP`` times its rate, as our PID acts on the error and its rate."""
    if scene != "grasp":
        return np.zeros((steps, 0))
    t = (np.arange(start, start + steps) + 1) * dt
    rate = (_lift_reference(t + 1e-6) - _lift_reference(t - 1e-6)) / 2e-6
    lift = _lift_reference(t) + LIFT_KD / LIFT_KP * rate
    return np.stack([lift, np.full(steps, SQUEEZE), np.full(steps, SQUEEZE)], axis=1)


def _held(scene: str, positions: np.ndarray, lift: np.ndarray | float = 0.0) -> np.ndarray:
    """``(..., B, 3)``: what must stay still, from the free boxes' ``positions (..., B, 3)`` [m]: the
    boxes, or the grasped cube relative to the palm at ``lift`` [m]."""
    if scene != "grasp":
        return positions
    return positions - np.stack([np.zeros_like(lift), np.zeros_like(lift), lift], axis=-1)[..., None, :]


def _drift(held: np.ndarray) -> float:
    """[m]: the largest displacement from the first of ``held (K, B, 3)``."""
    return float(np.linalg.norm(held - held[0], axis=-1).max())


def _rates(calls: dict[int, tuple], seconds: float, repeats: int) -> dict[str, float]:
    """Simulated seconds per wall second of each ``{worlds: (function, argument)}`` call, each
    call simulating ``seconds`` per world: median of ``repeats`` calls after a warm-up."""
    rates = {}
    for size, (call, arg) in calls.items():
        timing.block(call(arg))
        samples = []
        for _ in range(repeats):
            start = time.perf_counter()
            timing.block(call(arg))
            samples.append(time.perf_counter() - start)
        rates[str(size)] = size * seconds / statistics.median(samples)
    return rates


def _our_world(scene: str, dt: float):
    """The world of ``scene``, its initial state, its (constant) inputs and the index of its first free box."""
    quaternion = np.array([np.cos(TILT / 2), 0.0, -np.sin(TILT / 2), 0.0])
    boxes = [js.load_model(_box_urdf(f"box{i}", 0.1, 1.0)) for i in range(len(_box_positions(scene)))]
    if scene == "ramp":
        ramp = js.load_model(_box_urdf("ramp", 0.2, 10.0).replace('size="0.2 0.2 0.2"', 'size="2 1 0.2"'), floating_base=False)
        states = [js.State.build(ramp, base_position=[0.0, 0.0, 1.0], base_quaternion=quaternion)]
        states += [js.State.build(boxes[0], base_position=_box_positions(scene)[0], base_quaternion=quaternion)]
        world = WorldModel.build([ramp, *boxes], dt=dt, terrain=js.Terrain.plane(-5.0), friction=0.8)
        return world, world.initial_state(states), None, 1
    if scene == "grasp":
        gripper = js.load_model(GRIPPER, floating_base=False)
        cube = js.load_model(_box_urdf("cube", 0.05, 0.2))
        table = control.default_table(np.asarray(gripper.effort_limit), np.asarray(gripper.velocity_limit))
        table[0, control.MODE] = int(control.JointControlMode.position_interpolated)
        table[0, control.KP], table[0, control.KI], table[0, control.KD] = LIFT_KP, 0.0, LIFT_KD
        table[0, control.POSITION_TARGET], table[0, control.START_TIME], table[0, control.DURATION] = LIFT, SQUEEZING, LIFTING
        table[1:, control.MODE] = int(control.JointControlMode.force)
        table[1:, control.FORCE_TARGET] = SQUEEZE
        weight = jnp.asarray([LIFTED_MASS * 9.81, 0.0, 0.0])
        inputs = [ModelInputs(joint_torques=weight, table=jnp.asarray(table), period=jnp.asarray(0.0)), None]
        states = [js.State.build(gripper, joint_positions=[0.0, FINGER_START, FINGER_START])]
        states += [js.State.build(cube, base_position=_box_positions(scene)[0])]
        world = WorldModel.build([gripper, cube], dt=dt, friction=1.0)
        return world, world.initial_state(states), inputs, 1
    states = [js.State.build(b, base_position=p) for b, p in zip(boxes, _box_positions(scene))]
    world = WorldModel.build(boxes, dt=dt)
    return world, world.initial_state(states), None, 0


def ours(scene: str, dt: float, seconds: float, batch: int, repeats: int) -> dict:
    world, state, inputs, first = _our_world(scene, dt)
    chunk = int(round(CHUNK / dt))
    step = jax.jit(lambda s: world_rollout(world, s, inputs, chunk)[0])
    start = time.perf_counter()
    timing.block(step(state))
    compile_seconds = time.perf_counter() - start
    for _ in range(int(round(SETTLED[scene] / CHUNK))):
        state = step(state)
    held = []
    for _ in range(int(round(seconds / CHUNK)) + 1):
        positions = np.stack([np.asarray(s.base_position) for s in state.states[first:]])
        held.append(_held(scene, positions, float(state.states[0].joint_positions[0]) if scene == "grasp" else 0.0))
        state = step(state)
    batched = jax.jit(jax.vmap(lambda s: world_rollout(world, s, inputs, chunk)[0]))
    many = jax.tree.map(lambda x: jnp.broadcast_to(x, (batch,) + x.shape), state)
    rates = _rates({1: (step, state), batch: (batched, many)}, chunk * dt, repeats)
    return {"library": "jaxsim_like", "scene": scene, "dt": dt, "drift_mm": 1e3 * _drift(np.stack(held)), "rates": rates, "compile s": compile_seconds}


def _mjcf(scene: str, dt: float) -> str:
    """The scene in MJCF: our gravity, friction ``mu`` (torsional 0.005, rolling 0.0001) on every geom."""
    mu = {"ramp": 0.8, "grasp": 1.0}.get(scene, 0.5)
    friction = f'friction="{mu} 0.005 0.0001"'
    if scene == "grasp":
        side = 0.025
        inertia = 'diaginertia="1e-4 1e-4 1e-4"'
        bodies = (f'<body name="palm" pos="0 0 0.025"><joint name="lift" type="slide" axis="0 0 1"/>'
                  '<inertial pos="0 0 0" mass="1" diaginertia="0.01 0.01 0.01"/>'
                  f'<body pos="-0.045 0 0"><joint name="left" type="slide" axis="1 0 0"/><inertial pos="0 0 0" mass="0.1" {inertia}/>'
                  f'<geom type="box" size=".01 .02 .02" {friction}/></body>'
                  f'<body pos="0.045 0 0"><joint name="right" type="slide" axis="-1 0 0"/><inertial pos="0 0 0" mass="0.1" {inertia}/>'
                  f'<geom type="box" size=".01 .02 .02" {friction}/></body></body>')
        p = _box_positions(scene)[0]
        bodies += (f'<body pos="{p[0]} {p[1]} {p[2]}"><freejoint/><geom type="box" size="{side} {side} {side}" mass="0.2" {friction}/>'
                   "</body>")
        actuators = (f'<actuator><general joint="lift" gainprm="{LIFT_KP}" biastype="affine" '
                     f'biasprm="{LIFTED_MASS * 9.81} {-LIFT_KP} {-LIFT_KD}"/><motor joint="left"/><motor joint="right"/></actuator>')
        return (f'<mujoco><option timestep="{dt}" gravity="0 0 {-STANDARD_GRAVITY}"/><worldbody><geom type="plane" size="5 5 .1" {friction}/>{bodies}</worldbody>'
                f"{actuators}</mujoco>")
    turned = ' quat="{} 0 {} 0"'.format(np.cos(TILT / 2), -np.sin(TILT / 2)) if scene == "ramp" else ""
    boxes = "".join(
        f'<body pos="{p[0]} {p[1]} {p[2]}"{turned}><freejoint/><geom type="box" size=".05 .05 .05" mass="1" {friction}/></body>'
        for p in _box_positions(scene)
    )
    ramp = f'<geom type="box" size="1 .5 .1" pos="0 0 1"{turned} {friction}/>' if scene == "ramp" else ""
    floor = '<geom type="plane" size="5 5 .1" pos="0 0 {}" {}/>'.format(-5.0 if scene == "ramp" else 0.0, friction)
    return f'<mujoco><option timestep="{dt}" gravity="0 0 {-STANDARD_GRAVITY}"/><worldbody>{floor}{ramp}{boxes}</worldbody></mujoco>'


def _mujoco_model(scene: str, dt: float):
    """MuJoCo's model of ``scene``, its data at the start and the index in ``qpos`` of the first free box."""
    import mujoco

    model = mujoco.MjModel.from_xml_string(_mjcf(scene, dt))
    data = mujoco.MjData(model)
    if scene == "grasp":
        data.qpos[1:3] = FINGER_START
        return model, data, 3
    return model, data, 0


def _mujoco_held(scene: str, qpos: np.ndarray, first: int) -> np.ndarray:
    """``(..., B, 3)``: :func:`_held` of MuJoCo's ``qpos (..., nq)``."""
    boxes = len(_box_positions(scene))
    positions = np.stack([qpos[..., first + 7 * b : first + 7 * b + 3] for b in range(boxes)], axis=-2)
    return _held(scene, positions, qpos[..., 0] if scene == "grasp" else 0.0)


def mujoco_c(scene: str, dt: float, seconds: float, batch: int, repeats: int) -> dict:
    import mujoco
    from mujoco import rollout

    model, data, first = _mujoco_model(scene, dt)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    initial = np.empty(mujoco.mj_stateSize(model, spec))
    mujoco.mj_getState(model, data, initial, spec)
    threads = len(os.sched_getaffinity(0))
    settled, steps, chunk = (int(round(x / dt)) for x in (SETTLED[scene], SETTLED[scene] + seconds, CHUNK))
    with rollout.Rollout(nthread=threads) as pool:
        datas = [mujoco.MjData(model) for _ in range(threads)]
        controls = _mujoco_controls(scene, dt, 0, steps)
        trajectory = rollout.rollout(model, datas[0], initial[None], controls[None], nstep=steps)[0][0]
        qpos = trajectory[:, 1 : 1 + model.nq]  # the state starts with the time
        held = _mujoco_held(scene, qpos[settled - 1 :], first)
        hold = controls[-1:][None]
        rates = {}
        for size in (1, batch):
            states = np.tile(trajectory[settled - 1], (size, 1))
            samples = []
            for _ in range(repeats):
                start = time.perf_counter()
                if size == 1:
                    rollout.rollout(model, datas[0], states, hold, nstep=chunk)
                else:
                    pool.rollout(model, datas, states, hold, nstep=chunk)
                samples.append(time.perf_counter() - start)
            rates[str(size)] = size * chunk * dt / statistics.median(samples)
    return {"library": "mujoco C rollout", "scene": scene, "dt": dt, "drift_mm": 1e3 * _drift(held), "rates": rates, "threads": threads}


def mjx(scene: str, dt: float, seconds: float, batch: int, repeats: int) -> dict:
    """MJX on MuJoCo's model of the scene, in float64, with MuJoCo's default solver options."""
    from mujoco import mjx as mx

    model, data, first = _mujoco_model(scene, dt)
    device_model = mx.put_model(model)
    state = mx.put_data(model, data)
    chunk = int(round(CHUNK / dt))

    def advance(d, controls):
        def one(d, c):  # with x64 on, a step returns some of put_data's int32 fields as int64
            return jax.tree.map(lambda new, old: new.astype(old.dtype), mx.step(device_model, d.replace(ctrl=c)), d), None

        return jax.lax.scan(one, d, controls)[0]

    step = jax.jit(advance)
    controls = jnp.asarray(_mujoco_controls(scene, dt, 0, chunk))
    start = time.perf_counter()
    timing.block(step(state, controls))
    compile_seconds = time.perf_counter() - start
    settled = int(round(SETTLED[scene] / CHUNK))
    held = []
    for k in range(settled + int(round(seconds / CHUNK))):
        if k >= settled:
            held.append(_mujoco_held(scene, np.asarray(state.qpos), first))
        state = step(state, jnp.asarray(_mujoco_controls(scene, dt, k * chunk, chunk)))
    held.append(_mujoco_held(scene, np.asarray(state.qpos), first))
    hold = jnp.asarray(_mujoco_controls(scene, dt, (settled + int(round(seconds / CHUNK))) * chunk, chunk))
    batched = jax.jit(jax.vmap(advance, in_axes=(0, None)))
    many = jax.tree.map(lambda x: jnp.broadcast_to(x, (batch,) + x.shape), state)
    rates = _rates({1: (lambda d: step(d, hold), state), batch: (lambda d: batched(d, hold), many)}, chunk * dt, repeats)
    return {"library": "mjx", "scene": scene, "dt": dt, "drift_mm": 1e3 * _drift(np.stack(held)), "rates": rates, "compile s": compile_seconds}


LIBRARIES = {"ours": ours, "mujoco": mujoco_c, "mjx": mjx}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenes", default=",".join(SCENES))
    parser.add_argument("--libraries", default=",".join(LIBRARIES))
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    rows = []
    print(f"| scene | library | dt [ms] | drift after settling [mm] | sim s / wall s, 1 world | {args.batch} worlds | compile [s] |")
    print("|---|---|---|---|---|---|---|")
    for scene in args.scenes.split(","):
        dt = SCENES[scene]
        for library in args.libraries.split(","):
            row = LIBRARIES[library](scene, dt, args.seconds, args.batch, args.repeats)
            rows.append(row)
            rates = row["rates"]
            print(f"| {scene} | {row['library']} | {1e3 * dt:g} | {row['drift_mm']:.3f} | {rates['1']:.1f} | {rates[str(args.batch)]:.1f} |"
                  f" {row.get('compile s', float('nan')):.1f} |", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
