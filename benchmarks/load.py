"""Model load time: jaxsim_like.load_model against Pinocchio's buildModelFromUrdf (and jaxsim's loader).

    python benchmarks/load.py [--model humanoid|icub|all] [--repeats N] [--no-jaxsim]

Prints the first load and the median of N loads after it, in seconds, and writes
benchmarks/results/load-<model>.json. jaxsim's loader converts URDF with `ign sdf` and processes
meshes (seconds per load), so it runs twice only and can be left out with --no-jaxsim.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import jax

from benchmarks import models, ours, timing
from benchmarks.peers import import_jaxsim_peer, pinocchio_peer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", choices=models.CHOICES, default="all")
    parser.add_argument("--repeats", type=int, default=5, help="loads timed after the first (default 5)")
    parser.add_argument("--no-jaxsim", action="store_true", help="leave out jaxsim's loader")
    arguments = parser.parse_args()
    jax.config.update("jax_enable_x64", True)

    skipped = []
    reason = ours.unavailable()
    if reason is not None:
        skipped.append(f"jaxsim_like skipped: {reason}")
    jaxsim_peer = None
    if not arguments.no_jaxsim:
        jaxsim_peer, jaxsim_reason = import_jaxsim_peer()
        if jaxsim_reason is not None:
            skipped.append(jaxsim_reason)

    rows = []
    for name, path in models.model_paths(arguments.model).items():
        if not path.is_file():
            skipped.append(f"[{name}] skipped: {path} does not exist")
            continue
        if reason is None:
            rows.append({"model": name, "library": "jaxsim_like", **ours.load_time(path, arguments.repeats)})
        rows.append({"model": name, "library": "pinocchio", **pinocchio_peer.load_time(path, 2 * arguments.repeats)})
        if jaxsim_peer is not None:
            rows.append({"model": name, "library": "jaxsim", **jaxsim_peer.load_time(path)})

    if rows:
        timing.print_table(rows)
    for message in skipped:
        print(message)
    output = timing.write_json(
        f"load-{arguments.model}.json", {"environment": timing.environment(), "skipped": skipped, "rows": rows}
    )
    print(f"\nwrote {output}")


if __name__ == "__main__":
    main()
