"""The cost of the collision module per pair kind: `collide` over N pairs of one kind.

For each pair kind (:data:`jaxsim_like.simulation.collision.KINDS`) and N pairs, in float64: the
median µs of one jitted call of ``collide`` (after compilation and warm-up, ``block_until_ready``),
its cost per pair (point-shape: per chunk of 8 points) and per slot, and the compile time; then
``pair_forces`` per slot, the broad-phase cull (N candidate point chunks of which 64 are kept),
on one pair of touching poses, and a world: the humanoid with self-collisions next to 16 boxes.

    python -m benchmarks.collision [--pairs 1,64,512] [--repeats 50] [--json results/collision.json]
"""

from __future__ import annotations

import argparse
import dataclasses

from benchmarks import timing  # noqa: F401  (applies the XLA CPU settings first)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

jax.config.update("jax_enable_x64", True)

import jaxsim_like as js  # noqa: E402
from jaxsim_like.simulation import ContactParams  # noqa: E402
from jaxsim_like.simulation.collision import KINDS, CollisionTable, PairGroup, collide, pair_forces  # noqa: E402

GEOMETRY = {
    "sphere": '<sphere radius="0.1"/>',
    "capsule": '<capsule radius="0.05" length="0.3"/>',
    "box": '<box size="0.2 0.2 0.2"/>',
    "cylinder": '<cylinder radius="0.1" length="0.3"/>',
    "mesh points": '<cylinder radius="0.1" length="0.3"/>',
}


def _body(kind: str) -> js.Model:
    return js.load_model(
        f'<robot name="{kind}"><link name="l"><inertial><mass value="1"/><inertia ixx="0.01" iyy="0.01" izz="0.01"'
        f' ixy="0" ixz="0" iyz="0"/></inertial><collision><geometry>{GEOMETRY[kind]}</geometry></collision></link></robot>'
    )


def _world(kind: str, pairs: int, keep: int | None = None):
    """Two one-link models (one shape each) and a table whose group of ``kind`` holds ``pairs``
    copies of their pair (``keep`` of them kept by the cull; all by default)."""
    first, second = ("mesh points", "box") if kind == "point-shape" else kind.split("-")
    models = (_body(first), _body(second))
    table = CollisionTable.build(models)
    (group,) = [g for g in table.groups if g.kind == kind]
    width = len(group.first) // group.candidates  # point-shape: a chunk of points per candidate
    replicated = PairGroup(kind, group.first[:width] * pairs, group.second[:1] * pairs, pairs if keep is None else keep)
    return dataclasses.replace(table, groups=(replicated,)), models


def _poses():
    """Touching poses of the two one-link models: b at the origin, a turned and 0.18 m above it."""
    R = np.asarray(js.dynamics.spatial.quaternion_to_rotation(jnp.array([0.9, 0.2, -0.3, 0.1])))
    H_a = np.eye(4)
    H_a[:3, :3], H_a[:3, 3] = R, (0.01, -0.02, 0.18)
    return jnp.asarray(H_a[None]), jnp.eye(4)[None]


def _time(fn, *args, repeats: int) -> tuple[float, float]:
    seconds, executable = timing.compiled(fn, *args)
    return timing.call_time(executable, *args, repeats=repeats), seconds


def kind_cost(kind: str, pairs: int, repeats: int) -> dict:
    table, models = _world(kind, pairs)
    micro, seconds = _time(lambda H_a, H_b: collide(table, models, (H_a, H_b)), *_poses(), repeats=repeats)
    return {"kind": kind, "pairs": pairs, "slots": table.size, "µs": micro, "µs per pair": micro / pairs,
            "µs per slot": micro / table.size, "compile s": seconds}


def forces_cost(pairs: int, repeats: int) -> dict:
    table, models = _world("box-box", pairs)
    contacts = jax.jit(lambda H_a, H_b: collide(table, models, (H_a, H_b)))(*_poses())
    params = ContactParams.from_mass(1.0)
    v = jnp.zeros(contacts.normal.shape)
    mass = jnp.ones(contacts.depth.shape)

    def linearised(c, v):
        forces = pair_forces(params, c, v, jnp.zeros_like(v), 1e-3, mass, 2)
        return forces.step_forces, forces.matrices

    micro, seconds = _time(linearised, contacts, v, repeats=repeats)
    slots = contacts.depth.shape[0]
    return {"kind": "pair_forces", "pairs": pairs, "slots": slots, "µs": micro, "µs per slot": micro / slots, "compile s": seconds}


def cull_cost(candidates: int, keep: int, repeats: int) -> dict:
    table, models = _world("point-shape", candidates, keep)
    micro, seconds = _time(lambda H_a, H_b: collide(table, models, (H_a, H_b)), *_poses(), repeats=repeats)
    return {"kind": f"point-shape, {candidates} chunks culled to {keep}", "pairs": keep, "slots": table.size, "µs": micro,
            "µs per pair": micro / keep, "µs per slot": micro / table.size, "compile s": seconds}


def world_cost(repeats: int) -> dict:
    """The humanoid (self-collision on, its SRDF) next to 16 free boxes, every model at the origin."""
    humanoid = js.load_model(js.models.path("humanoid"), srdf=str(js.models.path("humanoid")).replace(".urdf", ".srdf"))
    box = _body("box")
    models = [humanoid] + [box] * 16
    table = CollisionTable.build(models, self_collision=[True] + [False] * 16)
    H = [jnp.tile(jnp.eye(4), (humanoid.number_of_links, 1, 1))] + [jnp.eye(4)[None]] * 16
    micro, seconds = _time(lambda H: collide(table, models, H), H, repeats=repeats)
    return {"kind": "humanoid (self) + 16 boxes, default budget", "pairs": sum(g.keep for g in table.groups), "slots": table.size,
            "µs": micro, "µs per slot": micro / table.size, "compile s": seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", default="1,64,512")
    parser.add_argument("--repeats", type=int, default=50)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    counts = [int(x) for x in args.pairs.split(",")]
    rows = [kind_cost(kind, n, args.repeats) for kind in KINDS for n in counts]
    rows.append(forces_cost(64, args.repeats))
    rows += [cull_cost(n, 64, args.repeats) for n in counts if n > 64]
    rows.append(world_cost(args.repeats))
    print(timing.environment())
    timing.print_table(rows)
    if args.json:
        timing.write_json(args.json, rows)


if __name__ == "__main__":
    main()
