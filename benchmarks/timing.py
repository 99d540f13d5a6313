"""Shared timing harness for JAX functions: compile time, dispatched calls, in-graph loops, vmap batches.

All times are wall-clock. Compile times are in seconds, everything else in microseconds (µs).
JAX timings on a loaded 2-core machine move by tens of percent between runs: compare figures taken
inside one run, and read medians.
"""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from jaxsim_like._xla import apply_cpu_defaults

# Every library of a run shares these XLA CPU settings (read when the backend starts), so the
# ratios compare the algorithms, not the flags.
apply_cpu_defaults()

import jax
import jax.numpy as jnp

from benchmarks import states as st

RESULTS_DIRECTORY = Path(__file__).resolve().parent / "results"
BATCH_SIZES = (1, 64, 1024, 4096)


def block(tree: Any) -> Any:
    """Wait until every array in `tree` is computed; return `tree`."""
    return jax.block_until_ready(tree)


def compile_time(fn: Callable, *args: Any, repeats: int = 1) -> float:
    """Median seconds to trace, lower and compile `jax.jit(fn)` for `args`, each time from cold caches."""
    samples = []
    for _ in range(repeats):
        jax.clear_caches()
        start = time.perf_counter()
        jax.jit(fn).lower(*args).compile()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def _median_seconds(call: Callable[[], Any], repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        block(call())
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def dispatched(fn: Callable, *args: Any, repeats: int = 200, warmup: int = 5) -> float:
    """Median µs of one call of `jax.jit(fn)(*args)` from Python, after compilation and warm-up."""
    jitted = jax.jit(fn)
    for _ in range(warmup):
        block(jitted(*args))
    return 1e6 * _median_seconds(lambda: jitted(*args), repeats)


def _dependency(outputs: Any) -> jax.Array:
    """A zero scalar that XLA cannot prove zero, computed from every inexact output leaf."""
    total = jnp.zeros(())
    for leaf in jax.tree_util.tree_leaves(outputs):
        if jnp.issubdtype(leaf.dtype, jnp.inexact):
            total = total + jnp.real(jnp.sum(leaf))
    return 0.0 * total


def _perturb(tree: Any, delta: jax.Array) -> Any:
    """Add `delta` to every inexact leaf of `tree` (leaves of other dtypes pass through)."""

    def add(leaf: Any) -> Any:
        if isinstance(leaf, jax.Array) and jnp.issubdtype(leaf.dtype, jnp.inexact):
            return leaf + delta.astype(leaf.dtype)
        return leaf

    return jax.tree_util.tree_map(add, tree)


def in_graph(
    fn: Callable,
    *args: Any,
    iterations: int = 100,
    repeats: int = 5,
    constant_argnums: Sequence[int] = (),
) -> float:
    """Median µs per application of `fn` inside one jitted `lax.fori_loop` of `iterations` steps.

    Each step feeds back a zero that depends on all outputs into every inexact leaf of the
    arguments not in `constant_argnums`, so XLA can neither hoist `fn` out of the loop nor
    drop it. Arguments in `constant_argnums` (e.g. the model) stay loop-invariant, as in a
    simulation loop. Loop overhead is not subtracted.
    """
    constants = set(constant_argnums)
    carried_positions = [i for i in range(len(args)) if i not in constants]

    def loop(*all_args: Any) -> Any:
        def step(_: int, carried: tuple) -> tuple:
            current = list(all_args)
            for position, value in zip(carried_positions, carried):
                current[position] = value
            return _perturb(carried, _dependency(fn(*current)))

        initial = tuple(all_args[i] for i in carried_positions)
        return jax.lax.fori_loop(0, iterations, step, initial)

    jitted = jax.jit(loop)
    block(jitted(*args))
    return 1e6 * _median_seconds(lambda: jitted(*args), repeats) / iterations


def batched(
    fn: Callable,
    batch_args: Callable[[int], tuple],
    sizes: Sequence[int] = BATCH_SIZES,
    in_axes: Any = 0,
    repeats: int = 10,
    vectorize: Callable[[Callable], Callable] | None = None,
) -> list[dict]:
    """Time `jax.jit(jax.vmap(fn, in_axes))` (or `jax.jit(vectorize(fn))`) on `batch_args(size)`
    for each batch size.

    Returns one dict per size: `batch`, `per_batch_us` (median µs per dispatched call) and
    `per_state_us` (that divided by the batch size).
    """
    vmapped = jax.vmap(fn, in_axes=in_axes) if vectorize is None else vectorize(fn)
    rows = []
    for size in sizes:
        args = batch_args(size)
        per_batch = dispatched(vmapped, *args, repeats=repeats, warmup=2)
        rows.append({"batch": size, "per_batch_us": per_batch, "per_state_us": per_batch / size})
    return rows


def measure(
    fn: Callable,
    args: tuple,
    batch_args: Callable[[int], tuple],
    *,
    in_axes: Any = 0,
    constant_argnums: Sequence[int] = (),
    sizes: Sequence[int] = BATCH_SIZES,
    quick: bool = False,
) -> dict:
    """Every figure for one function: compile_s, dispatched_us, in_graph_us and batched rows."""
    return {
        "compile_s": compile_time(fn, *args, repeats=1 if quick else 3),
        "dispatched_us": dispatched(fn, *args, repeats=30 if quick else 200),
        "in_graph_us": in_graph(
            fn,
            *args,
            iterations=20 if quick else 100,
            repeats=3 if quick else 7,
            constant_argnums=constant_argnums,
        ),
        "batched": batched(fn, batch_args, sizes=sizes, in_axes=in_axes, repeats=3 if quick else 10),
    }


def first_and_median(call: Callable[[], Any], repeats: int) -> dict:
    """Seconds of the first call of `call` and the median of `repeats` calls after it (e.g. model loads)."""
    samples = []
    for _ in range(repeats + 1):
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return {"first_s": samples[0], "median_s": statistics.median(samples[1:])}


def environment() -> dict:
    """Versions and settings that the figures depend on."""
    return {
        "jax": jax.__version__,
        "x64": bool(jax.config.read("jax_enable_x64")),
        "backend": jax.default_backend(),
        "cpu_count": os.cpu_count(),
        "python": platform.python_version(),
        "machine": platform.machine(),
        "xla_flags": os.environ.get("XLA_FLAGS", ""),
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def format_value(value: Any) -> str:
    """A compact table cell: `-` for None, about three significant digits for floats."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if value == 0.0:
            return "0"
        magnitude = abs(value)
        if magnitude >= 1000:
            return f"{value:.0f}"
        if magnitude >= 10:
            return f"{value:.1f}"
        if magnitude >= 0.01:
            return f"{value:.3f}"
        return f"{value:.2e}"
    return str(value)


def print_table(rows: Sequence[dict], columns: Sequence[str] | None = None) -> None:
    """Print `rows` (dicts) as an aligned text table; columns default to the keys in first-seen order."""
    if columns is None:
        columns = list(dict.fromkeys(key for row in rows for key in row))
    cells = [[format_value(row.get(column)) for column in columns] for row in rows]
    widths = [max([len(column)] + [len(line[i]) for line in cells]) for i, column in enumerate(columns)]
    print("  ".join(column.rjust(width) for column, width in zip(columns, widths)))
    print("  ".join("-" * width for width in widths))
    for line in cells:
        print("  ".join(cell.rjust(width) for cell, width in zip(line, widths)))


def write_json(path: str | Path, rows: Any) -> Path:
    """Write `rows` as JSON; a bare file name goes to benchmarks/results/. Returns the path written."""
    path = Path(path)
    if not path.is_absolute() and path.parent == Path("."):
        path = RESULTS_DIRECTORY / path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(rows, indent=2, default=float) + "\n")
    return path


def time_algorithms(
    library: str,
    model: Any,
    states: dict,
    build: Callable[[Any, dict], Any],
    inputs: Callable[[dict], Any],
    functions: dict[str, Callable],
    *,
    sizes: Sequence[int] = BATCH_SIZES,
    quick: bool = False,
    vectorizers: dict[str, Callable[[Callable], Callable]] | None = None,
) -> list[dict]:
    """:func:`measure` of each of a library's ``functions`` (``fn(model, state, inputs)``), one row each.

    ``states`` are random states from :mod:`benchmarks.states`; ``build(model, state)`` makes the
    library's state of one of them (vmapped for the batches), ``inputs(state)`` its torques and
    accelerations. Each of ``vectorizers`` (name: ``vectorize``) adds the batch sizes timed through
    ``vectorize(fn)`` instead of ``jax.vmap``, under its name in the row.
    """
    single = st.take(states, 0)
    build_batch = jax.jit(jax.vmap(build, in_axes=(None, 0)))

    def batch_args(size: int) -> tuple:
        chosen = st.batch(states, size)
        return model, build_batch(model, chosen), inputs(chosen)

    rows = []
    for algorithm, fn in functions.items():
        figures = measure(
            fn,
            (model, build(model, single), inputs(single)),
            batch_args,
            in_axes=(None, 0, 0),
            constant_argnums=(0,),
            sizes=sizes,
            quick=quick,
        )
        for name, vectorize in (vectorizers or {}).items():
            figures[name] = batched(fn, batch_args, sizes=sizes, repeats=3 if quick else 10, vectorize=vectorize)
        rows.append({"library": library, "algorithm": algorithm, **figures})
    return rows

# ---------------------------------------------------------------------------------------------
# Simulation steps (benchmarks/step.py): a step chained on its own output, batched rollouts and
# the gradient of a rollout, for any library that fills a StepSubject. Each function is compiled
# once (ahead of time) and the compiled executable is what gets timed.


@dataclasses.dataclass
class StepSubject:
    """One library's simulation step on one model, ready to time.

    - `constants`: what stays fixed during a simulation (model, parameters); first argument of
      every function below, passed to jit as an argument (not baked in as a constant).
    - `state`: one state; `torques (n,)`: the joint torques applied at every step.
    - `step(constants, state, torques) -> next state`.
    - `batch(size) -> (states, torques)`: `size` states and torque rows with a leading axis.
    - `final_loss(constants, state, torques (T, n)) -> scalar`: a loss on the state after `T` steps.
    - `info`: what to report next to the figures (dtype, collidable points, settings).
    """

    library: str
    constants: Any
    state: Any
    torques: jax.Array
    step: Callable[[Any, Any, jax.Array], Any]
    batch: Callable[[int], tuple[Any, jax.Array]]
    final_loss: Callable[[Any, Any, jax.Array], jax.Array]
    info: dict = dataclasses.field(default_factory=dict)


def compiled(fn: Callable, *args: Any) -> tuple[float, Callable]:
    """Seconds to trace, lower and compile `jax.jit(fn)` for `args` from cold caches, and the executable."""
    jax.clear_caches()
    start = time.perf_counter()
    executable = jax.jit(fn).lower(*args).compile()
    return time.perf_counter() - start, executable


def call_time(executable: Callable, *args: Any, repeats: int, warmup: int = 2) -> float:
    """Median µs of one dispatched call of a compiled executable, after warm-up."""
    for _ in range(warmup):
        block(executable(*args))
    return 1e6 * _median_seconds(lambda: executable(*args), repeats)


def chained_loop(step: Callable, iterations: int) -> Callable:
    """`(constants, state, torques) -> state` after `iterations` steps, each from the state the
    previous one returned, with the same torques, in one `lax.fori_loop`."""

    def loop(constants: Any, state: Any, torques: jax.Array) -> Any:
        return jax.lax.fori_loop(0, iterations, lambda _, current: step(constants, current, torques), state)

    return loop


def _split(tree: Any, chunk: int) -> Any:
    return jax.tree.map(lambda x: x.reshape((x.shape[0] // chunk, chunk, *x.shape[1:])), tree)


def _merge(tree: Any) -> Any:
    return jax.tree.map(lambda x: x.reshape((x.shape[0] * x.shape[1], *x.shape[2:])), tree)


def batched_methods(step: Callable, steps: int, chunks: Sequence[int]) -> dict[str, Callable]:
    """Batched rollouts `(constants, states, torques) -> states` of `steps` steps each, by method:
    `vmap` (one `jax.vmap` over the whole batch) and `chunk<C>` (`lax.map` over chunks of C states,
    vmapped inside a chunk, as `lax.map(..., batch_size=C)` does, so the working set stays small;
    the batch must be a multiple of C)."""
    vmapped = jax.vmap(chained_loop(step, steps), in_axes=(None, 0, 0))
    methods = {"vmap": vmapped}

    def chunked(size: int) -> Callable:
        def run(constants: Any, states: Any, torques: jax.Array) -> Any:
            pieces = jax.lax.map(lambda piece: vmapped(constants, *piece), _split((states, torques), size))
            return _merge(pieces)

        return run

    for size in chunks:
        methods[f"chunk{size}"] = chunked(size)
    return methods


def throughput(
    subject: StepSubject,
    sizes: Sequence[int] = BATCH_SIZES,
    *,
    steps: int = 10,
    chunks: Sequence[int] = (32, 128),
    repeats: int = 3,
) -> list[dict]:
    """Steps per second of batched rollouts: one dispatched call advances `size` states by `steps`
    steps; steps/s = size * steps / median seconds per call. One row per size and method (chunked
    methods only where the batch is a multiple of the chunk and larger than it)."""
    rows = []
    methods = batched_methods(subject.step, steps, chunks)
    for size in sizes:
        states, torques = subject.batch(size)
        for method, fn in methods.items():
            if method.startswith("chunk"):
                chunk = int(method[len("chunk") :])
                if size <= chunk or size % chunk:
                    continue
            _, executable = compiled(fn, subject.constants, states, torques)
            seconds = 1e-6 * call_time(executable, subject.constants, states, torques, repeats=repeats, warmup=1)
            rows.append({"batch": size, "method": method, "steps": steps, "steps_per_s": size * steps / seconds})
    return rows


def rollout_gradient(subject: StepSubject, horizon: int = 100, *, repeats: int = 5) -> dict:
    """Compile time [s] and median time [ms] of `jax.grad` of `final_loss` over a rollout of
    `horizon` steps, with respect to the torque sequence `(horizon, n)` (the steps in one
    `lax.scan` inside `final_loss`); also whether the gradient is finite."""
    torques = jnp.broadcast_to(subject.torques, (horizon, *subject.torques.shape))
    arguments = (subject.constants, subject.state, torques)
    compile_s, executable = compiled(jax.grad(subject.final_loss, argnums=2), *arguments)
    finite = bool(jnp.all(jnp.isfinite(block(executable(*arguments)))))
    call_us = call_time(executable, *arguments, repeats=repeats, warmup=1)
    return {"horizon": horizon, "grad_compile_s": compile_s, "grad_ms": call_us / 1000.0, "grad_finite": finite}


def measure_step(
    subject: StepSubject,
    *,
    sizes: Sequence[int] = BATCH_SIZES,
    quick: bool = False,
    throughput_steps: int | None = None,
    chunks: Sequence[int] = (32, 128),
    horizon: int = 100,
    gradient: bool = True,
) -> dict:
    """Every figure for one StepSubject: compile_s (of one step), dispatched_us (one step per call),
    noop_dispatched_us (a jitted function of the same arguments that returns the state unchanged:
    the floor of dispatched_us), in_graph_us (steps chained in one loop), throughput rows and,
    with `gradient`, the rollout gradient."""
    arguments = (subject.constants, subject.state, subject.torques)
    compile_s, executable = compiled(subject.step, *arguments)
    _, noop = compiled(lambda constants, state, torques: state, *arguments)
    iterations = 20 if quick else 100
    _, loop = compiled(chained_loop(subject.step, iterations), *arguments)
    figures = {
        "compile_s": compile_s,
        "dispatched_us": call_time(executable, *arguments, repeats=30 if quick else 200),
        "noop_dispatched_us": call_time(noop, *arguments, repeats=30 if quick else 200),
        "in_graph_us": call_time(loop, *arguments, repeats=3 if quick else 7, warmup=1) / iterations,
        "throughput": throughput(
            subject, sizes, steps=throughput_steps or (2 if quick else 10), chunks=chunks, repeats=1 if quick else 3
        ),
    }
    if gradient:
        figures.update(rollout_gradient(subject, horizon, repeats=3 if quick else 10))
    return figures
