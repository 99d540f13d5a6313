"""Dynamics benchmark: jaxsim_like against jaxsim (PyPI) and Pinocchio, all in one run.

    python benchmarks/dynamics.py [--model humanoid|icub|all] [--quick]

For each model and algorithm (FK, RNEA, CRBA, ABA) it prints compile time, dispatched single call,
in-graph single call and vmapped batches of 1/64/1024/4096 (per batch / per state), checks ABA of
both JAX libraries against `pinocchio.aba` on one random state, prints the ratios the project
targets, and writes benchmarks/results/dynamics-<model>.json. Everything runs in float64.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import jax
import numpy as np
import pinocchio

from benchmarks import models, ours, timing
from benchmarks import states as st
from benchmarks.peers import import_jaxsim_peer, pinocchio_peer

TARGETS = (
    ("in-graph ABA, jaxsim_like / jaxsim", "in_graph_us", "jaxsim", 0.25),
    ("dispatched ABA, jaxsim_like / jaxsim", "dispatched_us", "jaxsim", 0.2),
    ("compile ABA, jaxsim_like / jaxsim", "compile_s", "jaxsim", 0.5),
    ("ABA per state at 4096, jaxsim_like / Pinocchio call", "per_state_4096_us", "pinocchio", 1.0),
    ("ABA per state at 4096 in chunks (chunked_vmap) / Pinocchio call", "chunked_per_state_4096_us", "pinocchio", 1.0),
)


def aba_agreement(
    library: str,
    aba: Callable[[dict], tuple[np.ndarray, np.ndarray]],
    names: list[str],
    pin_model: pinocchio.Model,
) -> dict:
    """Max |difference| of a library's ABA (mixed representation) from Pinocchio's on one random state."""
    state = st.take(st.random_states(len(names), 1, seed=1), 0)
    base_mixed, joints = aba(state)
    base = st.mixed_to_body_acceleration(state["base_quaternion"], state["base_velocity"], base_mixed)
    reference_base, reference_joints = pinocchio_peer.aba(pin_model, state, names)
    error = max(np.abs(base - reference_base).max(), np.abs(joints - reference_joints).max())
    scale = max(np.abs(reference_base).max(), np.abs(reference_joints).max())
    return {"library": library, "aba_max_abs_error": float(error), "aba_max_abs_reference": float(scale)}


def _batch_figure(row: dict, size: int, key: str, kind: str = "batched") -> float | None:
    for entry in row.get(kind, []):
        if entry["batch"] == size:
            return entry[key]
    return None


def _figure(rows: list[dict], library: str, key: str) -> float | None:
    for row in rows:
        if row["library"] == library and row["algorithm"] == "ABA":
            if library == "pinocchio":
                return row["single_us"]
            if key == "per_state_4096_us":
                return _batch_figure(row, 4096, "per_state_us")
            if key == "chunked_per_state_4096_us":
                return _batch_figure(row, 4096, "per_state_us", "chunked")
            return row[key]
    return None


def ratios(model: str, rows: list[dict]) -> list[dict]:
    """The project's targets for one model: ratio, limit and whether it is met (None if unmeasured)."""
    result = []
    for target, key, peer, limit in TARGETS:
        mine, theirs = _figure(rows, "jaxsim_like", key), _figure(rows, peer, key)
        ratio = mine / theirs if mine is not None and theirs else None
        result.append(
            {
                "model": model,
                "target": target,
                "jaxsim_like": mine,
                "peer": theirs,
                "ratio": ratio,
                "limit": limit,
                "met": None if ratio is None else ratio <= limit,
            }
        )
    return result


def display_rows(model: str, rows: list[dict], sizes: tuple[int, ...]) -> list[dict]:
    """One table line per library and algorithm; vmap cells read 'µs per batch / µs per state'."""
    lines = []
    for row in rows:
        line = {
            "model": model,
            "library": row["library"],
            "algorithm": row["algorithm"],
            "compile_s": row.get("compile_s"),
            "dispatched_us": row.get("dispatched_us", row.get("single_us")),
            "in_graph_us": row.get("in_graph_us"),
        }
        lines.append({**line, **_batch_cells(row, sizes, "batched")})
        if row.get("chunked"):
            chunked = {**dict.fromkeys(line), "model": model, "library": f"{row['library']} (chunked_vmap)"}
            lines.append({**chunked, "algorithm": row["algorithm"], **_batch_cells(row, sizes, "chunked")})
    return lines


def _batch_cells(row: dict, sizes: Sequence[int], kind: str) -> dict:
    cells = {}
    for size in sizes:
        per_batch = _batch_figure(row, size, "per_batch_us", kind)
        per_state = _batch_figure(row, size, "per_state_us", kind)
        cells[f"vmap{size}_us"] = None if per_batch is None else f"{timing.format_value(per_batch)} / {timing.format_value(per_state)}"
    return cells


def benchmark_model(name: str, path: Path, quick: bool, with_ours: bool, jaxsim_peer: Any) -> dict:
    """All libraries on one URDF: raw rows, ABA agreement with Pinocchio, and target ratios."""
    pin_model = pinocchio_peer.load(path)
    dofs = len(pinocchio_peer.joint_names(pin_model))
    print(f"[{name}] {path} ({dofs} joints)", flush=True)
    rows = pinocchio_peer.timings(path, num_states=100, rounds=3 if quick else 10)
    agreement = []
    if with_ours:
        our_model = ours.load(path)
        names = ours.joint_names(our_model)
        agreement.append(aba_agreement("jaxsim_like", lambda s: ours.aba(our_model, s), names, pin_model))
        print(f"[{name}] timing jaxsim_like", flush=True)
        rows += ours.timings(path, dofs, quick=quick)
    if jaxsim_peer is not None:
        their_model = jaxsim_peer.load(path)
        names = jaxsim_peer.joint_names(their_model)
        agreement.append(aba_agreement("jaxsim", lambda s: jaxsim_peer.aba(their_model, s), names, pin_model))
        print(f"[{name}] timing jaxsim {jaxsim_peer.VERSION}", flush=True)
        rows += jaxsim_peer.timings(path, quick=quick)
    return {
        "model": name,
        "urdf": str(path),
        "dofs": dofs,
        "rows": rows,
        "agreement": [{"model": name, **entry} for entry in agreement],
        "ratios": ratios(name, rows),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=models.CHOICES, default="all")
    parser.add_argument("--quick", action="store_true", help="fewer repeats and iterations (same batch sizes)")
    arguments = parser.parse_args()
    jax.config.update("jax_enable_x64", True)

    skipped = []
    reason = ours.unavailable()
    with_ours = reason is None
    if not with_ours:
        skipped.append(f"jaxsim_like skipped: {reason}")
    jaxsim_peer, reason = import_jaxsim_peer()
    if reason is not None:
        skipped.append(reason)
    for message in skipped:
        print(message, flush=True)

    results = []
    for name, path in models.model_paths(arguments.model).items():
        if not path.is_file():
            skipped.append(f"[{name}] skipped: {path} does not exist")
            print(skipped[-1], flush=True)
            continue
        results.append(benchmark_model(name, path, arguments.quick, with_ours, jaxsim_peer))

    print()
    table = [line for result in results for line in display_rows(result["model"], result["rows"], timing.BATCH_SIZES)]
    if table:
        timing.print_table(table)
        print("(Pinocchio: dispatched_us is a plain Python call; vmap cells: µs per batch / µs per state.)\n")
        timing.print_table([entry for result in results for entry in result["agreement"]])
        print()
        timing.print_table([entry for result in results for entry in result["ratios"]])
    for message in skipped:
        print(message)

    versions = {"pinocchio": pinocchio.__version__}
    if jaxsim_peer is not None:
        versions["jaxsim"] = jaxsim_peer.VERSION
    output = timing.write_json(
        f"dynamics-{arguments.model}.json",
        {
            "environment": {**timing.environment(), **versions},
            "quick": arguments.quick,
            "skipped": skipped,
            "models": results,
        },
    )
    print(f"\nwrote {output}")


if __name__ == "__main__":
    main()
