"""Collidable points per collision mesh: the step's cost against what the points keep.

For the iCub (``icub-models``, iCubGazeboV2_5, 36 collision meshes) and each sampling, in float64:
the number of points; the in-graph cost of the default (implicit) step, from a jitted 200-step
rollout (median of 5 calls); the resting normal force after a 1 cm drop and 3 s of settling at
dt 2 ms, against m g; and the geometric error, the deepest any mesh can sink into a plane before
one of its points touches it (over 2000 directions, worst mesh).

    python -m benchmarks.contact_sampling [--points 4,8,16,32,64]

"64, all vertices" is the sampling before issue 15 (farthest-point sampling of every vertex).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time

from jaxsim_like._xla import apply_cpu_defaults

apply_cpu_defaults()

import icub_models  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

jax.config.update("jax_enable_x64", True)

import jaxsim_like as js  # noqa: E402
from jaxsim_like.batching import simulate_batch  # noqa: E402
from jaxsim_like.parsers import parse_model  # noqa: E402
from jaxsim_like.dynamics.kinematics import STANDARD_GRAVITY  # noqa: E402
from jaxsim_like.parsers.shapes import SweptPoints, collidable_points, farthest_points, fibonacci_sphere  # noqa: E402
from jaxsim_like.simulation.step import contact_point_positions  # noqa: E402


def _options(sampling: js.ContactSampling, mesh_max_points) -> dict:
    return {
        "box_edge_samples": sampling.box_edge_samples, "sphere_samples": sampling.sphere_samples,
        "cylinder_samples": sampling.cylinder_samples, "mesh_max_points": mesh_max_points,
    }


class AllVertices(js.ContactSampling):
    """Farthest-point sampling over every distinct vertex of a mesh (the default before issue 15)."""

    def points(self, link):
        pieces = []
        for collision in link.collisions:
            if collision.geometry.type == "mesh":
                every = collidable_points(collision, **_options(self, None))
                kept = farthest_points(every.centres, self.mesh_max_points)
                pieces.append(SweptPoints(every.centres[kept], every.radii[kept]))
            else:
                pieces.append(collidable_points(collision, **_options(self, self.mesh_max_points)))
        return SweptPoints.concatenate(pieces)


def sinking_error(description, sampling: js.ContactSampling) -> float:
    """[m]: the largest support gap, over meshes and 2000 directions, between a mesh's vertices and its points."""
    directions = fibonacci_sphere(2000)
    worst = 0.0
    for link in description.links:
        for collision in link.collisions:
            if collision.geometry.type != "mesh" or collision.geometry.path is None:
                continue
            every = collidable_points(collision, **_options(sampling, None)).centres
            kept = sampling.points(dataclasses.replace(link, collisions=[collision])).centres
            full = (every @ directions.T).max(axis=0)
            support = (kept @ directions.T).max(axis=0) if len(kept) else np.full(len(directions), -np.inf)
            worst = max(worst, float((full - support).max()))
    return worst


def measure(path: str, label: str, sampling, description) -> dict:
    model = js.load_model(path, contact_sampling=sampling)
    params = js.SimulationParams.build(model, dt=0.002)
    state = js.State.build(model)
    lowest = float(jnp.min(contact_point_positions(model, state)[:, 2]))
    state = state.replace(base_position=state.base_position.at[2].add(0.01 - lowest))
    torques = jnp.zeros((200, model.dofs))
    roll = jax.jit(lambda s, u: js.rollout(model, s, u, params=params)[0])
    jax.block_until_ready(roll(state, torques))
    samples = []
    for _ in range(5):
        started = time.perf_counter()
        jax.block_until_ready(roll(state, torques))
        samples.append(time.perf_counter() - started)
    states = jax.tree.map(lambda x: x[None], state)
    final, summary = simulate_batch(model, states, jnp.zeros((1500, model.dofs)), params=params)
    weight = float(model.total_mass) * STANDARD_GRAVITY
    return {
        "sampling": label,
        "points": len(model.point_link),
        "step_us": statistics.median(samples) / 200 * 1e6,
        "resting_force_over_mg": float(summary.contact_force[0, 2]) / weight,
        "finite": int(summary.first_nonfinite[0]) < 0,
        "sinking_mm": 1000 * sinking_error(description, sampling),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", default="4,8,16,32,64", help="points per mesh to measure (hull + farthest-point sampling)")
    args = parser.parse_args()
    path = str(icub_models.get_model_file("iCubGazeboV2_5"))
    description = parse_model(path)
    rows = [measure(path, "64, all vertices", AllVertices(mesh_max_points=64), description)]
    for count in (int(c) for c in args.points.split(",")):
        rows.append(measure(path, f"{count}, hull", js.ContactSampling(mesh_max_points=count), description))
    baseline = rows[0]["step_us"]
    print(f"{'sampling':18s} {'points':>6s} {'step us':>8s} {'speed-up':>8s} {'F_n / m g':>9s} {'sinking mm':>10s}")
    for row in rows:
        print(
            f"{row['sampling']:18s} {row['points']:6d} {row['step_us']:8.1f} {baseline / row['step_us']:8.1f} "
            f"{row['resting_force_over_mg']:9.4f} {row['sinking_mm']:10.2f}{'' if row['finite'] else '  (not finite)'}"
        )


if __name__ == "__main__":
    main()
