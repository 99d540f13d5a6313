"""Simulated seconds per wall second: the largest step each library survives, and what it buys.

    python -m benchmarks.simulated_seconds [--model humanoid|icub|all] [--quick] [--also-at 0.01]

The yardstick is the simulated second, not the step: a step that must be 10x smaller is 10x
slower for the user. For each model and library:

1. **Largest stable step.** ``--worlds`` limp drops (joint positions perturbed uniformly by up to
   +-0.5 rad, the lowest collision geometry of the unperturbed robot 0.5 m above the ground, zero
   torques) are simulated for ``--seconds`` at each step of ``--dts``; the largest step at which
   none goes non-finite is kept.
2. **Throughput at that step.** Simulated seconds per wall second of one world (a jitted
   ``lax.scan`` of the library's step) and of batches of 64, 1024 and 4096 worlds (the same scan
   under ``jax.vmap``; for jaxsim_like also through :func:`jaxsim_like.batching.simulate_batch`,
   its batched entry point, which runs chunks of 1024 on the CPU), after warm-up, median of
   ``--repeats`` calls. ``--also-at`` times jaxsim_like's implicit rows at more steps of
   ``--dts`` (where none of the drops diverged), each a row of its own.
3. **At rest there.** For jaxsim_like's implicit step on the URDF, ``--rest-drops`` drops of
   :mod:`benchmarks.resting` (the unperturbed one and others with the joints offset by up to 0.1
   rad, in the row's precision) for ``--rest-seconds`` at the row's step: per drop the fastest
   joint after 5 s; the median over the drops, whether it is quiet (below issue 33's 0.05
   rad/s), and how many drops are still (every joint below it). One chaotic drop moves from
   quiet to moving with the rounding of any change; the median of many does not.

Libraries, each in its own subprocess (jax's x64 switch is process-wide): jaxsim_like's implicit
step (the default) and its explicit semi-implicit Euler, float32 as GPU batches use, and, on the
humanoid row, the implicit step on MuJoCo's own humanoid MJCF (what the MJCF loader reads of it:
joint damping, springs, armature, soft limits, its four foot-floor contact pairs) at the file's
step, from the MuJoCo C row's initial states on that MJCF; MJX (float32,
its only precision) on the same URDF (see :mod:`benchmarks.peers.mjx_peer`: Newton, one
iteration) and, on the humanoid row, MuJoCo's own humanoid at its own options and 5 ms step;
jaxsim (float64, its default) with its default soft contacts; MuJoCo C (float64, as it runs)
through ``mujoco.rollout`` on a thread pool of every core (one thread for the single world), on
the same converted URDF with MJX's options and, on the humanoid row, on MuJoCo's own humanoid at
its own options, from the same perturbed initial states as the MJX rows. A MuJoCo C world counts
as diverged when MuJoCo resets it (its answer to a non-finite or huge acceleration, which sets
the time back to 0) or its state is not finite.

At the end, the ratio of every row's rate to MuJoCo C's on the same model at the same batch size
(the ``... chunked`` rates of ``simulate_batch`` against the same B; the rows on MuJoCo's humanoid
against MuJoCo C on it), and on the humanoid to MuJoCo C on its own humanoid.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

MUJOCO_C = "mujoco C rollout"
MUJOCO_C_OWN = "mujoco C rollout (MuJoCo humanoid, own options)"
OURS_ON_MJCF = "jaxsim_like implicit (MuJoCo humanoid MJCF)"
LIBRARIES = (
    "jaxsim_like implicit", OURS_ON_MJCF, "jaxsim_like explicit", "mjx", "mjx (MuJoCo humanoid, own options)", "jaxsim", MUJOCO_C,
    MUJOCO_C_OWN,
)
# The steps of one mujoco.rollout call in the divergence runs (its output holds every step).
MUJOCO_C_SEGMENT = 250
SPREAD = 0.5
HEIGHT = 0.5


def offsets(names, size: int, seed: int = 0):
    """``(size, n)`` joint positions, uniform in +-SPREAD rad."""
    import numpy as np

    return np.random.default_rng(seed).uniform(-SPREAD, SPREAD, (size, len(names)))


def subject(library: str, path: str, dt: float):
    """The library's :class:`benchmarks.timing.StepSubject` for drops of the model at ``dt``."""
    import jax.numpy as jnp
    import numpy as np

    from benchmarks import timing

    if library.startswith("jaxsim_like"):
        import jax

        import jaxsim_like as js
        from jaxsim_like.simulation.step import contact_point_positions

        integrator = "semi_implicit_euler" if "explicit" in library else "implicit_euler"
        if library == OURS_ON_MJCF:
            # The MuJoCo C row's drops: the torso HEIGHT above its place in the file, the same offsets.
            from benchmarks.peers import mjx_peer

            model = js.load_model(str(mjx_peer.MUJOCO_HUMANOID))
            base = np.array([0.0, 0.0, mujoco_humanoid_height() + HEIGHT])
        else:
            model = js.load_model(path)
            upright = js.State.build(model, base_position=np.zeros(3))
            base = np.array([0.0, 0.0, HEIGHT - float(jnp.min(contact_point_positions(model, upright)[:, 2]))])
        params = js.SimulationParams.build(model, dt=dt, integrator=integrator)
        dtype = model.link_mass.dtype
        build = jax.jit(jax.vmap(lambda q: js.State.build(model, base_position=base, joint_positions=q)))

        def batch(size):
            return build(jnp.asarray(offsets(model.joint_names, size), dtype)), jnp.zeros((size, model.dofs), dtype)

        def step(constants, state, torques):
            model, params = constants
            return js.step(model, state, joint_torques=torques, params=params)[0]

        state = js.State.build(model, base_position=base)
        return timing.StepSubject(library, (model, params), state, jnp.zeros(model.dofs, dtype), step, batch, None, {"model": model})
    if library.startswith("mjx"):
        import mujoco
        from mujoco import mjx

        from benchmarks.peers import mjx_peer

        if "own options" in library:
            host = mujoco.MjModel.from_xml_path(str(mjx_peer.MUJOCO_HUMANOID))
            host.opt.timestep = dt
            names = mjx_peer.joint_names(host)
            data = mujoco.MjData(host)
            mujoco.mj_resetData(host, data)
            data.qpos[2] += HEIGHT
            model, start = mjx.put_model(host), mjx.put_data(host, data)
            address = np.array([host.jnt_qposadr[host.joint(name).id] for name in names], dtype=int)
            import jax

            build = jax.jit(jax.vmap(lambda q: start.replace(qpos=start.qpos.at[address].add(q))))

            def batch(size):
                return build(jnp.asarray(offsets(names, size), start.qpos.dtype)), jnp.zeros((size, host.nu), start.qpos.dtype)

            return timing.StepSubject(library, model, start, jnp.zeros(host.nu), mjx_peer.step, batch, None, {})
        return mjx_peer.subject(path, dt, offsets, library, depth=-HEIGHT)
    from benchmarks.peers import jaxsim_step_peer

    probe = jaxsim_step_peer.load(path, dt)
    data = jaxsim_step_peer.build_data(probe, jnp.zeros(3), jnp.zeros(probe.dofs()))
    lowest = float(np.min(jaxsim_step_peer.point_positions(probe, data)[:, 2]))
    return jaxsim_step_peer.subject(path, dt, np.array([0.0, 0.0, HEIGHT - lowest]), offsets)[0]


def mujoco_humanoid_height() -> float:
    """The height [m] of MuJoCo's humanoid's torso in its file (its ``qpos0``)."""
    import mujoco

    from benchmarks.peers import mjx_peer

    return float(mujoco.MjModel.from_xml_path(str(mjx_peer.MUJOCO_HUMANOID)).qpos0[2])


def mujoco_humanoid_timestep() -> float:
    """The step [s] of MuJoCo's humanoid's ``<option>``: its rows run at it only."""
    import mujoco

    from benchmarks.peers import mjx_peer

    return float(mujoco.MjModel.from_xml_path(str(mjx_peer.MUJOCO_HUMANOID)).opt.timestep)


def _scan(step, steps: int):
    import jax

    def run(constants, state, torques):
        return jax.lax.scan(lambda s, _: (step(constants, s, torques), None), state, None, length=steps)[0]

    return run


def _finite(tree):
    import jax
    import jax.numpy as jnp

    return jnp.all(jnp.stack([jnp.all(jnp.isfinite(leaf), axis=tuple(range(1, leaf.ndim))) for leaf in jax.tree.leaves(tree) if jnp.issubdtype(leaf.dtype, jnp.floating)]), axis=0)


def _median_seconds(call, repeats: int) -> float:
    """Median wall time [s] of ``call()`` over ``repeats`` calls, after a warm-up call."""
    import jax

    from benchmarks import timing

    jax.block_until_ready(call())
    return timing._median_seconds(call, repeats)


def mujoco_c_drops(library: str, path: str, dt: float):
    """``(model, initial_states)``: the MuJoCo C model of the MJX row of the same name (MuJoCo's
    own humanoid at its options, or the URDF converted as for MJX, with MJX's options) at ``dt``,
    and a function ``size -> (size, nstate)`` of full-physics states of the MJX rows' drops."""
    import mujoco
    import numpy as np

    from benchmarks.peers import mjx_peer

    if "own options" in library:
        model = mujoco.MjModel.from_xml_path(str(mjx_peer.MUJOCO_HUMANOID))
        model.opt.timestep = dt
        data = mujoco.MjData(model)
        mujoco.mj_resetData(model, data)
        data.qpos[2] += HEIGHT
        qpos = data.qpos.copy()
    else:
        model = mjx_peer.load(path, dt)
        qpos = mjx_peer.standing_qpos(model, -HEIGHT)
    names = mjx_peer.joint_names(model)
    address = np.array([model.jnt_qposadr[model.joint(name).id] for name in names], dtype=int)
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    data = mujoco.MjData(model)

    def initial_states(size: int) -> np.ndarray:
        # The MJX rows build float32 offsets: the same values here, in float64.
        shifts = offsets(names, size).astype(np.float32).astype(np.float64)
        states = np.empty((size, mujoco.mj_stateSize(model, spec)))
        for i in range(size):
            mujoco.mj_resetData(model, data)
            data.qpos[:] = qpos
            data.qpos[address] += shifts[i]
            mujoco.mj_getState(model, data, states[i], spec)
        return states

    return model, initial_states


def mujoco_c_worker(library: str, path: str, dts: list[float], worlds: int, seconds: float, batches: list[int], steps: int, repeats: int) -> dict:
    """:func:`worker` for MuJoCo C: ``mujoco.rollout`` of the drops, worlds over a pool of every core."""
    import mujoco
    import numpy as np
    from mujoco import rollout

    threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    diverged, datas = {}, {}
    with rollout.Rollout(nthread=threads) as pool:

        def run(model, states, count, out=None):
            """The states of ``count`` steps from each of ``states`` (one thread for one world)."""
            data = [mujoco.MjData(model) for _ in range(threads)] if id(model) not in datas else datas[id(model)]
            datas[id(model)] = data
            control = np.zeros((1, 1, model.nu))
            if len(states) == 1:
                return rollout.rollout(model, data[0], states, control, nstep=count, state=out)[0]
            return pool.rollout(model, data, states, control, nstep=count, state=out)[0]

        for dt in dts:
            model, initial_states = mujoco_c_drops(library, path, dt)
            states, total = initial_states(worlds), max(1, int(round(seconds / dt)))
            done, alive = 0, np.ones(worlds, bool)
            while done < total:
                count = min(MUJOCO_C_SEGMENT, total - done)
                trajectory = run(model, states, count)
                states = trajectory[:, -1]
                done += count
                # time is the first entry of a full-physics state; a reset sets it back to 0.
                alive &= np.all(np.isfinite(trajectory), axis=(1, 2)) & np.isclose(states[:, 0], done * dt, rtol=0, atol=dt / 2)
            diverged[dt] = int(worlds - alive.sum())
        stable = [dt for dt in dts if diverged[dt] == 0]
        result = {"library": library, "dtype": None, "diverged": diverged, "largest_dt": max(stable) if stable else None, "rates": {}}
        if not stable:
            return result
        dt = max(stable)
        model, initial_states = mujoco_c_drops(library, path, dt)
        result["dtype"] = "float64"
        result["threads"] = threads
        for size in [1, *batches]:
            states = initial_states(size)
            out = np.empty((size, steps, states.shape[1]))
            run(model, states, steps, out)  # warm-up
            samples = []
            for _ in range(repeats):
                start = time.perf_counter()
                run(model, states, steps, out)
                samples.append(time.perf_counter() - start)
            result["rates"][str(size)] = size * steps * dt / sorted(samples)[len(samples) // 2]
    return result


REST_AFTER = 5.0  # s: issue 33's resting criterion, every joint below resting.TARGET from then on


def at_rest(path: str, dt: float, seconds: float, drops: int) -> dict:
    """``{"median": [rad/s], "still": int, "drops": int}``: over ``drops`` drops of
    :func:`benchmarks.resting.rest` at ``dt`` [s] for ``seconds`` simulated seconds, each drop's
    fastest joint speed after ``REST_AFTER`` s (infinite where the drop diverged): their median,
    and how many are below issue 33's target."""
    import numpy as np

    from benchmarks import resting

    _, finite, joints, _, _ = resting.rest(path, dt, seconds, drops)
    fastest = np.where(finite, joints[:, int(round(REST_AFTER / dt)):].max(axis=(1, 2)), np.inf)
    return {"median": float(np.median(fastest)), "still": int((fastest < resting.TARGET).sum()), "drops": drops}


def worker(library: str, path: str, dts: list[float], worlds: int, seconds: float, batches: list[int], steps: int, repeats: int,
           rest_seconds: float = 0.0, rest_drops: int = 16) -> dict:
    """One library on one model: divergences per step size, then throughputs at the largest stable step
    (and, for jaxsim_like's implicit step on the URDF with ``rest_seconds > REST_AFTER``, :func:`at_rest` there)."""
    if library.startswith(MUJOCO_C):
        return mujoco_c_worker(library, path, dts, worlds, seconds, batches, steps, repeats)
    import jax
    import jax.numpy as jnp

    diverged = {}
    for dt in dts:
        s = subject(library, path, dt)
        states, torques = s.batch(worlds)
        final = jax.jit(jax.vmap(_scan(s.step, max(1, int(round(seconds / dt)))), in_axes=(None, 0, 0)))(s.constants, states, torques)
        diverged[dt] = int(worlds - int(jnp.sum(_finite(final))))
    stable = [dt for dt in dts if diverged[dt] == 0]
    result = {"library": library, "dtype": None, "diverged": diverged, "largest_dt": max(stable) if stable else None, "rates": {}}
    if not stable:
        return result
    dt = max(stable)
    s = subject(library, path, dt)
    result["dtype"] = str(jax.tree.leaves(s.state)[0].dtype)
    single = jax.jit(_scan(s.step, steps))
    result["rates"]["1"] = steps * dt / _median_seconds(lambda: single(s.constants, s.state, s.torques), repeats)
    many = jax.jit(jax.vmap(_scan(s.step, steps), in_axes=(None, 0, 0)))
    for size in batches:
        states, torques = s.batch(size)
        result["rates"][str(size)] = size * steps * dt / _median_seconds(lambda: many(s.constants, states, torques), repeats)
    if library.startswith("jaxsim_like"):
        from jaxsim_like.batching import simulate_batch

        model, params = s.constants
        for size in batches:
            states, _ = s.batch(size)
            zeros = jnp.zeros((steps, model.dofs), states.joint_positions.dtype)
            call = lambda: simulate_batch(model, states, zeros, params=params, trajectory=False)[0]  # noqa: E731
            result["rates"][f"{size} chunked"] = size * steps * dt / _median_seconds(call, repeats)
    if library == "jaxsim_like implicit" and rest_seconds > REST_AFTER:
        result["rest"] = at_rest(path, dt, rest_seconds, rest_drops)
    return result


def run(choice: str, dts: list[float], worlds: int, seconds: float, batches: list[int], steps: int, repeats: int,
        libraries: tuple[str, ...] = LIBRARIES, also_at: tuple[float, ...] = (), rest_seconds: float = 0.0, rest_drops: int = 16) -> list[dict]:
    """Every library (of ``libraries``) on the models of ``choice`` (see :func:`benchmarks.models.model_paths`), each
    in its own subprocess, jaxsim_like's implicit step on the URDF also at the steps ``also_at`` where none of
    the drops diverged (a row each); prints one line per row and writes ``results/simulated_seconds.json``."""
    from benchmarks.models import model_paths

    rows = []
    for name, path in model_paths(choice).items():
        for library in libraries:
            if "MuJoCo humanoid" in library and name != "humanoid":
                continue
            library_dts = [mujoco_humanoid_timestep()] if "MuJoCo humanoid" in library else dts
            row = _row(name, library, path, library_dts, worlds, seconds, batches, steps, repeats, rest_seconds, rest_drops)
            if row is None:
                continue
            rows.append(row)
            if library != "jaxsim_like implicit":
                continue
            for dt in also_at:
                if dt != row["largest_dt"] and row["diverged"].get(str(dt)) == 0:
                    extra = _row(name, library, path, [dt], worlds, seconds, batches, steps, repeats, rest_seconds, rest_drops)
                    rows += [extra] if extra is not None else []
    for line in ratio_lines(rows):
        print(line, flush=True)
    out = Path(__file__).resolve().parent / "results" / "simulated_seconds.json"
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps(rows, indent=1))
    print(f"wrote {out}")
    return rows


def _row(name: str, library: str, path, dts: list[float], worlds: int, seconds: float, batches: list[int], steps: int,
         repeats: int, rest_seconds: float, rest_drops: int) -> dict | None:
    """One row of :func:`run`: :func:`worker` in a subprocess (None, and a line saying why, when it fails)."""
    x64 = "1" if library == "jaxsim" else "0"
    command = [sys.executable, "-m", "benchmarks.simulated_seconds", "--library", library, "--path", str(path),
               "--dts", ",".join(map(str, dts)), "--worlds", str(worlds), "--seconds", str(seconds),
               "--batches", ",".join(map(str, batches)), "--steps", str(steps), "--repeats", str(repeats),
               "--rest-seconds", str(rest_seconds), "--rest-drops", str(rest_drops)]
    env = {**os.environ, "JAX_ENABLE_X64": x64, "JAXSIM_ENABLE_X64": x64}
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=Path(__file__).resolve().parents[1])
    if done.returncode:
        print(f"[{name}] {library}: failed: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}", flush=True)
        return None
    row = {"model": name, **json.loads(done.stdout.strip().splitlines()[-1])}
    diverged = ", ".join(f"{float(dt):g}: {n}" for dt, n in row["diverged"].items())
    rates = ", ".join(f"B={b} {r:,.1f}" for b, r in row["rates"].items())
    rest = f"; {_rest_label(row['rest'])} {REST_AFTER:g} s after the drops" if "rest" in row else ""
    print(f"[{name}] {library} ({row['dtype']}): diverged of {worlds} {{{diverged}}}; timed at dt {row['largest_dt']}{rest}; "
          f"simulated s / wall s: {rates}", flush=True)
    return row


def _rest_label(rest: dict) -> str:
    """``at_rest``'s figures and whether the median drop meets issue 33's target."""
    from benchmarks.resting import TARGET

    verdict = "quiet" if rest["median"] < TARGET else "moving"
    return f"{verdict}, fastest joint {rest['median']:.3g} rad/s (median), {rest['still']}/{rest['drops']} still"


def ratio_lines(rows: list[dict]) -> list[str]:
    """A markdown table: every row's simulated seconds per wall second, and its ratio to MuJoCo C's
    rate at the same batch size on the same model (the rows on MuJoCo's humanoid MJCF against
    MuJoCo C on it, the others against MuJoCo C on the URDF) and, on the humanoid, on MuJoCo's own
    humanoid."""
    lines = []
    for model in dict.fromkeys(row["model"] for row in rows):
        own = [row for row in rows if row["model"] == model]
        rates = {row["library"]: row["rates"] for row in own if row["library"] in (MUJOCO_C, MUJOCO_C_OWN) and row["rates"]}
        columns = [label for label, name in (("same model", MUJOCO_C), ("own humanoid", MUJOCO_C_OWN)) if name in rates]
        if not columns:
            continue
        lines += ["", f"[{model}] simulated s per wall s at the step of each row, and x MuJoCo C ({', '.join(columns)}); "
                  f"at rest: the drops' fastest joint {REST_AFTER:g} s after them (median), and the drops still:", "",
                  "| library | dtype | dt [s] | at rest | B | simulated s / wall s | " + " | ".join(f"x MuJoCo C, {label}" for label in columns) + " |",
                  "|---|---|---|---|---|---|" + "---|" * len(columns)]
        for row in own:
            library = row["library"]
            same = rates.get(MUJOCO_C_OWN if "MuJoCo humanoid" in library else MUJOCO_C, {})
            references = [same if label == "same model" else rates[MUJOCO_C_OWN] for label in columns]
            rest = _rest_label(row["rest"]) if "rest" in row else ""
            for batch, rate in row["rates"].items():
                size = batch.split()[0]
                ratios = [f"{rate / reference[size]:.2f}" if size in reference else "" for reference in references]
                lines.append(f"| {library}{' (simulate_batch)' if batch.endswith('chunked') else ''} | {row['dtype']} | "
                             f"{row['largest_dt']:g} | {rest} | {size} | {rate:,.1f} | " + " | ".join(ratios) + " |")
    return lines


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of the per-simulated-second run (shared with ``benchmarks/step.py --per-second``)."""
    parser.add_argument("--dts", default="0.0005,0.001,0.002,0.005,0.01", help="step sizes tried [s]")
    parser.add_argument("--worlds", type=int, default=64, help="perturbed drops per step size")
    parser.add_argument("--seconds", type=float, default=1.5, help="simulated seconds per drop")
    parser.add_argument("--batches", default="64,1024,4096")
    parser.add_argument("--steps", type=int, default=100, help="steps per timed call")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--libraries", default=",".join(LIBRARIES), help=f"some of: {', '.join(LIBRARIES)} (comma-separated)")
    parser.add_argument("--also-at", default="", help="jaxsim_like implicit also timed at these steps of --dts [s] where none diverged")
    parser.add_argument("--rest-seconds", type=float, default=6.0,
                        help=f"the resting drops of jaxsim_like implicit at its row's step for this long [s], quiet or not {REST_AFTER:g} s after them (0: none)")
    parser.add_argument("--rest-drops", type=int, default=16, help="resting drops: the unperturbed one and perturbed ones")


def run_from(args: argparse.Namespace, choice: str) -> list[dict]:
    """:func:`run` with the options of :func:`add_arguments`."""
    dts = sorted(float(x) for x in args.dts.split(","))
    libraries = tuple(name.strip() for name in re.split(r",(?![^()]*\))", args.libraries))  # commas outside parentheses
    unknown = sorted(set(libraries) - set(LIBRARIES))
    if unknown:
        raise SystemExit(f"unknown libraries {unknown}: choose from {list(LIBRARIES)}")
    also_at = tuple(float(x) for x in args.also_at.split(",") if x)
    missing = sorted(set(also_at) - set(dts))
    if missing:
        raise SystemExit(f"--also-at {missing}: not among --dts {dts}")
    return run(choice, dts, args.worlds, args.seconds, [int(b) for b in args.batches.split(",")], args.steps, args.repeats, libraries,
               also_at, args.rest_seconds, args.rest_drops)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="all", choices=("humanoid", "icub", "all"))
    add_arguments(parser)
    parser.add_argument("--library", help=argparse.SUPPRESS)
    parser.add_argument("--path", help=argparse.SUPPRESS)
    parser.add_argument("--quick", action="store_true", help="16 worlds, 1 s, batch 64, one repeat")
    args = parser.parse_args()
    if args.quick:
        args.worlds, args.seconds, args.batches, args.repeats = 16, 1.0, "64", 1
    if args.library:
        from benchmarks import timing  # noqa: F401  (the shared XLA settings, before the backend starts)

        dts = sorted(float(x) for x in args.dts.split(","))
        batches = [int(b) for b in args.batches.split(",")]
        print(json.dumps(worker(args.library, args.path, dts, args.worlds, args.seconds, batches, args.steps, args.repeats, args.rest_seconds,
                                args.rest_drops)))
        return
    run_from(args, args.model)


if __name__ == "__main__":
    main()
