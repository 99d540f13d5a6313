"""``jaxsim-like simulate``: drop a model on the ground, in flat memory whatever the duration.

The run goes in segments of steps through :func:`jaxsim_like.batching.simulate_batch`, which keeps
the final states and a :class:`~jaxsim_like.monitor.Summary` per world; ``--out`` keeps chosen
fields of every ``--every``-th step of ``--worlds`` and streams them to the ``.npz`` file segment by
segment, ``--plot`` keeps (at most about 2000 samples of) one world. Setup, compilation (traced,
lowered and compiled, or read from the persistent cache) and the run are timed apart. A long run
prints an estimate of its time; Ctrl-C stops it between segments with the summary of the steps done.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import sys
import threading
import time
from dataclasses import dataclass

import numpy as np

SEGMENT_STEPS = 250
"""Steps per call when nothing is kept (a progress update per segment)."""
SEGMENT_BYTES = 64 << 20
"""The most bytes of samples one segment keeps (a batch that keeps much gets shorter segments)."""
PLOT_SAMPLES = 2000
"""Samples a plot needs at most: a ``--plot`` without ``--out`` keeps no more of its world."""
PLOT_FIELDS = ("base_position", "joint_positions", "joint_torques", "contact_forces")
VIEW_FIELDS = ("base_position", "base_quaternion", "joint_positions", "contact_forces")
"""What an ``--html`` view plays: the poses, and the contact forces for its arrows."""
MAX_STEPS = int(np.iinfo(np.int32).max)
"""The most steps of a run (steps are counted in int32)."""
LONG_RUN_SECONDS = 60.0
"""A run whose remaining steps are estimated to take longer gets the estimate printed."""


class UsageError(ValueError):
    """A command-line argument that cannot work, found before the run."""


@dataclass(frozen=True)
class Outputs:
    """What the run keeps: the fields, decimation and worlds of ``--out`` (or of ``--plot``)."""

    fields: tuple[str, ...]
    every: int
    worlds: tuple[int, ...]


def check_arguments(args: argparse.Namespace) -> None:
    """UsageError (one line) for values out of range, output paths that cannot be written and
    optional dependencies that are missing: everything that would otherwise fail after the run."""
    from .recording import SAMPLE_FIELDS

    if not (0 < args.duration < math.inf and 0 < args.dt < math.inf):
        raise UsageError(f"--duration and --dt must be positive and finite, got {args.duration} and {args.dt}")
    if not args.duration / args.dt <= MAX_STEPS:
        raise UsageError(
            f"--duration {args.duration} at --dt {args.dt} is {args.duration / args.dt:.3g} steps, more than the "
            f"{MAX_STEPS:,} a run can count: shorten --duration or raise --dt"
        )
    if args.batch < 1:
        raise UsageError("--batch must be at least 1")
    if args.every < 1:
        raise UsageError("--every must be at least 1")
    if args.max_penetration is not None and not args.max_penetration > 0:
        raise UsageError("--max-penetration must be positive")
    if args.friction is not None and not args.friction >= 0:
        raise UsageError("--friction must be non-negative")
    steps = step_count(args)
    if (args.out or args.plot or args.html) and steps % args.every:
        raise UsageError(f"--every {args.every} must divide the number of steps ({steps} = duration / dt)")
    unknown = [name for name in args.fields.split(",") if name not in SAMPLE_FIELDS]
    if unknown:
        raise UsageError(f"--fields: unknown field(s) {', '.join(unknown)}; choose from {','.join(SAMPLE_FIELDS)}")
    if args.worlds != "all":
        worlds = _world_list(args.worlds)
        if not all(0 <= w < args.batch for w in worlds):
            raise UsageError(f"--worlds must list indices of the {args.batch} world(s), got {args.worlds}")
    if args.html and args.out:
        missing = [name for name in VIEW_FIELDS if name not in args.fields.split(",")]
        if missing:
            raise UsageError(f"--html plays the samples of --out, which must keep {', '.join(missing)} (see --fields)")
    paths = (("--out", args.out, (".npz",)), ("--plot", args.plot, (".png", ".pdf", ".svg")), ("--html", args.html, (".html", ".htm")))
    for option, path, suffixes in paths:
        if path is None:
            continue
        if not path.lower().endswith(suffixes):
            raise UsageError(f"{option} {path}: the file must end in {' or '.join(suffixes)}")
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise UsageError(f"{option} {path}: no such directory {folder}")
        if not os.access(folder, os.W_OK):
            raise UsageError(f"{option} {path}: directory {folder} is not writable")
        if os.path.isdir(path):
            raise UsageError(f"{option} {path} is a directory")
    if args.plot and importlib.util.find_spec("matplotlib") is None:
        raise UsageError("--plot needs matplotlib: pip install 'jaxsim_like[plot]'")


def check_model(model) -> None:
    """UsageError for a model that cannot be dropped: a floating base with no collidable points."""
    if model.floating_base and not model.point_link:
        raise UsageError(
            f"model '{model.name}' has no collidable points, so its floating base would fall through the ground: "
            "give its links <collision> shapes (meshes with volume, or --mesh-points N), or use --fixed-base"
        )


def _clock(seconds: float) -> str:
    """``seconds`` as ``1 h 02 min``, ``3 min 05 s`` or ``42 s``."""
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min" if hours else f"{minutes} min {secs:02d} s" if minutes else f"{secs} s"


def _world_list(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(word) for word in text.split(","))
    except ValueError:
        raise UsageError(f"--worlds takes 'all' or comma-separated world indices, not {text!r}") from None


def step_count(args: argparse.Namespace) -> int:
    """The number of steps of ``--duration`` at ``--dt``."""
    return max(1, int(round(args.duration / args.dt)))


def _outputs(args: argparse.Namespace, steps: int) -> Outputs | None:
    if args.out:
        worlds = tuple(range(args.batch)) if args.worlds == "all" else _world_list(args.worlds)
        return Outputs(tuple(args.fields.split(",")), args.every, worlds)
    if args.plot or args.html:
        every = next(k for k in range(max(args.every, 1), steps + 1) if steps % k == 0 and steps // k <= PLOT_SAMPLES) if steps > PLOT_SAMPLES else args.every
        fields = tuple(dict.fromkeys((PLOT_FIELDS if args.plot else ()) + (VIEW_FIELDS if args.html else ())))
        return Outputs(fields, every, tuple(range(args.batch)) if args.html else (0,))
    return None


def _segment_steps(steps: int, outputs: Outputs | None, bytes_per_sample: int) -> int:
    """Steps per call: :data:`SEGMENT_STEPS`, fewer when the kept samples would pass
    :data:`SEGMENT_BYTES`; a multiple of the decimation."""
    if outputs is None:
        return min(steps, SEGMENT_STEPS)
    samples = max(1, min(steps // outputs.every, SEGMENT_STEPS // outputs.every or 1, SEGMENT_BYTES // max(bytes_per_sample, 1)))
    return samples * outputs.every


class _Ticker:
    """A line on stderr, rewritten twice a second with the elapsed time while a call blocks
    (written once when stderr is not a terminal)."""

    def __init__(self, label: str, enabled: bool) -> None:
        self.label, self.enabled = label, enabled
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        started = time.perf_counter()
        while not self._stop.wait(0.5) and sys.stderr.isatty():
            sys.stderr.write(f"\r{self.label} {time.perf_counter() - started:5.1f} s")
            sys.stderr.flush()

    def __enter__(self) -> "_Ticker":
        if self.enabled:
            sys.stderr.write(f"{self.label}")
            sys.stderr.flush()
            self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        if self.enabled:
            self._stop.set()
            self._thread.join()
            sys.stderr.write("\n")
            sys.stderr.flush()


def _progress(done: int, total: int, started: float) -> None:
    width = 30
    filled = int(width * done / total)
    elapsed = time.perf_counter() - started
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} steps  {elapsed:5.1f} s")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def _initial_states(model, args: argparse.Namespace):
    """The batch's initial states: joints perturbed within 10 % of their range (world 0 and a
    single world unperturbed), the lowest collidable point at ``--height``; one jitted call."""
    import jax
    import jax.numpy as jnp

    from .dynamics import configuration
    from .dynamics.state import State
    from .simulation.step import contact_point_positions

    rng = np.random.default_rng(args.seed)
    lower = np.nan_to_num(np.asarray(model.position_limit_lower), neginf=-np.pi)
    upper = np.nan_to_num(np.asarray(model.position_limit_upper), posinf=np.pi)
    offsets = rng.uniform(-1, 1, (args.batch, model.dofs)) * 0.1 * (upper - lower)
    offsets[0] = 0.0
    joint_positions = np.clip(offsets, lower, upper)

    def initial(offset):  # a ball joint turned by the rotation vector of its three offsets
        q = configuration.integrate_positions(model, configuration.neutral_positions(model, offset.dtype), offset, 1.0)
        state = State.build(model, joint_positions=q)
        if not model.floating_base or not model.point_link:
            return state
        lowest = jnp.min(contact_point_positions(model, state)[:, 2])
        return state.replace(base_position=state.base_position.at[2].add(args.height - lowest))

    dtype = jnp.zeros(()).dtype
    return jax.jit(jax.vmap(initial))(jnp.asarray(joint_positions, dtype))


def _spread(values: np.ndarray, unit: str, digits: int) -> str:
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return "none finite"
    if finite.size == 1:
        return f"{finite[0]:.{digits}f} {unit}"
    low, median, high = np.percentile(finite, [0, 50, 100])
    return f"min {low:.{digits}f} / median {median:.{digits}f} / max {high:.{digits}f} {unit}"


def diverged_report(first: np.ndarray, dt: float) -> str | None:
    """None when every world stayed finite; else which world diverged first, at which step."""
    bad = first >= 0
    if not bad.any():
        return None
    world = int(np.argmin(np.where(bad, first.astype(np.int64), np.iinfo(np.int64).max)))
    step = int(first[world])
    return (
        f"{int(bad.sum())} of {len(first)} world(s) went non-finite, the first at step {step} "
        f"(t = {(step + 1) * dt:.4f} s) in world {world}"
    )


def simulate(
    args: argparse.Namespace, model, setup_started: float, log, description=None
) -> tuple[list[str], str | None, bool]:
    """Run the simulation described by ``args`` on the loaded ``model`` (``log``, a
    :class:`~jaxsim_like.compile_cache.CompileLog`, counts what was compiled since the command
    started; ``description``, the model's, gives an ``--html`` view its visual shapes); returns
    the report lines, the divergence message (None when all stayed finite) and whether Ctrl-C
    stopped the run (then the report covers the steps done, and nothing is saved). Ctrl-C during
    the first segment (compiling) raises KeyboardInterrupt: there is nothing to report yet."""
    import jax

    from .batching import simulate_batch
    from .monitor import Keep
    from .recording import Recording, RecordingWriter
    from .simulation import SimulationParams

    check_model(model)
    contact = {k: v for k, v in (("max_penetration", args.max_penetration), ("friction", args.friction)) if v is not None}
    params = SimulationParams.build(model, dt=args.dt, integrator=args.integrator, **contact)
    states = _initial_states(model, args)
    dtype = np.dtype(states.joint_positions.dtype)
    steps = step_count(args)
    outputs = _outputs(args, steps)
    if outputs is not None:
        per_sample = {
            "base_position": 3, "base_quaternion": 4, "base_velocity": 6, "contact_forces": 3 * len(model.point_link),
            "joint_positions": model.joint_position_size,
        }
        # XLA's output buffers hold every world's samples before the kept worlds are picked.
        bytes_per_sample = args.batch * dtype.itemsize * sum(per_sample.get(f, model.dofs) for f in outputs.fields)
        keep = Keep(fields=outputs.fields, every=outputs.every, worlds=None if len(outputs.worlds) == args.batch else outputs.worlds)
    else:
        bytes_per_sample, keep = 0, False
    segment = _segment_steps(steps, outputs, bytes_per_sample)
    jax.block_until_ready(states)
    setup = time.perf_counter() - setup_started

    writer, samples, summary = None, None, None
    done, first_call, steady, run_started = 0, 0.0, None, time.perf_counter()
    interrupted = False
    try:
        while done < steps:
            length = min(segment, steps - done)
            torques = np.zeros((length, model.dofs), dtype)
            started = time.perf_counter()
            with _Ticker(f"compiling and running the first {length} steps ...", done == 0 and not args.quiet):
                states, kept = jax.block_until_ready(simulate_batch(model, states, torques, params=params, trajectory=keep))
            if done == 0:
                first_call, run_started = time.perf_counter() - started, time.perf_counter()
            elif steady is None and length == segment:
                steady = time.perf_counter() - started
                remaining = (steps - done - length) / segment * steady
                if remaining > LONG_RUN_SECONDS and not args.quiet:
                    sys.stderr.write(
                        f"estimated    {_clock(remaining)} for the remaining {steps - done - length:,} steps "
                        "(Ctrl-C stops the run and prints the summary so far)\n"
                    )
            part, chunk = kept if outputs is not None else (kept, None)
            summary = part if summary is None else summary.then(part, done)
            if chunk is not None:
                chunk = {name: np.asarray(value) for name, value in chunk.items()}
                if args.out and writer is None:
                    writer = RecordingWriter(
                        args.out, model, {name: (value.shape[0], *value.shape[2:]) for name, value in chunk.items()},
                        steps // outputs.every, args.dt, every=outputs.every, dtype=dtype,
                        integrator=args.integrator, batch=args.batch, worlds=list(outputs.worlds),
                    )
                if writer is not None:
                    writer.write(chunk)
                else:
                    samples = chunk if samples is None else {k: np.concatenate([samples[k], chunk[k]], axis=1) for k in chunk}
            done += length
            if not args.quiet and done > segment and steps > 2 * segment:
                _progress(done, steps, run_started)
        if writer is not None:
            writer.close()
    except KeyboardInterrupt:
        if writer is not None:
            writer.abort()
        if summary is None:
            raise
        interrupted = True
        sys.stderr.write("\n")
    except BaseException:
        if writer is not None:
            writer.abort()
        raise
    finally:
        log.close()
    # The first call compiled and ran a segment: its run is estimated by a later steady call
    # (None when the run was that one call).
    first_run = None if steady is None else steady * min(segment, steps) / segment
    run = None if first_run is None else time.perf_counter() - run_started + first_run
    timing = (setup, first_call - (first_run or 0.0), log, run)
    diverged = diverged_report(np.asarray(summary.first_nonfinite), args.dt)
    if interrupted:
        lines = _report(args, model, summary, states, done, timing)
        lines.append(
            f"interrupted  after {done:,} of {steps:,} steps (Ctrl-C): the lines above cover those steps"
            + ("; nothing saved" if args.out or args.plot or args.html else "")
        )
        return lines, diverged, True
    recording = None
    if args.plot or args.html:
        if args.out:
            recording = Recording.load(args.out)
        else:
            recording = Recording.from_samples(model, samples, args.dt, every=outputs.every, integrator=args.integrator)
    lines = _report(args, model, summary, states, steps, timing)
    if args.out:
        lines.append(f"saved        {args.out} ({len(outputs.worlds)} world(s), {steps // outputs.every} samples of "
                     f"{','.join(outputs.fields)}, every {outputs.every} step(s))")
    if args.plot:
        from .plots import plot_recording

        files = plot_recording(recording, args.plot, world=0)
        lines.append(f"plotted      {', '.join(files)} (world 0)")
    if args.html:
        from .viewer import export_html

        export_html(args.html, model, recording, description=description)
        lines.append(f"viewed       {args.html} ({recording.base_position.shape[0]} world(s))")
    return lines, diverged, False


def _report(args: argparse.Namespace, model, summary, states, steps: int, timing) -> list[str]:
    """The lines after the model summary: times, and what happened in every world."""
    from .dynamics.kinematics import STANDARD_GRAVITY

    setup, compile, log, run = timing
    if run is None:
        run_line = f"run          in the compile time above: the {steps} steps were one call"
        compile_what = "the first call, with its steps"
    else:
        rate = (
            f"{steps * args.batch / run:,.0f} {'world-' if args.batch > 1 else ''}steps/s, "
            f"{steps * args.dt * args.batch / run:.1f} simulated s per wall s{' over all worlds' if args.batch > 1 else ''}"
        )
        run_line = f"run          {run:.2f} s for {steps} steps ({rate})"
        compile_what = "the first call less its steps"
    first = np.asarray(summary.first_nonfinite)
    finite = int((first < 0).sum())
    heights = np.asarray(states.base_position)[:, 2]
    normal = np.asarray(summary.contact_force)[:, 2]
    weight = float(model.total_mass) * STANDARD_GRAVITY
    worlds = f"{args.batch} worlds" if args.batch > 1 else "1 world"
    lines = [
        f"simulated    {steps * args.dt:.3f} s x {worlds}, dt {args.dt} s, {args.integrator}, "
        f"{'float64' if np.dtype(states.joint_positions.dtype) == np.float64 else 'float32'}",
        f"setup        {setup:.2f} s (loading, parameters, initial states)",
        f"compile      {compile:.2f} s ({compile_what}); {log.compiled} executable(s) compiled, {log.from_cache} read from the cache",
        run_line,
        f"finite       {finite} of {args.batch} world(s)",
    ]
    if model.floating_base:
        lines.append(f"base height  {_spread(heights, 'm', 4)} at the end")
    if model.point_link:
        lines += [
            f"penetration  deepest {_spread(np.asarray(summary.max_penetration) * 1000, 'mm', 2)} over the run (landing included)",
            f"normal force {_spread(normal, 'N', 2)} at the end" + (f" (m g = {weight:.2f} N)" if model.floating_base else ""),
        ]
    else:
        lines.append("contacts     none (the model has no collidable points)")
    return lines
