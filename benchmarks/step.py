"""Simulation-step benchmark: jaxsim_like against jaxsim (PyPI) and MJX, all in one run.

    python benchmarks/step.py [--model humanoid|icub|all] [--quick] [--no-mujoco-humanoid] [--per-second ...]

For each model, the robot stands on flat ground (its lowest collidable point 0.5 mm deep, so contacts
are active) with dt = 1 ms and soft contacts, and zero joint torques: jaxsim_like with its default
implicit step and with its explicit semi-implicit Euler, jaxsim with its default integrator, MJX
with its own solver. For each library it measures the compile time of one step, one dispatched step, one step
in-graph (steps chained in a jitted loop), the throughput in steps/s of batches of 1, 64, 1024
and 4096 states (plain `jax.vmap`, and `lax.map` over chunks of 32 and 128 states), and one
`jax.grad` of a 100-step rollout (loss: final base height, gradient with respect to the torques).

Rows (see benchmarks/README.md):
- jaxsim_like (implicit and explicit) and jaxsim in float64, with the SAME collidable points: jaxsim_like is loaded with
  JaxsimPoints, which gives each link exactly the points jaxsim gives it (box corners, 50-point
  spheres; no points on cylinders and meshes);
- jaxsim_like in float32 and MJX (float32, its default) in a subprocess with JAX_ENABLE_X64=0
  (x64 is process-wide), MJX on the same URDF converted by MuJoCo, and on the humanoid also on
  MuJoCo's own humanoid;
- diagnostics for jaxsim_like (float64): the step without collidable points, with its default
  sampling (meshes included), and forward dynamics alone, to show what the step time is made of.

It prints the tables and the target ratios and writes benchmarks/results/step-<model>.json.
A step costs what it costs per call; what a user pays is the cost per simulated second, which
depends on the largest step a library survives: ``--per-second`` adds that table for the same
models (:mod:`benchmarks.simulated_seconds`, with its options).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import jax
import jax.numpy as jnp
import numpy as np

import jaxsim_like as js
from benchmarks import models, simulated_seconds, timing
from jaxsim_like.parsers.description import LinkDescription
from jaxsim_like.parsers.shapes import box_points
from jaxsim_like.simulation.step import contact_point_positions

DT = 0.001
DEPTH = 5e-4
JOINT_SPREAD = 0.02
HORIZON = 100
CHUNKS = (32, 128)
TARGETS = (
    # (description, figure, peer, limit, sense): ratio = ours / peer must be <= or >= limit.
    ("step in-graph, jaxsim_like / jaxsim", "in_graph_us", "jaxsim", 0.25, "<="),
    ("step dispatched, jaxsim_like / jaxsim", "dispatched_us", "jaxsim", 0.25, "<="),
    ("100-step rollout gradient, jaxsim_like / jaxsim", "grad_ms", "jaxsim", 0.25, "<="),
    ("step compile, jaxsim_like / jaxsim", "compile_s", "jaxsim", 0.5, "<="),
    ("batched steps/s (best, B >= 64), jaxsim_like / jaxsim", "peak_steps_per_s", "jaxsim", 2.0, ">="),
    ("batched steps/s (best, B >= 64), jaxsim_like float32 / MJX", "peak_steps_per_s", "mjx", 1.0, ">="),
    ("step in-graph, implicit / explicit (jaxsim_like)", "in_graph_us", "jaxsim_like explicit", 2.0, "<="),
)


@dataclasses.dataclass(frozen=True)
class JaxsimPoints(js.ContactSampling):
    """The collidable points jaxsim 0.9 gives a link, for jaxsim_like.load_model: the 8 corners of
    each box, `sphere_points` points of jaxsim's Fibonacci lattice (axis y) on each sphere, nothing
    on other shapes (jaxsim skips cylinders, and meshes unless JAXSIM_COLLISION_MESH_ENABLED=1)."""

    sphere_points: int = int(os.environ.get("JAXSIM_COLLISION_SPHERE_POINTS", "50"))

    def points(self, link: LinkDescription) -> np.ndarray:
        """Collidable points `(P, 3)` of `link` in its frame."""
        blocks = [np.zeros((0, 3))]
        for collision in link.collisions:
            geometry = collision.geometry
            if geometry.type == "box":
                G_points = box_points(np.asarray(geometry.size, dtype=float))
            elif geometry.type == "sphere":
                G_points = geometry.radius * jaxsim_fibonacci_sphere(self.sphere_points)
            else:
                continue
            L_H_G = np.asarray(collision.L_H_G, dtype=float)
            blocks.append(G_points @ L_H_G[:3, :3].T + L_H_G[:3, 3])
        return np.concatenate(blocks, axis=0)


@dataclasses.dataclass(frozen=True)
class NoPoints(js.ContactSampling):
    """No collidable point on any link (the step without contact computations)."""

    def points(self, link: LinkDescription) -> np.ndarray:
        """An empty `(0, 3)` array."""
        return np.zeros((0, 3))


def jaxsim_fibonacci_sphere(samples: int) -> np.ndarray:
    """Unit-sphere points `(samples, 3)` as jaxsim's `create_sphere_collision` lays them (from +y to -y)."""
    golden = np.pi * (3.0 - np.sqrt(5.0))
    index = np.arange(samples)
    y = 1.0 - 2.0 * index / (samples - 1)
    ring = np.sqrt(np.clip(1.0 - y**2, 0.0, None))
    return np.stack([np.cos(golden * index) * ring, y, np.sin(golden * index) * ring], axis=1)


def joint_offsets(names: Sequence[str], size: int, seed: int = 0) -> np.ndarray:
    """Joint positions `(size, n)` [rad or m] for batched states, uniform in +-JOINT_SPREAD; a
    joint gets the same values in every library (columns drawn by sorted name, returned in `names` order)."""
    ordered = sorted(names)
    values = np.random.default_rng(seed).uniform(-JOINT_SPREAD, JOINT_SPREAD, size=(size, len(ordered)))
    return values[:, [ordered.index(name) for name in names]]


def standing_base_position(model: js.Model, depth: float = DEPTH) -> np.ndarray:
    """Base position (upright, joints at zero) that puts the lowest collidable point `depth` [m] below the ground."""
    state = js.State.build(model, base_position=np.zeros(3), base_quaternion=[1.0, 0.0, 0.0, 0.0])
    lowest = float(jnp.min(contact_point_positions(model, state)[:, 2]))
    return np.array([0.0, 0.0, -lowest - depth])


def our_subject(
    path: Path, sampling: js.ContactSampling, label: str, base_position: np.ndarray | None = None, integrator: str = "implicit_euler"
) -> tuple[timing.StepSubject, js.Model]:
    """jaxsim_like's step (`js.step`, default SimulationParams with dt = DT and `integrator`)
    standing on the ground, and the model; float64 or float32 as jax's x64 flag says."""
    model = js.load_model(str(path), contact_sampling=sampling)
    params = js.SimulationParams.build(model, dt=DT, integrator=integrator)
    base = standing_base_position(model) if base_position is None else np.asarray(base_position)
    names = list(model.joint_names)

    def build(joint_positions: jax.Array) -> js.State:
        return js.State.build(
            model, base_position=base, base_quaternion=[1.0, 0.0, 0.0, 0.0], joint_positions=joint_positions
        )

    def step(constants: tuple, state: js.State, torques: jax.Array) -> js.State:
        model, params = constants
        return js.step(model, state, joint_torques=torques, params=params)[0]

    def final_base_height(constants: tuple, state: js.State, torques: jax.Array) -> jax.Array:
        model, params = constants
        return js.rollout(model, state, torques, params=params)[0].base_position[2]

    build_batch = jax.jit(jax.vmap(build))
    dtype = model.link_mass.dtype

    def batch(size: int) -> tuple:
        return build_batch(jnp.asarray(joint_offsets(names, size), dtype)), jnp.zeros((size, model.dofs), dtype)

    state = build(jnp.zeros(model.dofs, dtype))
    _, outputs = jax.jit(lambda s: js.step(model, s, joint_torques=jnp.zeros(model.dofs, dtype), params=params))(state)
    info = {
        "dtype": str(dtype),
        "points": len(model.point_link),
        "points_in_contact": int(jnp.sum(outputs.in_contact)),
        "base_height": float(base[2]),
    }
    subject = timing.StepSubject(
        library=label,
        constants=(model, params),
        state=state,
        torques=jnp.zeros(model.dofs, dtype),
        step=step,
        batch=batch,
        final_loss=final_base_height,
        info=info,
    )
    return subject, model


def point_set_distance(a: np.ndarray, b: np.ndarray) -> float:
    """Hausdorff distance [m] between two point sets `(P, 3)`, `(Q, 3)` (inf if only one is empty)."""
    if len(a) == 0 or len(b) == 0:
        return 0.0 if len(a) == len(b) else float("inf")
    distances = np.linalg.norm(a[:, None, :] - b[None, :, :], axis=-1)
    return float(max(distances.min(axis=1).max(), distances.min(axis=0).max()))


def measured(subject: timing.StepSubject, quick: bool, sizes: Sequence[int]) -> dict:
    """The figures of a subject as one result row (library, info and timing.measure_step's figures)."""
    print(f"  timing {subject.library} ({subject.info.get('dtype')})", flush=True)
    start = time.perf_counter()
    figures = timing.measure_step(subject, sizes=sizes, quick=quick, chunks=CHUNKS, horizon=HORIZON)
    summary = ", ".join(f"{key} {timing.format_value(figures.get(key))}" for key in ("compile_s", "dispatched_us", "in_graph_us", "grad_ms"))
    print(f"  {subject.library}: {summary} ({time.perf_counter() - start:.0f} s)", flush=True)
    return {"library": subject.library, **subject.info, **figures}


def diagnostics(path: Path, base_position: np.ndarray, quick: bool) -> list[dict]:
    """What jaxsim_like's step time is made of (float64, base at `base_position`): compile and
    in-graph time of the step with no collidable points, with jaxsim's points and with its default
    sampling, and in-graph time of forward dynamics alone."""
    rows = []
    iterations, repeats = (20, 3) if quick else (100, 7)
    for variant, sampling in (("no points", NoPoints()), ("jaxsim points", JaxsimPoints()), ("default sampling", js.ContactSampling())):
        subject, model = our_subject(path, sampling, "jaxsim_like", base_position)
        arguments = (subject.constants, subject.state, subject.torques)
        compile_s, _ = timing.compiled(subject.step, *arguments)
        _, loop = timing.compiled(timing.chained_loop(subject.step, iterations), *arguments)
        in_graph = timing.call_time(loop, *arguments, repeats=repeats, warmup=1) / iterations
        rows.append({"variant": f"step, {variant}", "points": len(model.point_link), "compile_s": compile_s, "in_graph_us": in_graph})

    def forward(model: js.Model, state: js.State, torques: jax.Array) -> tuple:
        return js.dynamics.forward_dynamics(model, state, joint_torques=torques)

    model = subject.constants[0]
    in_graph = timing.in_graph(forward, model, subject.state, subject.torques, iterations=iterations, repeats=repeats, constant_argnums=(0,))
    rows.append({"variant": "forward dynamics (ABA) alone", "points": None, "compile_s": None, "in_graph_us": in_graph})
    return rows


def import_jaxsim_step_peer() -> tuple[ModuleType | None, str | None]:
    """The jaxsim step peer, or None and why it cannot be used."""
    if shutil.which("gz") is None and shutil.which("ign") is None:
        return None, "jaxsim skipped: neither `gz` nor `ign` on PATH (apt-get install ignition-tools libsdformat-dev)"
    try:
        from benchmarks.peers import jaxsim_step_peer
    except ImportError as error:
        return None, f"jaxsim skipped: {error}"
    return jaxsim_step_peer, None


def float64_rows(name: str, path: Path, quick: bool, sizes: Sequence[int]) -> tuple[list[dict], list[dict], dict, list[str]]:
    """jaxsim_like and jaxsim rows (float64), the diagnostics, the point check and skip messages."""
    ours, our_model = our_subject(path, JaxsimPoints(), "jaxsim_like")
    explicit, _ = our_subject(path, JaxsimPoints(), "jaxsim_like explicit", integrator="semi_implicit_euler")
    rows = [measured(ours, quick, sizes), measured(explicit, quick, sizes)]
    skipped = []
    check: dict = {"jaxsim_like_points": len(our_model.point_link)}
    peer, reason = import_jaxsim_step_peer()
    if peer is None:
        skipped.append(f"[{name}] {reason}")
        print(skipped[-1], flush=True)
    else:
        theirs, their_model = peer.subject(str(path), DT, ours.info["base_height"] * np.array([0.0, 0.0, 1.0]), joint_offsets)
        our_points = np.asarray(contact_point_positions(our_model, ours.state))
        their_points = peer.point_positions(their_model, theirs.state)
        theirs.info["points_in_contact"] = int((their_points[:, 2] < -1e-9).sum())
        check.update(
            jaxsim_points=len(their_points),
            max_point_distance_m=point_set_distance(our_points, their_points),
            jaxsim_version=peer.VERSION,
        )
        rows.append(measured(theirs, quick, sizes))
    print(f"  diagnostics ({name})", flush=True)
    return rows, diagnostics(path, ours.info["base_height"] * np.array([0.0, 0.0, 1.0]), quick), check, skipped


def float32_rows(
    name: str, path: Path, quick: bool, sizes: Sequence[int], mujoco_humanoid: bool
) -> tuple[list[dict], list[str], dict]:
    """jaxsim_like and MJX rows in float32 (run with x64 off), skip messages and versions."""
    ours, _ = our_subject(path, JaxsimPoints(), "jaxsim_like")
    explicit, _ = our_subject(path, JaxsimPoints(), "jaxsim_like explicit", integrator="semi_implicit_euler")
    rows = [measured(ours, quick, sizes), measured(explicit, quick, sizes)]
    try:
        from benchmarks.peers import mjx_peer
    except ImportError as error:
        return rows, [f"[{name}] mjx skipped: {error}"], {}
    rows.append(measured(mjx_peer.subject(path, DT, joint_offsets, depth=DEPTH), quick, sizes))
    if mujoco_humanoid and name == "humanoid":
        humanoid = mjx_peer.subject(mjx_peer.MUJOCO_HUMANOID, DT, joint_offsets, "mjx (MuJoCo humanoid)", DEPTH)
        rows.append(measured(humanoid, quick, sizes))
    return rows, [], {"mujoco": mjx_peer.VERSION}


def run_float32_worker(
    name: str, quick: bool, sizes: Sequence[int], mujoco_humanoid: bool
) -> tuple[list[dict], list[str], dict]:
    """float32_rows in a subprocess with JAX_ENABLE_X64=0; its rows, skip messages and versions."""
    with tempfile.TemporaryDirectory() as directory:
        output = Path(directory) / "float32.json"
        command = [sys.executable, __file__, "--float32-worker", "--model", name, "--output", str(output)]
        command += ["--sizes", *map(str, sizes)] + (["--quick"] if quick else [])
        command += [] if mujoco_humanoid else ["--no-mujoco-humanoid"]
        completed = subprocess.run(command, env={**os.environ, "JAX_ENABLE_X64": "0"}, check=False)
        if completed.returncode != 0 or not output.is_file():
            return [], [f"[{name}] float32 part failed (exit {completed.returncode}): see its output above"], {}
        result = json.loads(output.read_text())
    return result["rows"], result["skipped"], result["versions"]


def best_throughput(row: dict, size: int) -> tuple[float | None, str | None, float | None]:
    """Best steps/s at batch `size` over the methods, that method, and plain vmap's steps/s."""
    entries = [entry for entry in row.get("throughput", []) if entry["batch"] == size]
    if not entries:
        return None, None, None
    best = max(entries, key=lambda entry: entry["steps_per_s"])
    vmap = next((entry["steps_per_s"] for entry in entries if entry["method"] == "vmap"), None)
    return best["steps_per_s"], best["method"], vmap


def peak_throughput(row: dict) -> float | None:
    """Best steps/s over the methods and the batch sizes >= 64."""
    values = [entry["steps_per_s"] for entry in row.get("throughput", []) if entry["batch"] >= 64]
    return max(values) if values else None


def _figure(rows: list[dict], library: str, dtype: str | None, key: str) -> float | None:
    for row in rows:
        if row["library"] == library and (dtype is None or row.get("dtype") == dtype):
            return peak_throughput(row) if key == "peak_steps_per_s" else row.get(key)
    return None


def ratios(model: str, rows: list[dict]) -> list[dict]:
    """The issue's targets for one model: ratio, limit and whether it is met (None if unmeasured)."""
    result = []
    for target, key, peer, limit, sense in TARGETS:
        ours_dtype = "float32" if peer == "mjx" else "float64"
        mine, theirs = _figure(rows, "jaxsim_like", ours_dtype, key), _figure(rows, peer, None, key)
        ratio = mine / theirs if mine is not None and theirs else None
        met = None if ratio is None else (ratio <= limit if sense == "<=" else ratio >= limit)
        result.append(
            {"model": model, "target": target, "jaxsim_like": mine, "peer": theirs, "ratio": ratio, "limit": f"{sense} {limit}", "met": met}
        )
    return result


def step_table(model: str, rows: list[dict]) -> list[dict]:
    """One line per row: single-step and gradient figures."""
    return [
        {
            "model": model,
            "library": row["library"],
            "dtype": row.get("dtype"),
            "points": row.get("points", row.get("geoms_on_ground")),
            "in_contact": row.get("points_in_contact", row.get("penetrating")),
            "compile_s": row.get("compile_s"),
            "dispatched_us": row.get("dispatched_us"),
            "noop_us": row.get("noop_dispatched_us"),
            "in_graph_us": row.get("in_graph_us"),
            "grad_compile_s": row.get("grad_compile_s"),
            "grad100_ms": row.get("grad_ms"),
            "grad_finite": row.get("grad_finite"),
        }
        for row in rows
    ]


def throughput_table(model: str, rows: list[dict], sizes: Sequence[int]) -> list[dict]:
    """Two lines per row: steps/s with plain vmap, and the best method at each batch size."""
    lines = []
    for row in rows:
        vmap_line = {"model": model, "library": row["library"], "dtype": row.get("dtype"), "method": "vmap"}
        best_line = {**vmap_line, "method": "best"}
        for size in sizes:
            best, method, vmap = best_throughput(row, size)
            vmap_line[f"B={size}"] = vmap
            best_line[f"B={size}"] = None if best is None else f"{timing.format_value(best)} ({method})"
        lines += [vmap_line, best_line]
    return lines


def benchmark_model(name: str, path: Path, quick: bool, sizes: Sequence[int], mujoco_humanoid: bool) -> dict:
    """Every row for one model: float64 in this process, float32 in a subprocess."""
    print(f"[{name}] {path}: float64 (jaxsim_like, jaxsim)", flush=True)
    rows, diagnostic_rows, check, skipped = float64_rows(name, path, quick, sizes)
    print(f"[{name}] float32 (jaxsim_like, MJX) in a subprocess with JAX_ENABLE_X64=0", flush=True)
    rows32, skipped32, versions = run_float32_worker(name, quick, sizes, mujoco_humanoid)
    rows += rows32
    return {
        "model": name,
        "urdf": str(path),
        "dt": DT,
        "depth": DEPTH,
        "horizon": HORIZON,
        "rows": rows,
        "diagnostics": diagnostic_rows,
        "points_check": check,
        "ratios": ratios(name, rows),
        "skipped": skipped + skipped32,
        "versions": versions,
    }


def worker_main(arguments: argparse.Namespace) -> None:
    """The float32 part for one model: rows written as JSON to `arguments.output`."""
    path = models.model_paths(arguments.model)[arguments.model]
    rows, skipped, versions = float32_rows(arguments.model, path, arguments.quick, arguments.sizes, arguments.mujoco_humanoid)
    Path(arguments.output).write_text(json.dumps({"rows": rows, "skipped": skipped, "versions": versions}, default=float))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=models.CHOICES, default="all")
    parser.add_argument("--quick", action="store_true", help="fewer repeats, 2 steps per batched call (same batch sizes)")
    parser.add_argument(
        "--no-mujoco-humanoid", dest="mujoco_humanoid", action="store_false", help="skip MJX on MuJoCo's own humanoid"
    )
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=list(timing.BATCH_SIZES), help="batch sizes (default: 1 64 1024 4096)"
    )
    parser.add_argument("--per-second", action="store_true", help="then the per-simulated-second table (benchmarks/simulated_seconds.py)")
    simulated_seconds.add_arguments(parser)
    parser.add_argument("--float32-worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--output", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.float32_worker:
        worker_main(arguments)
        return
    jax.config.update("jax_enable_x64", True)

    results, skipped = [], []
    for name, path in models.model_paths(arguments.model).items():
        if not path.is_file():
            skipped.append(f"[{name}] skipped: {path} does not exist")
            print(skipped[-1], flush=True)
            continue
        result = benchmark_model(name, path, arguments.quick, arguments.sizes, arguments.mujoco_humanoid)
        skipped += result["skipped"]
        results.append(result)
        output = timing.write_json(
            f"step-{name}.json", {"environment": timing.environment(), "quick": arguments.quick, **result}
        )
        print(f"[{name}] wrote {output}", flush=True)

    print()
    if results:
        timing.print_table([line for result in results for line in step_table(result["model"], result["rows"])])
        print("(points: collidable points; MJX: geoms that touch the ground. in_contact: points (contacts for MJX) below the ground.)\n")
        timing.print_table(
            [line for result in results for line in throughput_table(result["model"], result["rows"], arguments.sizes)]
        )
        print("(steps/s: batch size x steps per call / seconds per call.)\n")
        timing.print_table([{"model": result["model"], **row} for result in results for row in result["diagnostics"]])
        print()
        timing.print_table([{"model": result["model"], **result["points_check"]} for result in results])
        print()
        timing.print_table([entry for result in results for entry in result["ratios"]])
    for message in skipped:
        print(message)
    if arguments.per_second:
        print("\nper simulated second:", flush=True)
        simulated_seconds.run_from(arguments, arguments.model)


if __name__ == "__main__":
    main()
