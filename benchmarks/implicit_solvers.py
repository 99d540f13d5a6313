"""The implicit step's linear solve: one articulated-body pass against a dense factorisation.

    python -m benchmarks.implicit_solvers [--quick]

The implicit step (``integrator="implicit_euler"``) solves
``(M + h sum_L J_L^T H_L J_L + diag(h (D_j + h K_j))) a = tau - h(q, nu) + sum_L J_L^T f_L``
by one articulated-body pass with augmented link inertias ``H_L`` and joint armature. The
alternative solves the same system densely: the composite-rigid-body mass matrix of the
augmented inertias (which is exactly ``M + sum_L J_L^T H_L J_L``), the right-hand side by
inverse dynamics at zero acceleration, and a Cholesky factorisation. Both are swapped into the
same step (everything else, contact law and integrator, is shared), so the comparison isolates
the solver. Measured in float64 on the shipped humanoid and quadruped:

- agreement of the accelerations over a falling and landing trajectory;
- stability: ``--worlds`` limp drops (joints perturbed by up to +-0.5 rad, 0.5 m) for 1 s at
  10 ms, non-finite worlds counted;
- cost: compile time of a 50-step scan, in-graph time per step (one world, and per world in one
  ``vmap`` of 64), medians of interleaved rounds in one process;
- gradient quality: a 200-step rollout of the kicked quadruped at 2 ms (contacts made and broken),
  ``grad . u`` against a Richardson central difference along the same random directions for
  each solver, and for the third alternative, a MuJoCo-style soft-constraint problem solved by
  Newton iterations, as MJX itself on the same URDF in float64 (its stability and cost per
  simulated second are in :mod:`benchmarks.simulated_seconds`);
- code size: the lines each solver adds.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib
import inspect
import statistics
import sys
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import timing  # noqa: E402  (the shared XLA settings, before the backend starts)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

jax.config.update("jax_enable_x64", True)

import jaxsim_like as js  # noqa: E402
from jaxsim_like import models  # noqa: E402
from jaxsim_like.dynamics import aba, spatial  # noqa: E402
from jaxsim_like.dynamics import kinematics as kin_module  # noqa: E402
from jaxsim_like.dynamics.model import topology  # noqa: E402

step_module = importlib.import_module("jaxsim_like.simulation.step")  # the module (the package exports the function)


def dense_accelerations(model, kin, joint_torques, W_f_ext, gravity, *, added_inertia=None, armature=None):
    """Drop-in for :func:`jaxsim_like.dynamics.aba.articulated_body_accelerations`: the same
    system, assembled (CRBA of the augmented inertias) and solved by Cholesky."""
    dtype = kin.G_H_L.dtype
    inertia = kin.G_M if added_inertia is None else kin.G_M + added_inertia
    composite = kin_module.subtree_sum(model, inertia)
    joints = np.asarray(model.joint_link, dtype=int)
    S = kin.G_S[joints]
    F = spatial.matvec(composite[joints], S, fused=False)
    above = topology(model.parent, model.joint_link).ancestor
    products = S @ F.T
    diagonal = model.joint_armature + (0.0 if armature is None else armature)
    M_qq = jnp.where(above, products, 0.0) + jnp.where(above.T & ~np.eye(model.dofs, dtype=bool), products.T, 0.0) + jnp.diag(diagonal)
    # Inverse dynamics at zero acceleration (gravity as an upward acceleration of the root).
    c = spatial.cross_motion(kin.G_v, kin.G_S * kin.qd[:, None])
    W_a = kin_module.ancestors_sum(model, c) - jnp.concatenate([gravity, jnp.zeros(3, dtype)])
    W_f = spatial.matvec(kin.G_M, W_a) + spatial.cross_force(kin.G_v, spatial.matvec(kin.G_M, kin.G_v)) - W_f_ext
    W_F = kin_module.subtree_sum(model, W_f)
    rhs_q = joint_torques - spatial.dot(S, W_F[joints])
    if model.floating_base:
        lhs = jnp.block([[composite[0], F.T], [F, M_qq]])
        rhs = jnp.concatenate([-W_F[0], rhs_q])
    else:
        lhs, rhs = M_qq, rhs_q
    factor = jax.scipy.linalg.cho_factor(lhs)
    a = jax.scipy.linalg.cho_solve(factor, rhs)
    if not model.floating_base:
        return jnp.zeros(6, dtype), a
    return a[:6], a[6:]


SOLVERS = {"one ABA pass (default)": aba.articulated_body_accelerations, "dense CRBA + Cholesky": dense_accelerations}


@contextlib.contextmanager
def solver(name: str):
    """Trace the implicit step with solver ``name`` inside the block."""
    original = step_module.articulated_body_accelerations
    step_module.articulated_body_accelerations = SOLVERS[name]
    try:
        yield
    finally:
        step_module.articulated_body_accelerations = original


def compiled(name: str, fn, *args):
    """``(seconds, executable)``: ``jax.jit(fn)`` traced with solver ``name`` and compiled for ``args``."""
    with solver(name):
        start = time.perf_counter()
        executable = jax.jit(fn).lower(*args).compile()
        return time.perf_counter() - start, executable


def scan(model, params, steps: int):
    def run(state, torques):
        return jax.lax.scan(lambda s, tau: js.step(model, s, joint_torques=tau, params=params), state, torques)

    return run


def drops(model, worlds: int, seed: int = 0):
    """``worlds`` limp states, joints uniform in +-0.5 rad, lowest point 0.5 m above the ground."""
    upright = js.State.build(model, base_position=np.zeros(3))
    base = np.array([0.0, 0.0, 0.5 - float(jnp.min(step_module.contact_point_positions(model, upright)[:, 2]))])
    offsets = np.random.default_rng(seed).uniform(-0.5, 0.5, (worlds, model.dofs))
    return jax.vmap(lambda q: js.State.build(model, base_position=base, joint_positions=q))(jnp.asarray(offsets))


def finite_worlds(states) -> np.ndarray:
    leaves = [leaf for leaf in jax.tree.leaves(states) if jnp.issubdtype(leaf.dtype, jnp.floating)]
    return np.all(np.stack([np.isfinite(np.asarray(leaf)).reshape(leaf.shape[0], -1).all(axis=1) for leaf in leaves]), axis=0)


def agreement(model) -> float:
    """Largest relative difference of the accelerations of the two solvers along one drop."""
    params = js.SimulationParams.build(model, dt=0.002)
    state = drops(model, 1)
    state = jax.tree.map(lambda x: x[0], state)
    torques = jnp.zeros((400, model.dofs))
    outputs = {}
    for name in SOLVERS:
        _, run = compiled(name, scan(model, params, 400), state, torques)
        _, out = run(state, torques)
        outputs[name] = np.concatenate([np.asarray(out.base_acceleration), np.asarray(out.joint_accelerations)], axis=1)
    ours, dense = outputs.values()
    return float(np.abs(ours - dense).max() / np.abs(dense).max())


def stability(model, worlds: int, dt: float) -> dict[str, int]:
    params = js.SimulationParams.build(model, dt=dt)
    states = drops(model, worlds, seed=1)
    torques = jnp.zeros((worlds, int(round(1.0 / dt)), model.dofs))
    counts = {}
    for name in SOLVERS:
        _, run = compiled(name, jax.vmap(scan(model, params, torques.shape[1])), states, torques)
        final, _ = run(states, torques)
        counts[name] = int(worlds - finite_worlds(final).sum())
    return counts


def cost(model, rounds: int) -> dict[str, dict[str, float]]:
    """Compile seconds and in-graph µs per step (one world; per world in a vmap of 64)."""
    params = js.SimulationParams.build(model, dt=0.002)
    steps = 50
    single_state = jax.tree.map(lambda x: x[0], drops(model, 1))
    batch_states = drops(model, 64)
    single_torques = jnp.zeros((steps, model.dofs))
    batch_torques = jnp.zeros((64, steps, model.dofs))
    runs, figures = {}, {}
    for name in SOLVERS:
        seconds, single = compiled(name, lambda s, t: scan(model, params, steps)(s, t)[0], single_state, single_torques)
        _, batch = compiled(name, lambda s, t: jax.vmap(scan(model, params, steps))(s, t)[0], batch_states, batch_torques)
        runs[name] = (single, batch)
        figures[name] = {"compile_s": seconds, "single_us": [], "batch_us": []}
        jax.block_until_ready((single(single_state, single_torques), batch(batch_states, batch_torques)))
    for _ in range(rounds):
        for name, (single, batch) in runs.items():
            start = time.perf_counter()
            jax.block_until_ready(single(single_state, single_torques))
            figures[name]["single_us"].append(1e6 * (time.perf_counter() - start) / steps)
            start = time.perf_counter()
            jax.block_until_ready(batch(batch_states, batch_torques))
            figures[name]["batch_us"].append(1e6 * (time.perf_counter() - start) / steps / 64)
    return {name: {key: statistics.median(v) if isinstance(v, list) else v for key, v in f.items()} for name, f in figures.items()}


KICK = {"base_position": [0.0, 0.0, 0.45], "base_velocity": [0.2, 0.0, -1.0, 0.0, 0.0, 0.3], "joint_positions": 0.05}
GRADIENT_STEPS, GRADIENT_DT = 200, 0.002


def kick_torques(dofs: int) -> jax.Array:
    """``(GRADIENT_STEPS, dofs)`` [N m]: 20 N m sines at 4 Hz, one phase per joint."""
    t = GRADIENT_DT * np.arange(GRADIENT_STEPS)[:, None]
    return jnp.asarray(20.0 * np.sin(2 * np.pi * 4.0 * t + np.arange(dofs)[None, :]))


def direction_errors(value, grad, q0, torques, directions: int) -> list[float]:
    """Relative errors of ``grad . u`` against Richardson central differences of ``value``
    (steps 1e-7, 5e-8) along ``directions`` random directions ``u`` of ``(q0, torques)``."""
    rng = np.random.default_rng(0)
    g_q, g_tau = grad(q0, torques)
    found = []
    for _ in range(directions):
        u_q, u_tau = rng.normal(size=q0.shape), rng.normal(size=torques.shape)

        def central(h):
            return (float(value(q0 + h * u_q, torques + h * u_tau)) - float(value(q0 - h * u_q, torques - h * u_tau))) / (2 * h)

        numeric = (4 * central(5e-8) - central(1e-7)) / 3
        analytic = float(np.sum(np.asarray(g_q) * u_q) + np.sum(np.asarray(g_tau) * u_tau))
        found.append(abs(analytic - numeric) / max(abs(analytic), abs(numeric)))
    return found


def gradient_errors(model, directions: int) -> dict[str, list[float]]:
    """Relative errors of ``grad . u`` (torques and initial joint positions) of a kicked-quadruped
    rollout, GRADIENT_STEPS steps of GRADIENT_DT, against central differences."""
    params = js.SimulationParams.build(model, dt=GRADIENT_DT)
    torques = kick_torques(model.dofs)
    q0 = jnp.full(model.dofs, KICK["joint_positions"])

    def loss(q, tau):
        state = js.State.build(model, base_position=KICK["base_position"], base_velocity=KICK["base_velocity"], joint_positions=q)
        final, outputs = scan(model, params, GRADIENT_STEPS)(state, tau)
        trajectory = jnp.mean(outputs.contact_positions[:, :, 2])
        return jnp.sum(jnp.array([0.3, 0.6, 0.9]) * final.base_position) + trajectory + 0.3 * jnp.sum(jnp.sin(final.joint_positions))

    errors = {}
    for name in SOLVERS:
        _, value = compiled(name, loss, q0, torques)
        _, grad = compiled(name, jax.grad(loss, argnums=(0, 1)), q0, torques)
        errors[name] = direction_errors(value, grad, q0, torques, directions)
    return errors


def newton_gradient_errors(directions: int) -> list[float]:
    """The third alternative, a MuJoCo-style soft-constraint problem solved by Newton iterations,
    measured as MJX itself in float64 (:mod:`benchmarks.peers.mjx_peer`: the same URDF, its boxes
    and spheres, Newton with one iteration, which has no while loop to differentiate): the same
    kick, torques and loss (the trajectory term over the heights of the colliding geoms' centres)."""
    import mujoco
    from mujoco import mjx

    from benchmarks.peers import mjx_peer

    host = mjx_peer.load(models.path("quadruped"), GRADIENT_DT)
    names = mjx_peer.joint_names(host)
    joints = np.array([host.jnt_qposadr[host.joint(name).id] for name in names], dtype=int)
    colliders = np.array(mjx_peer.ground_colliders(host)[1], dtype=int)
    data = mujoco.MjData(host)
    data.qpos[:3] = KICK["base_position"]
    data.qvel[:6] = KICK["base_velocity"]
    model = mjx.put_model(host)
    start = mjx.forward(model, mjx.put_data(host, data))  # the step's own dtypes (int64 indices under x64)
    torques = kick_torques(host.nu)
    q0 = jnp.full(len(names), KICK["joint_positions"])

    def loss(q, tau):
        def body(current, u):
            current = mjx_peer.step(model, current, u)
            return current, current.geom_xpos[colliders, 2]

        final, heights = jax.lax.scan(body, start.replace(qpos=start.qpos.at[joints].set(q)), tau)
        return jnp.sum(jnp.array([0.3, 0.6, 0.9]) * final.qpos[:3]) + jnp.mean(heights) + 0.3 * jnp.sum(jnp.sin(final.qpos[joints]))

    value, grad = jax.jit(loss), jax.jit(jax.grad(loss, argnums=(0, 1)))
    return direction_errors(value, grad, q0, torques, directions)


def _code(function) -> list[str]:
    """The non-blank, non-comment source lines of ``function``'s body after its docstring."""
    source = textwrap.dedent(inspect.getsource(function))
    body = ast.parse(source).body[0].body
    start = body[1].lineno if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else body[0].lineno
    lines = source.splitlines()[start - 1 :]
    return [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]


def code_lines() -> dict[str, int]:
    """Lines each solver needs beyond what the step shares (the augmented link inertias and the
    joint armature both take): for the articulated-body pass, its lines that handle them; for the
    dense solve, its whole body."""
    folded = [line for line in _code(aba.articulated_body_accelerations) if any(w in line for w in ("added_inertia", "armature", "bias"))]
    return {"one ABA pass (default)": len(folded), "dense CRBA + Cholesky": len(_code(dense_accelerations))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worlds", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--directions", type=int, default=4)
    parser.add_argument("--quick", action="store_true", help="8 worlds, 3 rounds, 2 directions")
    args = parser.parse_args()
    if args.quick:
        args.worlds, args.rounds, args.directions = 8, 3, 2
    humanoid, quadruped = js.load_model(models.path("humanoid")), js.load_model(models.path("quadruped"))
    result = {"environment": timing.environment()}
    result["agreement"] = {"humanoid": agreement(humanoid), "quadruped": agreement(quadruped)}
    print("largest relative difference of the accelerations, ABA vs dense:", result["agreement"], flush=True)
    result["diverged at 10 ms"] = stability(humanoid, args.worlds, 0.01)
    print(f"humanoid drops diverged at 10 ms (of {args.worlds}):", result["diverged at 10 ms"], flush=True)
    result["cost"] = {"humanoid": cost(humanoid, args.rounds), "quadruped": cost(quadruped, args.rounds)}
    for model_name, rows in result["cost"].items():
        for name, f in rows.items():
            print(f"[{model_name}] {name}: compile {f['compile_s']:.2f} s, in-graph {f['single_us']:.1f} µs/step, "
                  f"{f['batch_us']:.1f} µs per world-step in a vmap of 64", flush=True)
    result["gradient relative errors"] = gradient_errors(quadruped, args.directions)
    result["gradient relative errors"]["MJX Newton, 1 iteration"] = newton_gradient_errors(args.directions)
    print("quadruped rollout gradient, relative errors against central differences:", result["gradient relative errors"], flush=True)
    result["lines"] = code_lines()
    print("lines each solver adds:", result["lines"])
    print("wrote", timing.write_json(timing.RESULTS_DIRECTORY / "implicit_solvers.json", result))


if __name__ == "__main__":
    main()
