"""MuJoCo C's own humanoid, the per-simulated-second rows' model, at larger steps.

The limp drops of :mod:`benchmarks.simulated_seconds` (MuJoCo's humanoid MJCF at its own options,
the joints offset as in its MuJoCo C rows, float64) at 5, 10 and 20 ms, with the file's solver
iterations and with MuJoCo's defaults (100, line search 50): how many of 16 drops MuJoCo reports
unstable (``mjWARN_BADQACC``: a NaN, Inf or huge acceleration, after which it resets the state)
within 5 s, and so the largest step of MuJoCo C's row.

    python -m benchmarks.mujoco_humanoid_steps
"""

from __future__ import annotations

import mujoco

from benchmarks import simulated_seconds

DROPS, SECONDS = 16, 5.0
STEPS = (0.005, 0.01, 0.02)  # [s]
DEFAULT_ITERATIONS = (100, 50)  # MuJoCo's default solver and line-search iterations


def unstable_drops(dt: float, iterations: tuple[int, int] | None) -> tuple[int, str]:
    """How many of ``DROPS`` drops at ``dt`` [s] MuJoCo reports unstable within ``SECONDS``, and the
    solver options they ran with (``iterations``: (solver, line search); None: the file's)."""
    model, initial = simulated_seconds.mujoco_c_drops(simulated_seconds.MUJOCO_C_OWN, "", dt)
    if iterations is not None:
        model.opt.iterations, model.opt.ls_iterations = iterations
    data = mujoco.MjData(model)
    unstable = 0
    for state in initial(DROPS):
        mujoco.mj_setState(model, data, state, mujoco.mjtState.mjSTATE_FULLPHYSICS)
        for _ in range(int(round(SECONDS / dt))):
            mujoco.mj_step(model, data)
        unstable += int(data.warning[mujoco.mjtWarning.mjWARN_BADQACC].number > 0)
    return unstable, f"iterations {model.opt.iterations}, line search {model.opt.ls_iterations}"


def main() -> None:
    print("| solver | step | drops unstable within 5 s |\n|---|---|---|")
    for iterations in (None, DEFAULT_ITERATIONS):
        for dt in STEPS:
            unstable, options = unstable_drops(dt, iterations)
            print(f"| {options} | {dt * 1e3:g} ms | {unstable}/{DROPS} |", flush=True)


if __name__ == "__main__":
    main()
