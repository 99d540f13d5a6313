"""The cost of each kind of constraint row in the implicit step, interleaved in one run.

    python -m benchmarks.constraints [--kinds ...] [--counts 1 2 6] [--steps 200] [--calls 15]

Each kind is added ``k`` times to one model, synthetically, on the constraints' own arrays:

- on the shipped humanoid (31 joints, floating base): ``coupling`` (a mimic or MJCF joint
  equality: joint ``n-k+r`` follows joint ``r`` at half its angle; 1 row each), ``connect`` and
  ``weld`` between a left and a right link, ``connect-world`` and ``weld-world`` (a link to a
  frame of the world) and ``connect-mocap`` and ``weld-mocap`` (a link to a mocap body),
  each closed where the links stand at the start (3 rows per connect, 6 per weld; MuJoCo's
  default ``solimp``), ``fixed-tendon`` (``q_a + q_b`` of two joints, limited: 2 rows),
  ``spatial-tendon`` (straight between two frames, limited: 2 rows) and ``soft-limit`` (MuJoCo's
  joint limit on ``k`` joints: 1 row each, at most ``SOFT_LIMIT_ROWS``);
- on a rope of six ball joints under a floating box (MJCF): ``cone`` (the cone limit of ``k``
  ball joints, 1 row each), against the rope without cones.

Every model is stepped ``--steps`` times from rest in one jitted `lax.scan`; the scans are
called in turn ``--calls`` times, so the machine's drift hits them alike. The table gives the
median wall and process CPU µs per step, their difference to the model without constraints
and that difference per row. The first call (trace and compile) is reported apart. float64.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import timing  # noqa: E402  (applies the CPU flags before jax is used)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

jax.config.update("jax_enable_x64", True)

import jaxsim_like as js  # noqa: E402
from jaxsim_like.dynamics import kinematics  # noqa: E402
from jaxsim_like.dynamics.ball_cones import BallCones  # noqa: E402
from jaxsim_like.dynamics.couplings import NO_SOLIMP, JointCouplings  # noqa: E402
from jaxsim_like.dynamics.loops import NO_MOCAP, WORLD, LoopClosures  # noqa: E402
from jaxsim_like.dynamics.soft_limits import SoftLimits  # noqa: E402
from jaxsim_like.dynamics.tendons import build_tendons  # noqa: E402
from jaxsim_like.parsers.description import TendonDescription, TendonSegment  # noqa: E402
from jaxsim_like.simulation.joint_limits import SOFT_LIMIT_ROWS  # noqa: E402

MUJOCO_SOLIMP = (0.9, 0.95, 0.001, 0.5, 2.0)
LINK_PAIRS = (
    ("l_wrist_3", "r_wrist_3"), ("l_foot", "r_foot"), ("l_forearm", "r_forearm"),
    ("l_shank", "r_shank"), ("l_upper_arm", "r_upper_arm"), ("l_thigh", "r_thigh"),
)
FRAME_PAIRS = (("l_hand", "r_hand"), ("l_sole", "r_sole"), ("l_hand", "l_sole"), ("r_hand", "r_sole"), ("head_camera", "l_hand"), ("head_camera", "r_hand"))
ROPE = """<mujoco model="rope">
  <worldbody>
    <body name="box" pos="0 0 1.5"><freejoint/><geom type="box" size="0.1 0.1 0.1" mass="2"/>
      {links}
    </body>
  </worldbody>
</mujoco>"""
ROPE_LINK = '<body pos="0 0 -0.1"><joint name="ball{k}" type="ball" range="0 {angle}"/><geom type="capsule" fromto="0 0 0 0 0 -0.1" size="0.02" mass="0.1"/>'
HUMANOID_KINDS = ("coupling", "connect", "weld", "connect-world", "weld-world", "connect-mocap", "weld-mocap", "fixed-tendon", "spatial-tendon", "soft-limit")


def rope(cones: int) -> js.Model:
    """A floating box hanging a rope of six ball joints; the first ``cones`` with a cone limit
    of 0.5 rad (the others unlimited)."""
    links = "".join(ROPE_LINK.format(k=k, angle=0.5) for k in range(6)) + "</body>" * 6
    with tempfile.NamedTemporaryFile("w", suffix=".xml") as file:
        file.write(ROPE.format(links=links))
        file.flush()
        model = js.load_model(file.name)
    cones_ = model.ball_cones
    if cones == 0:
        return model.replace(ball_cones=BallCones.none(model.link_mass.dtype))
    index = np.arange(cones)
    columns = (cones_.angle, cones_.margin, cones_.time_constant, cones_.damping_ratio, cones_.solimp, cones_.inverse_weight)
    return model.replace(ball_cones=BallCones(*(column[index] for column in columns), balls=tuple(range(cones))))


def _closures(model: js.Model, count: int, weld: bool, side: str) -> LoopClosures:
    """``count`` closures of ``LINK_PAIRS`` (``side`` ``"link"``), or of their left links to the
    world (``"world"``) or to a mocap body each (``"mocap"``), closed at the model's rest state."""
    state = js.State.build(model)
    poses = np.asarray(kinematics.kinematics(model, state).G_H_L)  # G: world axes, origin at the base
    world_poses = poses.copy()
    world_poses[:, :3, 3] += np.asarray(state.base_position)
    frame1, frame2, link1, link2 = [], [], [], []
    for left, right in LINK_PAIRS[:count]:
        a = model.link_index(left)
        frame1.append(np.eye(4))
        link1.append(a)
        if side == "link":
            b = model.link_index(right)
            frame2.append(np.linalg.inv(poses[b]) @ poses[a])
            link2.append(b)
        else:
            frame2.append(world_poses[a] if side == "world" else np.eye(4))
            link2.append(WORLD)
    dtype = model.link_mass.dtype
    column = lambda values: jnp.asarray(np.asarray(values, dtype=float), dtype=dtype)  # noqa: E731
    mocap = side == "mocap"
    mocap_poses = world_poses[link1] if mocap else np.zeros((0, 4, 4))
    quaternions = js.dynamics.spatial.rotation_to_quaternion(column(mocap_poses[:, :3, :3])) if mocap else column(np.zeros((0, 4)))
    return LoopClosures(
        frame1=column(frame1),
        frame2=column(frame2),
        torque_scale=column(np.ones(count)),
        time_constant=column(np.full(count, 0.02)),
        damping_ratio=column(np.ones(count)),
        mocap_position=column(mocap_poses[:, :3, 3]),
        mocap_quaternion=quaternions,
        solimp=column([MUJOCO_SOLIMP] * count),
        inverse_weight=column(np.ones((count, 2))),
        link1=tuple(link1),
        link2=tuple(link2),
        weld=(weld,) * count,
        names=tuple(f"closure{k}" for k in range(count)),
        mocap1=(NO_MOCAP,) * count,
        mocap2=tuple(range(count)) if mocap else (NO_MOCAP,) * count,
        mocap_names=tuple(f"mocap{k}" for k in range(count)) if mocap else (),
    )


def _tendons(model: js.Model, count: int, spatial: bool):
    """``count`` limited tendons: fixed ``q_r + q_(n-1-r)``, or spatial between ``FRAME_PAIRS``."""
    joints = model.joint_names
    descriptions = []
    for r in range(count):
        if spatial:
            a, b = FRAME_PAIRS[r]
            segments = (TendonSegment(a, b),)
            descriptions.append(TendonDescription(f"tendon{r}", {}, limited=True, range=(0.05, 3.0), inverse_weight=1.0, segments=segments))
        else:
            coefficients = {joints[r]: 1.0, joints[len(joints) - 1 - r]: 1.0}
            descriptions.append(TendonDescription(f"tendon{r}", coefficients, limited=True, range=(-1.0, 1.0), inverse_weight=1.0))
    return build_tendons(descriptions, (), joints, model.link_mass.dtype, model.frame_names, model.link_names)


def with_constraints(model: js.Model, kind: str, count: int) -> tuple[js.Model, int]:
    """``model`` with ``count`` constraints of ``kind`` (see the module docstring) and its number of rows."""
    dtype = model.link_mass.dtype
    if kind == "coupling":
        n = model.dofs
        ones = jnp.ones(count, dtype)
        solimp = jnp.asarray(np.tile(NO_SOLIMP, (count, 1)), dtype)
        couplings = JointCouplings(0.5 * ones, 0.0 * ones, 0.02 * ones, ones, solimp, 0.0 * ones, tuple(range(n - count, n)), tuple(range(count)), (False,) * count)
        return model.replace(couplings=couplings), count
    if kind.startswith(("connect", "weld")):
        weld = kind.startswith("weld")
        side = kind.partition("-")[2] or "link"
        return model.replace(loops=_closures(model, count, weld, side)), (6 if weld else 3) * count
    if kind.endswith("tendon"):
        return model.replace(tendons=_tendons(model, count, kind == "spatial-tendon")), 2 * count
    if kind == "soft-limit":
        full = lambda value: jnp.full(count, value, dtype)  # noqa: E731
        solimp = jnp.asarray(np.tile(MUJOCO_SOLIMP, (count, 1)), dtype)
        limits = SoftLimits(full(0.0), full(0.02), full(1.0), solimp, full(1.0), dofs=tuple(range(count)))
        return model.replace(soft_limits=limits), min(count, SOFT_LIMIT_ROWS)
    if kind == "cone":
        return rope(count), count
    raise ValueError(f"unknown kind {kind!r}; the kinds are {list(HUMANOID_KINDS) + ['cone']}")


def _bare(model: js.Model) -> js.Model:
    """``model`` without any constraint."""
    dtype = model.link_mass.dtype
    return model.replace(
        couplings=JointCouplings.none(dtype), loops=LoopClosures.none(dtype), soft_limits=SoftLimits.none(dtype), ball_cones=BallCones.none(dtype)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kinds", nargs="+", default=[*HUMANOID_KINDS, "cone"])
    parser.add_argument("--counts", type=int, nargs="+", default=[1, 2, 6])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--calls", type=int, default=15)
    args = parser.parse_args()
    humanoid = _bare(js.load_model(js.models.path("humanoid")))
    cases = [("none", 0, humanoid, 0)]
    if "cone" in args.kinds:
        cases.append(("cone", 0, rope(0), 0))
    for kind in args.kinds:
        for count in args.counts:
            model, rows = with_constraints(humanoid, kind, count)
            cases.append((kind, count, model, rows))
    runs = []
    for kind, count, model, rows in cases:
        params = js.SimulationParams.build(model, dt=0.001)
        torques = jnp.zeros((args.steps, model.dofs))
        run = jax.jit(lambda state, model=model, params=params: js.rollout(model, state, torques, params=params)[0])
        state = js.State.build(model)
        started = time.perf_counter()
        timing.block(run(state))
        runs.append((kind, count, rows, run, state, time.perf_counter() - started, [], []))
        print(f"compiled {kind} {count}: {runs[-1][5]:.1f} s", file=sys.stderr, flush=True)
    for _ in range(args.calls):
        for _, _, _, run, state, _, wall, cpu in runs:
            started, cpu_started = time.perf_counter(), time.process_time()
            timing.block(run(state))
            wall.append((time.perf_counter() - started) / args.steps * 1e6)
            cpu.append((time.process_time() - cpu_started) / args.steps * 1e6)
    baseline = {}
    print("| kind | k | rows | wall µs/step | +wall | CPU µs/step | +CPU | +CPU per row | first call [s] |")
    print("|---|---|---|---|---|---|---|---|---|")
    for kind, count, rows, _, _, compile_s, wall, cpu in runs:
        w, c = statistics.median(wall), statistics.median(cpu)
        if rows == 0:
            baseline[kind] = (w, c)
        w0, c0 = baseline["cone" if kind == "cone" else "none"]
        per_row = f"{(c - c0) / rows:+.1f}" if rows else ""
        print(f"| {kind} | {count} | {rows} | {w:.1f} | {w - w0:+.1f} | {c:.1f} | {c - c0:+.1f} | {per_row} | {compile_s:.1f} |")


if __name__ == "__main__":
    main()
