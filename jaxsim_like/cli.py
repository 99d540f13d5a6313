"""The ``jaxsim-like`` command line: ``info``, ``simulate``, ``view`` and ``bench``.

Each subcommand is added to the parser by an ``_add_<name>`` function that sets its handler
(``handler(args) -> exit status``); :func:`main` dispatches and turns the errors a user can
cause (bad files, bad arguments, missing optional dependencies) into one line on stderr and
exit status 2. A simulation that goes non-finite exits with status 1, Ctrl-C with status 130.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

from .cli_simulate import UsageError
from .parsers.shapes import MESH_HULL_VERTICES

DESCRIPTION = """\
jaxsim-like: load, inspect and simulate robots (URDF, SDF, MJCF) with jaxsim_like.

A model is a shipped name (pendulum, cart_pole, quadruped, humanoid) or a file path.
Compiled executables are cached (JAXSIM_LIKE_CACHE_DIR, default ~/.cache/jaxsim_like/jax),
so a second run of the same model starts without compiling."""

EXAMPLES = """\
examples:
  jaxsim-like info humanoid
  jaxsim-like simulate humanoid --duration 5 --plot run.png
  jaxsim-like simulate path/to/robot.urdf --mesh-points 8 --out run.npz --every 10
  jaxsim-like simulate humanoid --batch 256 --quiet
  jaxsim-like simulate humanoid --batch 4 --html run.html
  jaxsim-like view humanoid --recording run.npz --out view.html
  jaxsim-like bench --model humanoid --batches 1,64

exit status: 0 done, 1 a simulation went non-finite, 2 bad input or arguments, 130 Ctrl-C
(simulate then prints the summary of the steps done)."""


def _model_source(name_or_path: str) -> str:
    """A shipped model's name (``humanoid``), a path to a URDF/SDF/MJCF file, or an XML string;
    UsageError for a directory, a missing file or a ``.xacro`` file."""
    from . import models

    if name_or_path.lstrip().startswith("<"):
        return name_or_path
    if name_or_path.lower().endswith(".xacro"):
        target = os.path.basename(name_or_path)[: -len(".xacro")]
        target = target if target.lower().endswith((".urdf", ".sdf")) else f"{target}.urdf"
        raise UsageError(f"{name_or_path}: xacro files must be expanded first, e.g. `xacro {name_or_path} > {target}`")
    if os.path.isdir(name_or_path):
        raise UsageError(f"{name_or_path} is a directory, not a URDF, SDF or MJCF file")
    if os.path.isfile(name_or_path):
        return name_or_path
    if os.sep in name_or_path or (os.altsep and os.altsep in name_or_path) or os.path.splitext(name_or_path)[1]:
        raise UsageError(f"{name_or_path}: no such file")
    return models.path(name_or_path)


def _tree_lines(model) -> list[str]:
    from .dynamics.model import JointKind

    kinds = {JointKind.REVOLUTE: "revolute", JointKind.PRISMATIC: "prismatic", JointKind.BALL_ROTATION: "ball", JointKind.SCREW: "screw"}
    children: dict[int, list[int]] = {}
    for link, parent in enumerate(model.parent):
        children.setdefault(parent, []).append(link)
    joint_of_link = {link: joint for joint, link in enumerate(model.joint_link)}
    lines: list[str] = []

    def visit(link: int, depth: int) -> None:
        joint = joint_of_link.get(link)
        via = "" if joint is None else f"  <- {model.joint_names[joint]} ({kinds[model.joint_type[link]]})"
        lines.append(f"{'  ' * depth}{model.link_names[link]}  [{float(model.link_mass[link]):.3f} kg]{via}")
        for child in children.get(link, []):
            visit(child, depth + 1)

    visit(0, 1)
    return lines


def _load(args: argparse.Namespace):
    """The model of ``args.model`` with the loading options (base, strictness, mesh points)."""
    from .loading import load_model

    return load_model(_model_source(args.model), floating_base=args.floating_base, strict=args.strict, contact_sampling=_sampling(args))


def _sampling(args: argparse.Namespace):
    """The contact sampling of ``--mesh-points``, ``--mesh-hulls`` and ``--ellipsoid-points``."""
    from .loading import ContactSampling

    default = ContactSampling()
    hulls = default.mesh_hulls if args.mesh_hulls is None else args.mesh_hulls
    return ContactSampling(mesh_max_points=args.mesh_points, mesh_hulls=hulls, sphere_samples=args.ellipsoid_points)


def summary_lines(model) -> list[str]:
    """A text summary of a model: tree, DoFs, masses, frames, contact points (and the friction its
    file gives them) and loop closures."""
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
        *_friction_lines(model),
        "tree:",
        *_tree_lines(model),
    ]
    if model.frame_names:
        lines.append("frames: " + ", ".join(model.frame_names))
    return lines + _closure_lines(model)


def _friction_lines(model) -> list[str]:
    """The friction the file gives the collidable points (``Model.point_friction``), if any."""
    if model.point_friction is None:
        return []
    friction = np.asarray(model.point_friction)
    own = friction[friction >= 0]
    span = f"{own.min():g}" if own.min() == own.max() else f"{own.min():g} to {own.max():g}"
    rest = f"; the other {friction.size - own.size} the contact law's" if own.size < friction.size else ""
    return [f"friction     the file's, {span}, on {own.size} of {friction.size} points{rest}"]


def _closure_lines(model) -> list[str]:
    """One line per loop closure: its name, kind and the links (or world, mocap body) it joins."""
    loops = model.loops

    def side(link: int, mocap: int) -> str:
        if link >= 0:
            return model.link_names[link]
        return f"mocap '{loops.mocap_names[mocap]}'" if mocap >= 0 else "world"

    lines = [f"loop closures ({loops.count}):"] if loops.count else []
    for k, name in enumerate(loops.names):
        lines.append(f"  {name}  {loops.kind[k]}  {side(loops.link1[k], loops.mocap1[k])} -- {side(loops.link2[k], loops.mocap2[k])}")
    return lines


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
        "--strict", action="store_true", help="fail on what otherwise loads with a warning (inconsistent inertias, mimics of missing joints, ...)"
    )
    meshes = parser.add_mutually_exclusive_group()
    meshes.add_argument(
        "--mesh-points", type=_non_negative, metavar="N",
        help="make each collision mesh N collidable points, spread by farthest-point sampling of its hull, instead of a hull "
        "(0: meshes do not collide)",
    )
    meshes.add_argument(
        "--mesh-hulls", type=_hull_vertices, metavar="V",
        help="make each collision mesh the convex hull of at most V (>= 4) of its vertices, which touches other hulls, "
        "boxes, spheres and capsules and rests on the ground on 4 of its vertices at most "
        f"(default: {MESH_HULL_VERTICES})",
    )
    parser.add_argument(
        "--ellipsoid-points", type=_lattice_points, metavar="N",
        help="make each collision ellipsoid N (>= 2) collidable points of a Fibonacci lattice instead of an exact ellipsoid",
    )


def _lattice_points(text: str) -> int:
    value = int(text)
    if value < 2:
        raise argparse.ArgumentTypeError(f"must be an integer >= 2, got {text}")
    return value


def _non_negative(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text}")
    return value


def _hull_vertices(text: str) -> int:
    value = int(text)
    if value < 4:
        raise argparse.ArgumentTypeError(f"must be an integer >= 4, got {text}")
    return value


def _precision_option(parser: argparse.ArgumentParser, default: str) -> None:
    parser.add_argument("--x64", action="store_true", help=f"compute in float64 (default: {default})")


def _add_info(commands) -> None:
    parser = commands.add_parser("info", help="print a model's tree, DoFs, masses, frames and contact points")
    parser.add_argument("model", help="a shipped model name (pendulum, cart_pole, quadruped, humanoid) or a URDF/SDF/MJCF path")
    _loading_options(parser)
    parser.set_defaults(handler=_run_info)


def _run_info(args: argparse.Namespace) -> int:
    print("\n".join(summary_lines(_load(args)) + _world_closure_lines(_model_source(args.model))))
    return 0


def _world_closure_lines(source) -> list[str]:
    """One line per loop closure between two trees of an MJCF file (a closure of the world that
    ``load_world`` loads, not of the model): its name, kind and the models' links it joins."""
    if not str(source).lower().endswith((".xml", ".mjcf")):
        return []
    from .loading import load_world

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the model's load warned already
        closures = load_world(source).closures
    lines = [f"closures between models ({len(closures)}, load_world):"] if closures else []
    return lines + [f"  {c.name}  {c.kind}  {c.model1}:{c.link1} -- {c.model2}:{c.link2}" for c in closures]


def _add_simulate(commands) -> None:
    from .recording import SAMPLE_FIELDS

    parser = commands.add_parser(
        "simulate", help="drop a model on the ground and simulate it",
        description="Drop a model (its lowest collidable point at --height) and simulate it with zero joint torques. "
        "Only the final states and running statistics are kept unless --out or --plot asks for samples.",
    )
    parser.add_argument("model", help="a shipped model name or a URDF/SDF/MJCF path")
    _loading_options(parser)
    _precision_option(parser, "float32")
    parser.add_argument("--duration", type=float, default=2.0, help="simulated time [s] (default 2)")
    parser.add_argument("--dt", type=float, default=0.002, help="step size [s] (default 0.002)")
    parser.add_argument("--height", type=float, default=0.5, help="drop height of the lowest contact point [m] (default 0.5)")
    parser.add_argument("--batch", type=int, default=1, help="number of worlds; all but world 0 get perturbed joint positions (default 1)")
    parser.add_argument("--integrator", choices=("implicit_euler", "semi_implicit_euler", "rk4"), default="implicit_euler")
    parser.add_argument("--seed", type=int, default=0, help="seed of the batch's perturbations")
    parser.add_argument("--max-penetration", type=float, help="contact stiffness: the model's weight rests on four points this deep [m] (default 0.001)")
    parser.add_argument("--friction", type=float, help="Coulomb friction coefficient of the ground (default 0.5, or the file's own per collision: MJCF)")
    parser.add_argument("--out", help="stream the samples to this .npz file (jaxsim_like.recording.Recording.load reads it)")
    parser.add_argument("--every", type=int, default=1, metavar="K", help="keep every K-th step in --out (must divide the step count; default 1)")
    parser.add_argument("--fields", default=",".join(SAMPLE_FIELDS), help="comma-separated fields to keep in --out (default: all of them)")
    parser.add_argument("--worlds", default="all", help="comma-separated worlds to keep in --out (default: all)")
    parser.add_argument("--plot", help="save a figure (.png, .pdf, .svg) of world 0; needs matplotlib")
    parser.add_argument("--html", help="save a 3D view of the run (every world; a self-contained .html file)")
    parser.add_argument("--quiet", action="store_true", help="print only the results (no model summary, no progress)")
    parser.set_defaults(handler=_run_simulate)


def _run_simulate(args: argparse.Namespace) -> int:
    from . import cli_simulate
    from .compile_cache import CompileLog

    started = time.perf_counter()
    cli_simulate.check_arguments(args)
    log = CompileLog()
    if args.html:
        from .viewer import load

        model, description = load(_model_source(args.model), floating_base=args.floating_base, strict=args.strict, contact_sampling=_sampling(args))
    else:
        model, description = _load(args), None
    cli_simulate.check_model(model)
    if not args.quiet:
        print("\n".join(summary_lines(model)) + "\n", flush=True)
    lines, diverged, interrupted = cli_simulate.simulate(args, model, started, log, description)
    print("\n".join(lines))
    if diverged is not None:
        print(f"jaxsim-like: error: {diverged}", file=sys.stderr)
    return 130 if interrupted else 1 if diverged is not None else 0


def _add_view(commands) -> None:
    parser = commands.add_parser("view", help="write a self-contained 3D view (HTML) of a model, or of a recorded run")
    parser.add_argument("model", help="a shipped model name or a URDF/SDF path")
    _loading_options(parser)
    parser.add_argument("--recording", help="a .npz recording (jaxsim-like simulate --out) to play")
    parser.add_argument("--out", default="view.html", help="the HTML file to write (default view.html)")
    parser.add_argument("--fps", type=float, default=30.0, help="frames per second kept from the recording (default 30)")
    parser.set_defaults(handler=_run_view)


def _run_view(args: argparse.Namespace) -> int:
    from .viewer import export_html, load

    model, description = load(_model_source(args.model), floating_base=args.floating_base, strict=args.strict, contact_sampling=_sampling(args))
    path = export_html(args.out, model, args.recording, description=description, fps=args.fps)
    print(f"wrote        {path} ({path.stat().st_size / 1e6:.2f} MB): open it in a web browser")
    return 0


def _add_bench(commands) -> None:
    parser = commands.add_parser("bench", help="measure the throughput of step, rollout and batches of worlds")
    parser.add_argument("--model", action="append", help="a shipped model name or a path (repeatable; default: every shipped model)")
    parser.add_argument("--batches", default="1,64,1024", help="comma-separated batch sizes (default 1,64,1024)")
    parser.add_argument("--steps", type=int, default=20, help="steps per rollout (default 20)")
    parser.add_argument("--chunk", type=int, default=64, help="worlds per chunk in the chunked mode (default 64)")
    parser.add_argument("--repeats", type=int, default=3, help="timed calls per figure, median (default 3)")
    _precision_option(parser, "float32")
    parser.set_defaults(handler=_run_bench)


def _run_bench(args: argparse.Namespace) -> int:
    print(bench(args))
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The parser of every subcommand (``args.handler(args)`` runs the chosen one)."""
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="jaxsim-like", description=DESCRIPTION, epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"jaxsim-like {__version__}")
    parser.add_argument("--no-cache", action="store_true", help="do not read or write the persistent compilation cache")
    commands = parser.add_subparsers(dest="command", required=True, metavar="{info,simulate,view,bench}")
    for add in (_add_info, _add_simulate, _add_view, _add_bench):
        add(commands)
    return parser


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
    import jax

    from .compile_cache import enable_persistent_cache
    from .parsers.errors import ModelLoadError

    args = build_parser().parse_args(argv)
    if getattr(args, "x64", False):
        jax.config.update("jax_enable_x64", True)
    if not args.no_cache:
        enable_persistent_cache()
    try:
        return args.handler(args)
    except KeyboardInterrupt:
        print("\njaxsim-like: interrupted (Ctrl-C)", file=sys.stderr)
        return 130
    except (ModelLoadError, ValueError, ImportError, OSError) as error:
        message = " ".join(str(error).split("\n")) or type(error).__name__
        print(f"jaxsim-like: error: {message}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
