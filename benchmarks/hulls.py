"""Meshes as convex hulls against sampled points: what hulls cost on the iCub.

For the iCub (``icub-models``, iCubGazeboV2_5, 37 collision meshes), in float64, for sampled
points (8 per mesh, ``ContactSampling(mesh_max_points=8)``) and hulls of at most V vertices (``ContactSampling(mesh_hulls=V)``):
the load time, the collidable points, the compile time (process CPU of lowering and compiling a
jitted 200-step rollout of the default implicit step) and the in-graph cost per step (the
rollouts called in turn, median of the calls), at dt 2 ms from 1 cm above the ground. Then the
hull-hull narrow phase alone against box-box: 64 pairs in one vmapped call, per pair, for box-box,
cube hulls (8 vertices) and hulls of at most V of 400 random points on a sphere (the calls in
turn, median), and its compile time.

    python -m benchmarks.hulls [--hulls 8,16,32] [--rounds 7]
"""

from __future__ import annotations

import argparse
import statistics
import time

from jaxsim_like._xla import apply_cpu_defaults

apply_cpu_defaults()

import icub_models  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

jax.config.update("jax_enable_x64", True)

import numpy as np  # noqa: E402

import jaxsim_like as js  # noqa: E402
from jaxsim_like.dynamics.hulls import Hulls  # noqa: E402
from jaxsim_like.dynamics.spatial import quaternion_to_rotation  # noqa: E402
from jaxsim_like.parsers import shapes  # noqa: E402
from jaxsim_like.parsers.hulls import convex_hull  # noqa: E402
from jaxsim_like.simulation.collision.box import box_box  # noqa: E402
from jaxsim_like.simulation.collision.hull import HullData, hull_hull, in_world  # noqa: E402
from jaxsim_like.simulation.step import contact_point_positions  # noqa: E402

STEPS = 200
PAIRS = 64


def prepared(path: str, label: str, sampling: js.ContactSampling) -> dict:
    """The model of ``sampling``, its load time and its compiled rollout."""
    shapes._file_hull.cache_clear()
    started = time.perf_counter()
    model = js.load_model(path, contact_sampling=sampling)
    loaded = time.perf_counter() - started
    params = js.SimulationParams.build(model, dt=0.002)
    state = js.State.build(model)
    lowest = float(jnp.min(contact_point_positions(model, state)[:, 2]))
    state = state.replace(base_position=state.base_position.at[2].add(0.01 - lowest))
    torques = jnp.zeros((STEPS, model.dofs))
    roll = jax.jit(lambda s, u: js.rollout(model, s, u, params=params)[0])
    cpu = time.process_time()
    compiled = roll.lower(state, torques).compile()
    compile_s = time.process_time() - cpu
    jax.block_until_ready(compiled(state, torques))
    hulls = sum(kind == "hull" for kind in model.shape_kind)
    return {"label": label, "points": len(model.point_link), "hulls": hulls, "load_s": loaded, "compile_s": compile_s,
            "run": lambda: jax.block_until_ready(compiled(state, torques)), "samples": []}


def kernels(caps: list[int]) -> list[dict]:
    """The narrow phases of :data:`PAIRS` pairs of touching shapes (a turned over a, 0.17 m
    apart), compiled, with their compile times (process CPU)."""
    rng = np.random.default_rng(0)
    quaternions = rng.normal(size=(PAIRS, 4))
    R = jax.vmap(quaternion_to_rotation)(jnp.asarray(quaternions / np.linalg.norm(quaternions, axis=1, keepdims=True)))
    H_a = jnp.broadcast_to(jnp.eye(4), (PAIRS, 4, 4)).at[:, :3, :3].set(R).at[:, 2, 3].set(0.17)
    H_b = jnp.broadcast_to(jnp.eye(4), (PAIRS, 4, 4))
    half = jnp.full((PAIRS, 3), 0.1)
    rows = []

    def add(label, function, *args):
        cpu = time.process_time()
        compiled = jax.jit(function).lower(*args).compile()
        compile_s = time.process_time() - cpu
        jax.block_until_ready(compiled(*args))
        rows.append({"label": label, "compile_s": compile_s, "run": lambda: jax.block_until_ready(compiled(*args)), "samples": []})

    add("box-box", jax.vmap(box_box), H_a, half, H_b, half)
    cube = np.array([[x, y, z] for x in (-0.1, 0.1) for y in (-0.1, 0.1) for z in (-0.1, 0.1)])
    cloud = rng.normal(size=(400, 3))
    cloud = 0.12 * cloud / np.linalg.norm(cloud, axis=1, keepdims=True)
    for label, points, cap in [("cube hulls", cube, 8)] + [("round hulls", cloud, v) for v in caps]:
        hull = Hulls.of([convex_hull(points, cap)], jnp.float64)
        data = HullData(*(x[0] for x in (hull.vertices, hull.planes, hull.faces, hull.edges, hull.edge_normals)))
        V, F, K, E = hull.counts
        add(f"{label} (V {V}, F {F}, K {K}, E {E})", jax.vmap(lambda Ha, Hb, d=data: hull_hull(in_world(Ha, d), in_world(Hb, d))), H_a, H_b)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hulls", default="8,16,32", help="hull vertex caps to measure")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    path = str(icub_models.get_model_file("iCubGazeboV2_5"))
    rows = [prepared(path, "8 points per mesh", js.ContactSampling(mesh_max_points=8))]
    rows += [prepared(path, f"hulls of <= {v}", js.ContactSampling(mesh_hulls=v)) for v in (int(x) for x in args.hulls.split(","))]
    for _ in range(args.rounds):  # in turn: the machine's load falls on every row alike
        for row in rows:
            started = time.perf_counter()
            row["run"]()
            row["samples"].append(time.perf_counter() - started)
    base = statistics.median(rows[0]["samples"])
    print(f"{'sampling':20s} {'hulls':>5s} {'points':>6s} {'load s':>7s} {'compile s':>9s} {'step us':>8s} {'x points':>8s}")
    for row in rows:
        step = statistics.median(row["samples"])
        print(f"{row['label']:20s} {row['hulls']:5d} {row['points']:6d} {row['load_s']:7.2f} {row['compile_s']:9.1f} "
              f"{step / STEPS * 1e6:8.1f} {step / base:8.2f}")
    pairs = kernels([int(x) for x in args.hulls.split(",")])
    for _ in range(args.rounds):
        for row in pairs:
            started = time.perf_counter()
            row["run"]()
            row["samples"].append(time.perf_counter() - started)
    print(f"\n{'narrow phase':36s} {'compile s':>9s} {'us per pair':>11s}")
    for row in pairs:
        print(f"{row['label']:36s} {row['compile_s']:9.2f} {statistics.median(row['samples']) / PAIRS * 1e6:11.2f}")


if __name__ == "__main__":
    main()
