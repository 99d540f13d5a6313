"""Peak resident memory of ``jaxsim-like simulate``: flat in the duration, bounded in the batch.

Each case runs the command line in its own process, one after the other (``os.wait4`` gives
that process's peak RSS), with the default options (float32, final states and statistics
only) unless ``--out`` adds a streamed recording:

    python -m benchmarks.memory                       # iCub 2, 30, 120 s; humanoid batch 64, 256, 1024
    python -m benchmarks.memory --cases icub:2,icub:30 --out   # also stream every 10th step to an .npz

A case is ``model:seconds`` or ``model:seconds:batch``; ``icub`` is iCubGazeboV2_5 of ``icub-models``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

DEFAULT_CASES = "icub:2,icub:30,icub:120,humanoid:2:64,humanoid:2:256,humanoid:2:1024"


def _model(name: str) -> str:
    if name == "icub":
        import icub_models

        return str(icub_models.get_model_file("iCubGazeboV2_5"))
    return name


def run_case(model: str, seconds: float, batch: int, out: str | None) -> dict:
    """Run one ``simulate`` and return its peak RSS [MB], wall time [s] and exit status."""
    command = [sys.executable, "-m", "jaxsim_like", "simulate", _model(model), "--duration", str(seconds), "--batch", str(batch), "--quiet"]
    if out:
        command += ["--out", out, "--every", "10"]
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return {
        "model": model,
        "seconds": seconds,
        "batch": batch,
        "peak_rss_mb": usage.ru_maxrss / 1024,
        "wall_s": time.perf_counter() - started,
        "status": process.returncode,
        "run_line": next((line for line in output.splitlines() if line.startswith("run ")), output.strip()[-200:]),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=DEFAULT_CASES, help=f"comma-separated model:seconds[:batch] (default {DEFAULT_CASES})")
    parser.add_argument("--out", action="store_true", help="also stream every 10th step of every world to a temporary .npz")
    args = parser.parse_args()
    print("| model | simulated | worlds | peak RSS | wall | exit | run |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for case in args.cases.split(","):
            model, seconds, *rest = case.split(":")
            out = os.path.join(folder, "run.npz") if args.out else None
            row = run_case(model, float(seconds), int(rest[0]) if rest else 1, out)
            print(
                f"| {row['model']} | {row['seconds']:g} s | {row['batch']} | {row['peak_rss_mb']:,.0f} MB | {row['wall_s']:.0f} s "
                f"| {row['status']} | {row['run_line'].removeprefix('run').strip()} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
