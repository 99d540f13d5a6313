#!/usr/bin/env bash
# jaxsim_like on one CUDA GPU: step, rollout and batched throughput, one table, in under 5 minutes.
#
#   bash benchmarks/gpu.sh [MODEL]        # MODEL: a shipped model (default humanoid)
#
# Needs a CUDA 12 driver (nvidia-smi) and Python >= 3.10 with jaxsim_like's dependencies. If JAX
# has no GPU backend yet, it installs "jax[cuda12]" offline from the wheels in $WHEELS (default
# .whl/ at the repository root; nothing is downloaded). Environment:
#   WHEELS=DIR      wheels of jax[cuda12] and its CUDA libraries (pip install --no-index --find-links DIR)
#   BUDGET_S=270    seconds the whole script may take; parts past the budget are skipped and say so
#   STEPS=100       steps per rollout in the throughput part
#   BATCHES="1 16 256 1024 4096 16384 65536"   batch sizes of the throughput part
#   ALLOW_CPU=1     run on whatever backend JAX has (to check the script on a machine without a GPU)
#
# Parts:
#   1. benchmarks/step.py (if present): its jaxsim_like rows, on the GPU, with --device gpu when it
#      has that flag (otherwise --quick on JAX's default backend, the GPU), within a time slice;
#   2. float64 and float32: compile time and time of one jitted step (dispatched) and of a
#      1000-step rollout (in-graph, one world);
#   3. float32 throughput: jaxsim_like.batching.simulate_batch (jit(shard_map(vmap(scan))), the
#      batch on the GPU, chunk_size=None, final states only) for batches 1, 16, 256, 1024, 4096,
#      16384, 65536 ($BATCHES): compile seconds and world-steps per second. A batch that does not
#      fit in memory prints its error and the next is tried; batches past the budget are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."

MODEL="${1:-humanoid}"
WHEELS="${WHEELS:-.whl}"
BUDGET_S="${BUDGET_S:-270}"
STEPS="${STEPS:-100}"
BATCHES="${BATCHES:-1 16 256 1024 4096 16384 65536}"
ALLOW_CPU="${ALLOW_CPU:-0}"
PYTHON="${PYTHON:-python3}"
START_S=$(date +%s)
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export XLA_PYTHON_CLIENT_PREALLOCATE=false

left_s() { echo $(( BUDGET_S - ($(date +%s) - START_S) )); }

echo "================================================================================"
echo " jaxsim_like GPU benchmark: model ${MODEL}, $(date -u '+%Y-%m-%d %H:%M UTC'), host $(hostname)"
if command -v nvidia-smi >/dev/null 2>&1; then
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | sed 's/^/ GPU: /'
elif [ "$ALLOW_CPU" != 1 ]; then
    echo " nvidia-smi not found: this script needs a CUDA machine" >&2
    exit 1
fi
echo "================================================================================"

if [ "$ALLOW_CPU" = 1 ]; then
    echo "ALLOW_CPU=1: running on JAX's default backend, whatever it is"
elif ! "$PYTHON" -c 'import jax, sys; sys.exit(0 if jax.default_backend() == "gpu" else 1)' 2>/dev/null; then
    if [ ! -d "$WHEELS" ]; then
        echo "JAX has no GPU backend and there is no wheel folder $WHEELS (set WHEELS=DIR)" >&2
        exit 1
    fi
    echo "installing jax[cuda12] from $WHEELS (offline)"
    "$PYTHON" -m pip install --quiet --no-index --find-links "$WHEELS" -U "jax[cuda12]"
fi
ALLOW_CPU="$ALLOW_CPU" "$PYTHON" - <<'EOF'
import jax, os, sys
if jax.default_backend() != "gpu" and os.environ["ALLOW_CPU"] != "1":
    sys.exit(f"JAX still runs on {jax.default_backend()}: check the CUDA driver and the jax[cuda12] wheels")
print(f"jax {jax.__version__} on {jax.devices()}")
EOF

echo
echo "--- 1. benchmarks/step.py -------------------------------------------------------"
if [ -f benchmarks/step.py ]; then
    slice_s=$(( $(left_s) / 3 ))
    if "$PYTHON" benchmarks/step.py --help 2>/dev/null | grep -q -- "--device"; then
        step_args=(--model "$MODEL" --device gpu)
    else
        step_args=(--model "$MODEL" --quick)
    fi
    if [ "$MODEL" != humanoid ] && ! "$PYTHON" benchmarks/step.py --help 2>/dev/null | grep -q -- "$MODEL"; then
        echo "benchmarks/step.py does not know model $MODEL: skipped"
    else
        echo "python benchmarks/step.py ${step_args[*]}   (at most ${slice_s} s)"
        timeout --signal=INT "${slice_s}" "$PYTHON" benchmarks/step.py "${step_args[@]}" \
            || echo "benchmarks/step.py stopped (exit $?): out of its time slice or failed; continuing"
    fi
else
    echo "benchmarks/step.py not present: skipped"
fi

run_part() {  # run_part X64 PART: the Python part below, float64 (1) or float32 (0)
    local budget
    budget=$(left_s)
    if [ "$budget" -le 10 ]; then
        echo "(skipped: time budget spent)"
        return 0
    fi
    JAX_ENABLE_X64="$1" PART="$2" MODEL="$MODEL" STEPS="$STEPS" BATCHES="$BATCHES" PART_BUDGET_S="$budget" \
        timeout --signal=INT "$budget" "$PYTHON" - <<'EOF' || echo "(stopped: exit $?)"
import os
import time

import jax
import jax.numpy as jnp
import numpy as np

import jaxsim_like as js
from jaxsim_like.batching import simulate_batch
from jaxsim_like.simulation.step import contact_point_positions

started = time.perf_counter()
budget = float(os.environ["PART_BUDGET_S"]) - 5.0
part, steps = os.environ["PART"], int(os.environ["STEPS"])
model = js.load_model(js.models.path(os.environ["MODEL"]))
params = js.SimulationParams.build(model, dt=0.001)
dtype = "float64" if jax.config.jax_enable_x64 else "float32"


def standing(model):
    """The default pose with the lowest collidable point 1 mm into the ground (contacts active)."""
    state = js.State.build(model)
    if model.floating_base and model.point_link:
        lowest = jnp.min(contact_point_positions(model, state)[:, 2])
        state = state.replace(base_position=state.base_position.at[2].add(-lowest - 1e-3))
    return state


def timed(call, repeats):
    samples = []
    for _ in range(repeats):
        begin = time.perf_counter()
        jax.block_until_ready(call())
        samples.append(time.perf_counter() - begin)
    return float(np.median(samples))


state = standing(model)
row = "{:10s} {:8s} {:>7s} {:>6s} {:>10s} {:>16s} {:>14s}"
if part == "single":
    tau = jnp.zeros(model.dofs, state.joint_positions.dtype)
    begin = time.perf_counter()
    stepper = jax.jit(lambda s, u: js.step(model, s, joint_torques=u, params=params)).lower(state, tau).compile()
    compile_s = time.perf_counter() - begin
    per_call = timed(lambda: stepper(state, tau), 200)
    print(row.format(model.name, dtype, "step", "1", f"{compile_s:.2f}", f"{1 / per_call:,.0f}", f"{per_call * 1e6:.1f} us"))
    horizon = 1000
    torques = jnp.zeros((horizon, model.dofs), state.joint_positions.dtype)
    begin = time.perf_counter()
    roller = jax.jit(lambda s, u: js.rollout(model, s, u, params=params)[0]).lower(state, torques).compile()
    compile_s = time.perf_counter() - begin
    run_s = timed(lambda: roller(state, torques), 5)
    print(row.format(model.name, dtype, "rollout", "1", f"{compile_s:.2f}", f"{horizon / run_s:,.0f}", f"{run_s / horizon * 1e6:.2f} us"))
else:
    torques = np.zeros((steps, model.dofs), dtype)
    for batch in (int(b) for b in os.environ["BATCHES"].split()):
        if time.perf_counter() - started > budget:
            print(row.format(model.name, dtype, "batch", str(batch), "-", "skipped: budget", "-"))
            continue
        states = jax.tree.map(lambda x: jnp.broadcast_to(x, (batch, *x.shape)), state)

        def call():
            return simulate_batch(model, states, torques, params=params, chunk_size=None, trajectory=False)[0]

        try:
            begin = time.perf_counter()
            jax.block_until_ready(call())
            first_s = time.perf_counter() - begin
            run_s = timed(call, 3)
        except Exception as error:  # out of GPU memory at the largest batches: report and go on
            print(row.format(model.name, dtype, "batch", str(batch), "-", type(error).__name__, str(error)[:40]))
            continue
        per = run_s / (batch * steps)
        print(row.format(model.name, dtype, "batch", str(batch), f"{max(first_s - run_s, 0):.2f}",
                         f"{batch * steps / run_s:,.0f}", f"{per * 1e9:.1f} ns"))
EOF
}

echo
echo "--- 2. step and rollout (one world) ---------------------------------------------"
printf '%-10s %-8s %7s %6s %10s %16s %14s\n' model dtype what batch compile_s "steps/s" "per step"
run_part 1 single
run_part 0 single

echo
echo "--- 3. throughput, float32, ${STEPS}-step rollouts, final states only --------------"
printf '%-10s %-8s %7s %6s %10s %16s %14s\n' model dtype what batch compile_s "world-steps/s" "per world-step"
run_part 0 batch

echo
echo "done in $(( $(date +%s) - START_S )) s (budget ${BUDGET_S} s)"
