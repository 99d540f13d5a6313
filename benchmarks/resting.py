"""How still a robot lies after a limp drop, at each step size, against MuJoCo C on the same URDF.

    python -m benchmarks.resting [--model humanoid|icub|mujoco_humanoid|all] [--dts 0.001,0.005,0.01] [--seconds 12] [--after 5] [--drops N] [--mujoco]

The robot (joints at zero, zero torques) is dropped with its lowest collidable point 0.5 m above
the ground, as in ``tests/simulation/test_sim_implicit.py``, and simulated for ``--seconds`` with
the implicit step. Printed per step size: the fastest joint speed [rad/s] in each simulated second,
and after ``--after`` seconds the fastest joint, its speed and the largest base speeds (linear
[m/s], angular [rad/s]). Issue 33's target: every joint below 0.05 rad/s after 5 s at 10 ms.
Float64 unless ``JAX_ENABLE_X64=0``. ``mujoco_humanoid`` is MuJoCo's own humanoid MJCF (the model of
the MuJoCo C rows of :mod:`benchmarks.simulated_seconds`): only its feet touch the floor (its four
contact pairs), so it does not lie on the ground but hangs below it by its feet.

A limp drop is chaotic: the pose it ends in, and which limb settles last, change with the step
size and any perturbation. ``--drops N`` adds N - 1 drops whose joints start at offsets uniform in
+-``PERTURBATION`` rad (the first drop is the unperturbed one) and prints, over the N drops, the
median (lowest, highest) fastest joint after ``--after`` seconds, how many are still, the median
time from which every joint stays below the target (inf for a drop still moving at the end), and
the median over the drops of the fastest joint in each simulated second.

``--mujoco`` adds the same drops in MuJoCo C (float64) on the same URDF (:func:`mujoco_model`):
MuJoCo's URDF compiler with every collision mesh as MuJoCo's convex hull of all its vertices,
the URDF's joint damping and friction, the friction of our default contact law, MuJoCo's default
solver and contact softness, the implicitfast integrator and elliptic cones; once as MuJoCo runs
by default, once with ``noslip_iterations = NOSLIP_ITERATIONS`` (no creep under static friction).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("JAX_ENABLE_X64", "1")

HEIGHT = 0.5
TARGET = 0.05  # rad/s
PERTURBATION = 0.1  # rad: the joint offsets of the perturbed drops
NOSLIP_ITERATIONS = 20


def joint_offsets(drops: int, joints: int, seed: int = 0):
    """``(drops, joints)`` initial joint positions [rad]: the first row zero, the others uniform in
    +-PERTURBATION (columns in the order of the joints' names, sorted, so both libraries agree)."""
    import numpy as np

    offsets = np.random.default_rng(seed).uniform(-PERTURBATION, PERTURBATION, (drops, joints))
    offsets[0] = 0.0
    return offsets


def by_name(offsets, names):
    """``offsets`` of :func:`joint_offsets` (columns for the sorted ``names``) in the order of ``names``."""
    order = sorted(range(len(names)), key=lambda i: names[i])
    out = offsets.copy()
    out[:, order] = offsets
    return out


def rest(path: str, dt: float, seconds: float, drops: int = 1):
    """``(dtype, finite (drops,), joint_speeds (drops, steps, n), base_speeds (drops, steps, 6),
    joint_names)`` of the drops (:func:`joint_offsets`)."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    import jaxsim_like as js
    from jaxsim_like.simulation.step import contact_point_positions

    model = js.load_model(path)
    params = js.SimulationParams.build(model, dt=dt)
    dtype = model.link_mass.dtype
    offsets = jnp.asarray(by_name(joint_offsets(drops, model.dofs), model.joint_names), dtype)

    def dropped(q):
        upright = js.State.build(model, base_position=jnp.zeros(3), joint_positions=q)
        lowest = jnp.min(contact_point_positions(model, upright)[:, 2])
        return js.State.build(model, base_position=jnp.array([0.0, 0.0, HEIGHT]).at[2].add(-lowest), joint_positions=q)

    @jax.jit
    @jax.vmap
    def run(q):
        def one(state, _):
            state, out = js.step(model, state, params=params)
            return state, (out.finite, jnp.abs(state.joint_velocities), jnp.abs(state.base_velocity))

        return jax.lax.scan(one, dropped(q), None, length=int(round(seconds / dt)))[1]

    finite, joints, base = (np.asarray(x) for x in run(offsets))
    return str(joints.dtype), finite.all(axis=1), joints, base, model.joint_names


def mujoco_model(path: str, dt: float, noslip_iterations: int = 0):
    """MuJoCo C's model of the URDF at ``path`` (see the module docstring) at step ``dt`` [s]: a free
    joint at the root, a ground plane, robot geoms colliding with the ground only (as ours, without
    self-collision), friction ``DEFAULT_FRICTION`` or the link's URDF ``<gazebo><mu1>``."""
    import mujoco
    from lxml import etree

    from jaxsim_like.parsers.uri import resolve_uri
    from jaxsim_like.simulation.params import DEFAULT_FRICTION

    root = etree.parse(str(path), etree.XMLParser(resolve_entities=False, no_network=True)).getroot()
    for visual in list(root.iter("visual")):
        visual.getparent().remove(visual)
    for mesh in root.iter("mesh"):
        mesh.set("filename", resolve_uri(mesh.get("filename"), str(Path(path).parent)))
    friction = {}
    for gazebo in root.iter("gazebo"):
        mu = gazebo.find("mu1")
        if gazebo.get("reference") and mu is not None:
            friction[gazebo.get("reference")] = float(mu.text if mu.text and mu.text.strip() else mu.get("value"))
    extension = etree.SubElement(root, "mujoco")
    etree.SubElement(extension, "compiler", strippath="false", discardvisual="true", fusestatic="false")
    spec = mujoco.MjSpec.from_string(etree.tostring(root, encoding="unicode"))
    spec.option.timestep = dt
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    spec.option.cone = mujoco.mjtCone.mjCONE_ELLIPTIC
    spec.option.noslip_iterations = noslip_iterations
    spec.worldbody.first_body().add_freejoint()
    for geom in spec.geoms:
        geom.contype, geom.conaffinity = 1, 0
        geom.friction = [friction.get(geom.parent.name, DEFAULT_FRICTION), 0.0, 0.0]
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 1], contype=0, conaffinity=1, friction=[DEFAULT_FRICTION, 0, 0])
    return spec.compile()


def mujoco_rest(path: str, dt: float, seconds: float, drops: int = 1, noslip_iterations: int = 0):
    """:func:`rest` in MuJoCo C on :func:`mujoco_model`, from the same joint offsets, the lowest geom
    HEIGHT above the ground."""
    import mujoco
    import numpy as np

    from benchmarks.peers import mjx_peer

    model = mujoco_model(path, dt, noslip_iterations)
    names = mjx_peer.joint_names(model)
    address = np.array([model.jnt_qposadr[model.joint(name).id] for name in names])
    ground, colliders = mjx_peer.ground_colliders(model)
    steps = int(round(seconds / dt))
    joints, base = np.empty((drops, steps, len(names))), np.empty((drops, steps, 6))
    finite = np.ones(drops, dtype=bool)
    data = mujoco.MjData(model)
    for drop, offsets in enumerate(by_name(joint_offsets(drops, len(names)), names)):
        mujoco.mj_resetData(model, data)
        data.qpos[address] = offsets
        mujoco.mj_forward(model, data)
        data.qpos[2] += HEIGHT - min(mujoco.mj_geomDistance(model, data, ground, g, 10.0, None) for g in colliders)
        for step in range(steps):
            mujoco.mj_step(model, data)
            joints[drop, step] = np.abs(data.qvel[6:])
            base[drop, step] = np.abs(data.qvel[:6])  # the free joint's: linear in the world, angular in the base frame
        finite[drop] = np.all(np.isfinite(joints[drop])) and data.warning[mujoco.mjtWarning.mjWARN_BADQACC].number == 0
    return "float64", finite, joints, base, names


def report(label: str, dt: float, after: float, result) -> None:
    """Print the figures of one library's drops (see the module docstring)."""
    import numpy as np

    dtype, finite, joints, base, names = result
    per_second = int(round(1.0 / dt))
    late = int(round(after / dt))
    windows = " ".join(f"{joints[0, i:i + per_second].max():.3g}" for i in range(0, joints.shape[1], per_second))
    fastest = joints[0, late:].max(axis=0)
    worst = int(np.argmax(fastest))
    verdict = "still" if fastest[worst] < TARGET else "moving"
    print(f"[{label}] dt {dt * 1000:g} ms ({dtype}, finite {bool(finite[0])}): fastest joint per second: {windows}", flush=True)
    print(f"[{label}] dt {dt * 1000:g} ms: after {after:g} s {verdict}: {names[worst]} {fastest[worst]:.4g} rad/s; base "
          f"{base[0, late:, :3].max():.3g} m/s, {base[0, late:, 3:].max():.3g} rad/s", flush=True)
    if len(joints) > 1:
        each = joints[:, late:].max(axis=(1, 2))
        medians = " ".join(f"{np.median(joints[:, i:i + per_second].max(axis=(1, 2))):.3g}"
                           for i in range(0, joints.shape[1], per_second))
        moving = joints.max(axis=2) >= TARGET  # (drops, steps)
        settled = np.where(moving.any(axis=1), moving.shape[1] - np.argmax(moving[:, ::-1], axis=1), 0) * dt
        settled = np.where(moving[:, -1], np.inf, settled)
        print(f"[{label}] dt {dt * 1000:g} ms, {len(joints)} drops ({int(finite.sum())} finite): after {after:g} s the fastest joint "
              f"median {np.median(each):.3g} (lowest {each.min():.3g}, highest {each.max():.3g}) rad/s, still {int((each < TARGET).sum())}"
              f"/{len(joints)}; every joint below {TARGET:g} rad/s from (median) {np.median(settled):.3g} s, in {int(np.isfinite(settled).sum())}"
              f"/{len(joints)} within the run; median per second: {medians}", flush=True)


def main() -> None:
    from benchmarks.models import CHOICES, MUJOCO_HUMANOID, model_files

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="all", choices=(*CHOICES, MUJOCO_HUMANOID))
    parser.add_argument("--dts", default="0.001,0.005,0.01", help="step sizes [s]")
    parser.add_argument("--seconds", type=float, default=12.0, help="simulated seconds")
    parser.add_argument("--after", type=float, default=5.0, help="the resting figures from this time on [s]")
    parser.add_argument("--drops", type=int, default=1, help="drops, the first unperturbed, the others perturbed")
    parser.add_argument("--mujoco", action="store_true", help="MuJoCo C rows on the same URDF")
    args = parser.parse_args()
    if not 0.0 <= args.after < args.seconds:
        parser.error(f"--after ({args.after:g} s) must lie within the run (--seconds {args.seconds:g})")
    if args.drops < 1:
        parser.error(f"--drops must be at least 1, got {args.drops}")
    if args.mujoco and args.model == MUJOCO_HUMANOID:
        parser.error("--mujoco runs URDFs; MuJoCo's own humanoid is compared in benchmarks.simulated_seconds")
    for name, path in model_files(args.model).items():
        for dt in (float(x) for x in args.dts.split(",")):
            report(name, dt, args.after, rest(str(path), dt, args.seconds, args.drops))
            if args.mujoco:
                import mujoco

                report(f"{name}, MuJoCo C {mujoco.__version__}", dt, args.after, mujoco_rest(str(path), dt, args.seconds, args.drops))
                report(f"{name}, MuJoCo C {mujoco.__version__}, noslip {NOSLIP_ITERATIONS}", dt, args.after,
                       mujoco_rest(str(path), dt, args.seconds, args.drops, NOSLIP_ITERATIONS))


if __name__ == "__main__":
    main()
