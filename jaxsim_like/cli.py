"""The ``jaxsim-like`` command line."""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np


def _model_source(name_or_path: str) -> str:
    """A shipped model's name (``humanoid``) or a path to a URDF/SDF file."""
    from . import models

    if os.path.exists(name_or_path) or name_or_path.lstrip().startswith("<"):
        return name_or_path
    return models.path(name_or_path)


def _tree_lines(model) -> list[str]:
    children: dict[int, list[int]] = {}
    for link, parent in enumerate(model.parent):
        children.setdefault(parent, []).append(link)
    joint_of_link = {link: joint for joint, link in enumerate(model.joint_link)}
    lines: list[str] = []

    def visit(link: int, depth: int) -> None:
        joint = joint_of_link.get(link)
        via = "" if joint is None else f"  <- {model.joint_names[joint]} ({'revolute' if model.joint_type[link] == 1 else 'prismatic'})"
        lines.append(f"{'  ' * depth}{model.link_names[link]}  [{float(model.link_mass[link]):.3f} kg]{via}")
        for child in children.get(link, []):
            visit(child, depth + 1)

    visit(0, 1)
    return lines


def _load(source: str, floating_base: bool | None, strict: bool):
    from .loading import load_model

    return load_model(_model_source(source), floating_base=floating_base, strict=strict)


def info(source: str, floating_base: bool | None = None, strict: bool = False) -> str:
    """A text summary of a model: tree, DoFs, masses, frames and contact points.

    ``floating_base`` overrides the file's base (None: the file's choice); ``strict`` makes
    every :class:`~jaxsim_like.parsers.errors.ModelLoadWarning` an error.
    """
    model = _load(source, floating_base, strict)
    points_per_link = np.bincount(np.asarray(model.point_link, dtype=int), minlength=model.number_of_links)
    lines = [
        f"model        {model.name}",
        f"base         {'floating' if model.floating_base else 'fixed'}",
        f"links        {model.number_of_links}",
        f"joints/DoFs  {model.dofs}",
        f"total mass   {float(model.total_mass):.4f} kg",
        f"frames       {len(model.frame_names)}",
        f"contacts     {len(model.point_link)} collidable points on "
        f"{int(np.count_nonzero(points_per_link))} links",
        "tree:",
        *_tree_lines(model),
    ]
    if model.frame_names:
        lines.append("frames: " + ", ".join(model.frame_names))
    return "\n".join(lines)


def _progress(done: int, total: int, started: float) -> None:
    width = 30
    filled = int(width * done / total)
    elapsed = time.perf_counter() - started
    sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} steps  {elapsed:5.1f} s")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def simulate(args: argparse.Namespace) -> tuple[str, bool]:
    """Drop the model from ``args.height`` and simulate ``args.duration`` seconds (``args.batch``
    worlds); returns the report and whether every world stayed finite (the exit status is 1 if not)."""
    import jax
    import jax.numpy as jnp

    from .recording import Recording
    from .simulation import SimulationParams
    from .batching import simulate_batch
    from .dynamics.state import State
    from .simulation.step import contact_point_positions

    model = _load(args.model, args.floating_base, args.strict)
    params = SimulationParams.build(model, dt=args.dt, integrator=args.integrator)
    rng = np.random.default_rng(args.seed)
    lower = np.nan_to_num(np.asarray(model.position_limit_lower), neginf=-np.pi)
    upper = np.nan_to_num(np.asarray(model.position_limit_upper), posinf=np.pi)
    offsets = rng.uniform(-1, 1, (args.batch, model.dofs)) * 0.1 * (upper - lower) if args.batch > 1 else np.zeros((1, model.dofs))
    joint_positions = np.clip(0.5 * (lower + upper) * 0 + offsets, lower, upper)

    def initial(q):
        state = State.build(model, joint_positions=q)
        if not model.floating_base or not model.point_link:
            return state
        lowest = jnp.min(contact_point_positions(model, state)[:, 2])
        return state.replace(base_position=state.base_position.at[2].add(args.height - lowest))

    states = jax.vmap(initial)(jnp.asarray(joint_positions))
    steps = max(1, int(round(args.duration / args.dt)))
    chunk = min(steps, 250)
    torques = jnp.zeros((chunk, model.dofs), states.joint_positions.dtype)

    def segment(states):
        return simulate_batch(model, states, torques, params=params)

    started = time.perf_counter()
    states, first = jax.block_until_ready(segment(states))
    compile_time = time.perf_counter() - started
    started = time.perf_counter()
    pieces, done = [first], chunk
    while done < steps:
        states, piece = segment(states)
        pieces.append(piece)
        done += chunk
        if steps >= 2000:
            _progress(min(done, steps), steps, started)
    jax.block_until_ready(states)
    wall = max(time.perf_counter() - started, 1e-9)
    simulated = (done - chunk) or chunk
    trajectory, outputs = jax.tree.map(lambda *xs: np.concatenate(xs, axis=1)[:, :steps], *pieces)
    recording = Recording.from_rollout(model, trajectory, outputs, args.dt, integrator=args.integrator, batch=args.batch)
    normal = np.asarray(outputs.contact_forces)[:, -1].sum(axis=1)[:, 2]
    lines = [
        info(args.model, args.floating_base, args.strict),
        "",
        f"simulated    {steps * args.dt:.3f} s x {args.batch} world(s), dt {args.dt} s, {args.integrator}",
        f"compile      {compile_time:.2f} s (with the first {chunk} steps)",
        f"run          {wall:.2f} s wall for the other {simulated if done > chunk else 0} steps, "
        f"{simulated * args.batch / wall:,.0f} steps/s, real-time factor {simulated * args.dt * args.batch / wall:.1f}",
        f"base height  {float(recording.base_position[0, -1, 2]):.4f} m at the end (started {float(recording.base_position[0, 0, 2]):.4f} m)",
        f"contacts     max penetration {float(np.asarray(outputs.penetration).max()) * 1000:.2f} mm; "
        f"final normal force {float(normal[0]):.2f} N (m g = {float(model.total_mass) * 9.81:.2f} N)",
        f"finite       {_finite_report(np.asarray(outputs.finite), args.dt)}",
    ]
    if args.out:
        recording.save(args.out)
        lines.append(f"saved        {args.out}")
    if args.html:
        from .parsers import parse_model
        from .viewer import export_html

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # shown when the model was loaded
            description = parse_model(_model_source(args.model))
        export_html(args.html, model, recording, description=description)
        lines.append(f"viewed       {args.html}")
    if args.plot:
        from .plots import plot_recording

        plot_recording(recording, args.plot)
        lines.append(f"plotted      {args.plot}")
    return "\n".join(lines), bool(np.asarray(outputs.finite).all())


def view(args: argparse.Namespace) -> str:
    """Write the HTML view of ``args.model`` (playing ``args.recording`` if given) to ``args.out``."""
    from .viewer import export_html, load

    model, description = load(_model_source(args.model), floating_base=args.floating_base, strict=args.strict)
    path = export_html(args.out, model, args.recording, description=description, fps=args.fps)
    return f"wrote        {path} ({path.stat().st_size / 1e6:.2f} MB): open it in a web browser"


def _finite_report(finite: np.ndarray, dt: float) -> str:
    """``True``, or ``False`` with the first non-finite step and world of ``finite (B, T)``."""
    from .batching import first_nonfinite_step

    if finite.all():
        return "True"
    first = np.asarray(first_nonfinite_step(finite))
    world = int(np.argmin(np.where(first < 0, np.iinfo(int).max, first)))
    return (
        f"False: {int((first >= 0).sum())} of {len(first)} world(s) diverged, the first at step {int(first[world])} "
        f"(t = {(int(first[world]) + 1) * dt:.4f} s) in world {world}"
    )


def _seconds(call, repeats: int) -> float:
    """Median wall time [s] of ``call()`` (its result waited for), over ``repeats`` calls after a warm-up call."""
    import jax

    jax.block_until_ready(call())
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        jax.block_until_ready(call())
        samples.append(time.perf_counter() - started)
    return float(np.median(samples))


def _bench_model(name: str, batches: list[int], steps: int, chunk: int, repeats: int) -> list[str]:
    """Lines of the throughput table of one shipped model (see :func:`bench`)."""
    import jax
    import jax.numpy as jnp

    from .batching import simulate_batch
    from .dynamics.state import State
    from .loading import load_model
    from .simulation import SimulationParams, rollout, step

    model = load_model(_model_source(name))
    params = SimulationParams.build(model)
    state = State.build(model)
    tau = jnp.zeros(model.dofs, state.joint_positions.dtype)
    torques = jnp.zeros((steps, model.dofs), state.joint_positions.dtype)
    lines = []

    started = time.perf_counter()
    stepper = jax.jit(lambda s, u: step(model, s, joint_torques=u, params=params)).lower(state, tau).compile()
    compile_s = time.perf_counter() - started
    per_call = _seconds(lambda: stepper(state, tau), max(20, 10 * repeats))
    lines.append(f"{name:10s} {'step':8s} {1:>6d} {'-':>8s} {compile_s:9.2f} {1 / per_call:14,.0f}   {per_call * 1e6:9.1f} us/call")

    started = time.perf_counter()
    roller = jax.jit(lambda s, u: rollout(model, s, u, params=params)[0]).lower(state, torques).compile()
    compile_s = time.perf_counter() - started
    run_s = _seconds(lambda: roller(state, torques), repeats)
    lines.append(f"{name:10s} {'rollout':8s} {1:>6d} {'-':>8s} {compile_s:9.2f} {steps / run_s:14,.0f}   {run_s / steps * 1e6:9.2f} us/step")

    for batch in batches:
        states = jax.tree.map(lambda x, b=batch: jnp.broadcast_to(x, (b, *x.shape)), state)
        for mode, chunk_size in (("vmap", None), ("chunked", chunk)):
            if mode == "chunked" and chunk >= batch:
                continue

            def call(states=states, chunk_size=chunk_size):
                return simulate_batch(model, states, torques, params=params, chunk_size=chunk_size, trajectory=False)[0]

            started = time.perf_counter()
            jax.block_until_ready(call())
            first_s = time.perf_counter() - started
            run_s = _seconds(call, repeats)
            label = mode if chunk_size is None else f"{mode}/{chunk_size}"
            lines.append(
                f"{name:10s} {'batch':8s} {batch:>6d} {label:>8s} {max(first_s - run_s, 0.0):9.2f} "
                f"{batch * steps / run_s:14,.0f}   {run_s / (batch * steps) * 1e6:9.2f} us/world-step"
            )
    return lines


def bench(args: argparse.Namespace) -> str:
    """A quick throughput table: one jitted step, a ``steps``-step rollout, and batches of worlds
    (plain vmap and chunked, :func:`jaxsim_like.batching.simulate_batch`) of each model.

    Compile times are trace + compile (for batches: first call minus a steady call); rates are
    medians of ``repeats`` calls, in (world-)steps per second of wall time.
    """
    import jax

    from . import models

    names = args.model or models.available()
    batches = sorted({int(b) for b in args.batches.split(",")})
    if min(batches) < 1 or args.steps < 1 or args.chunk < 1 or args.repeats < 1:
        raise ValueError("--batches, --steps, --chunk and --repeats must be positive")
    device = jax.devices()[0]
    lines = [
        (
            f"jaxsim-like bench: {len(jax.devices())} x {device.platform} ({device.device_kind}), jax {jax.__version__}, "
            f"{'float64' if jax.config.jax_enable_x64 else 'float32'}, {args.steps} steps per rollout, median of {args.repeats}"
        ),
        f"{'model':10s} {'what':8s} {'batch':>6s} {'mode':>8s} {'compile s':>9s} {'steps/s':>14s}   per step",
    ]
    for name in names:
        lines.extend(_bench_model(name, batches, args.steps, args.chunk, args.repeats))
    return "\n".join(lines)


def _loading_options(parser: argparse.ArgumentParser) -> None:
    base = parser.add_mutually_exclusive_group()
    base.add_argument("--fixed-base", dest="floating_base", action="store_false", default=None, help="weld the root link to the world")
    base.add_argument("--floating-base", dest="floating_base", action="store_true", help="give the root link a free base")
    parser.add_argument(
        "--strict", action="store_true", help="fail on what otherwise loads with a warning (inconsistent inertias, mimic joints, ...)"
    )


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``jaxsim-like`` console script (load warnings print as ``jaxsim-like: warning: ...``)."""
    from .parsers.errors import ModelLoadWarning

    with warnings.catch_warnings():
        warnings.simplefilter("default", ModelLoadWarning)
        previous = warnings.showwarning

        def show(message, category, filename, lineno, file=None, line=None) -> None:
            if issubclass(category, ModelLoadWarning):
                print(f"jaxsim-like: warning: {message}", file=sys.stderr)
            else:
                previous(message, category, filename, lineno, file, line)

        warnings.showwarning = show
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    parser = argparse.ArgumentParser(prog="jaxsim-like", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    info_parser = commands.add_parser("info", help="print a model's tree, DoFs, masses, frames and contact points")
    info_parser.add_argument("model", help="a shipped model name (pendulum, cart_pole, quadruped, humanoid) or a URDF/SDF path")
    _loading_options(info_parser)
    sim_parser = commands.add_parser("simulate", help="drop a model on the ground and simulate it")
    sim_parser.add_argument("model", help="a shipped model name or a URDF/SDF path")
    _loading_options(sim_parser)
    sim_parser.add_argument("--duration", type=float, default=2.0, help="simulated time [s] (default 2)")
    sim_parser.add_argument("--dt", type=float, default=0.002, help="step size [s] (default 0.002)")
    sim_parser.add_argument("--height", type=float, default=0.5, help="drop height of the lowest contact point [m] (default 0.5)")
    sim_parser.add_argument("--batch", type=int, default=1, help="number of worlds, with perturbed joint positions (default 1)")
    sim_parser.add_argument("--integrator", choices=("implicit_euler", "semi_implicit_euler", "rk4"), default="implicit_euler")
    sim_parser.add_argument("--seed", type=int, default=0, help="seed of the batch's perturbations")
    sim_parser.add_argument("--out", help="save the trajectory to this .npz file")
    sim_parser.add_argument("--plot", help="save a figure (PNG) of the trajectory; needs matplotlib")
    sim_parser.add_argument("--html", help="save a 3D view of the run (a self-contained HTML file)")
    view_parser = commands.add_parser("view", help="write a self-contained 3D view (HTML) of a model, or of a recorded run")
    view_parser.add_argument("model", help="a shipped model name or a URDF/SDF path")
    _loading_options(view_parser)
    view_parser.add_argument("--recording", help="a .npz recording (jaxsim-like simulate --out) to play")
    view_parser.add_argument("--out", default="view.html", help="the HTML file to write (default view.html)")
    view_parser.add_argument("--fps", type=float, default=30.0, help="frames per second kept from the recording (default 30)")
    bench_parser = commands.add_parser("bench", help="measure the throughput of step, rollout and batches of worlds")
    bench_parser.add_argument("--model", action="append", help="a shipped model name or a path (repeatable; default: every shipped model)")
    bench_parser.add_argument("--batches", default="1,64,1024", help="comma-separated batch sizes (default 1,64,1024)")
    bench_parser.add_argument("--steps", type=int, default=20, help="steps per rollout (default 20)")
    bench_parser.add_argument("--chunk", type=int, default=64, help="worlds per chunk in the chunked mode (default 64)")
    bench_parser.add_argument("--repeats", type=int, default=3, help="timed calls per figure, median (default 3)")
    bench_parser.add_argument("--x64", action="store_true", help="float64 (default: float32)")
    args = parser.parse_args(argv)
    from .parsers.errors import ModelLoadError

    try:
        if args.command == "info":
            print(info(args.model, args.floating_base, args.strict))
        elif args.command == "simulate":
            if args.duration <= 0 or args.dt <= 0 or args.batch < 1:
                raise ValueError("--duration and --dt must be positive and --batch at least 1")
            report, finite = simulate(args)
            print(report)
            if not finite:
                return 1
        elif args.command == "view":
            print(view(args))
        elif args.command == "bench":
            if args.x64:
                import jax

                jax.config.update("jax_enable_x64", True)
            print(bench(args))
    except (ModelLoadError, ValueError, ImportError) as error:
        print(f"jaxsim-like: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
