"""Cart-pole swing-up by analytic policy gradients: a feedback policy trained by differentiating
the task's return through the simulator.

The task is ``jaxsim_like.tasks.cart_pole_swing_up`` (implicit step of 10 ms, two steps per
action, force up to 10 N, the pole starting down). The policy is a small MLP
``obs (5) -> 32 -> 32 -> force (1)`` with tanh units. Each iteration rolls out a batch of
worlds (``vmap``) for ``horizon`` actions, from the task's starts (pole down) except a quarter
started near the top (so that the gradient also teaches the balancing), each action's step
rematerialised in the backward pass (``jax.checkpoint``), and takes an Adam step on
``-mean(return)`` with the gradient norm clipped and the learning rate decayed to 1 % on a
cosine. The gradient is truncated: it flows back through ``window`` actions at most (the state
at the start of each window is held constant, ``stop_gradient``), so the rollout is long enough
to show the policy holding the pole while no gradient runs through the chaos of a whole
swing-up (with the gradient through all 250 actions of a 5 s rollout the policy swung the pole
up and lost it again). The evaluation runs the policy for 10 s from the nominal start (pole
down, at rest) and from 16 starts drawn by the task, and reports how long the pole stays up
(``cos theta > 0.9``) in the last 2 s (not in ``--quick``, which reports the training returns
only); the run succeeds (exit 0) when, from the nominal start, it is up 90 % of that time.

    python examples/cart_pole_apg.py [--quick] [--plot DIR]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import optax

jax.config.update("jax_enable_x64", True)

try:
    import jaxsim_like  # noqa: F401
except ImportError:  # a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from jaxsim_like import tasks
from jaxsim_like.plots import require_matplotlib

EVALUATION_ACTIONS = 500  # 10 s at 50 Hz
HELD_ACTIONS = 100  # the last 2 s
DRAWN_STARTS = 16  # evaluation starts drawn by the task, besides the nominal one


def settings(quick: bool) -> dict:
    """Worlds per batch (the last ``balancing`` of them started near the top), actions per training
    rollout, actions the gradient flows back through (``window``), Adam iterations, learning
    rate, hidden units."""
    if quick:
        return {"worlds": 8, "balancing": 2, "horizon": 60, "window": 20, "iterations": 25, "learning_rate": 1e-2, "hidden": 16}
    return {"worlds": 32, "balancing": 8, "horizon": 500, "window": 50, "iterations": 300, "learning_rate": 2e-3, "hidden": 32}


def init_policy(key: jax.Array, hidden: int, sizes=(5, 1)) -> list[tuple[jax.Array, jax.Array]]:
    layers = [sizes[0], hidden, hidden, sizes[1]]
    keys = jax.random.split(key, len(layers) - 1)
    return [
        (jax.random.normal(k, (m, n)) / np.sqrt(m) * (0.1 if i == len(layers) - 2 else 1.0), jnp.zeros(n))
        for i, (k, m, n) in enumerate(zip(keys, layers[:-1], layers[1:]))
    ]


def policy(params, obs: jax.Array) -> jax.Array:
    """The action ``(1,)`` in ``(-1, 1)`` at observation ``obs (5,)``."""
    x = obs
    for weights, bias in params[:-1]:
        x = jnp.tanh(x @ weights + bias)
    weights, bias = params[-1]
    return jnp.tanh(x @ weights + bias)


def episode_return(
    task: tasks.Task, params, start: tasks.TaskState, horizon: int, window: jax.Array | int
) -> tuple[jax.Array, jax.Array]:
    """The return of ``horizon`` actions of the policy from ``start`` and the pole's ``cos theta``
    per action; its gradient flows back through ``window`` actions at most (the state every
    ``window`` actions is held constant; ``window >= horizon``: the whole gradient)."""

    def one(state, index):
        state = jax.lax.cond(index % window == 0, jax.lax.stop_gradient, lambda s: s, state)
        state = jax.checkpoint(task.step)(state, policy(params, state.obs))
        return state, (state.reward, state.obs[1])

    _, (rewards, cosines) = jax.lax.scan(one, start, jnp.arange(horizon))
    return jnp.sum(rewards), cosines


def started_at(task: tasks.Task, start: tasks.TaskState, positions: jax.Array, velocities: jax.Array) -> tasks.TaskState:
    """``start`` moved to joint ``positions`` and ``velocities`` ``(2,)`` (cart, pole), observed there."""
    world = task.episode_world(start.sample)
    state = world.initial_state((start.world.states[0].replace(joint_positions=positions, joint_velocities=velocities),))
    return start._replace(world=state, obs=task.functions.observe(task, world, state))


def near_the_top(task: tasks.Task, key: jax.Array) -> tasks.TaskState:
    """A task start with the pole within 0.3 rad of upright, turning at up to 1 rad/s, and the
    cart within 0.5 m of the centre, moving at up to 0.5 m/s."""
    x, theta, x_dot, theta_dot = jax.random.uniform(jax.random.fold_in(key, 1), (4,), minval=-1.0, maxval=1.0)
    return started_at(task, task.reset(key), jnp.stack([0.5 * x, 0.3 * theta]), jnp.stack([0.5 * x_dot, theta_dot]))


def training_starts(task: tasks.Task, keys: jax.Array, balancing: int) -> tasks.TaskState:
    """The starts of a training batch drawn from ``keys (W, 2)``: the task's (pole down), except
    the last ``balancing``, which start near the top."""
    starts = jax.vmap(task.reset)(keys[: len(keys) - balancing])
    tops = jax.vmap(lambda key: near_the_top(task, key))(keys[len(keys) - balancing :])
    return jax.tree.map(lambda a, b: jnp.concatenate([a, b]), starts, tops)


def loss(params, keys: jax.Array, task: tasks.Task, window: jax.Array, horizon: int, balancing: int) -> jax.Array:
    """``-mean return`` of ``horizon`` actions over the :func:`training_starts` of ``keys``, the
    gradient truncated to ``window`` actions (traced: changing it does not recompile)."""
    starts = training_starts(task, keys, balancing)
    returns, _ = jax.vmap(lambda s: episode_return(task, params, s, horizon, window))(starts)
    return -jnp.mean(returns)


value_and_grad = jax.jit(jax.value_and_grad(loss), static_argnames=("horizon", "balancing"))
"""``(loss, d loss / d params)``, jitted once per task structure and horizon (the task is an argument)."""


def evaluate(task: tasks.Task, params) -> dict:
    """The policy for ``EVALUATION_ACTIONS`` from the nominal start (pole down, at rest) and from
    ``DRAWN_STARTS`` of the task's starts: the nominal return, ``cos theta`` per action, and the
    share of the last ``HELD_ACTIONS`` with the pole up, nominal and per drawn start."""
    nominal = started_at(task, task.reset(jax.random.PRNGKey(0)), jnp.array([0.0, jnp.pi]), jnp.zeros(2))
    drawn = jax.vmap(task.reset)(jax.random.split(jax.random.PRNGKey(3), DRAWN_STARTS))
    starts = jax.tree.map(lambda a, b: jnp.concatenate([a[None], b]), nominal, drawn)
    run = jax.vmap(lambda start: episode_return(task, params, start, EVALUATION_ACTIONS, EVALUATION_ACTIONS))
    values, cosines = jax.jit(run)(starts)
    held = np.mean(np.asarray(cosines)[:, -HELD_ACTIONS:] > 0.9, axis=1)
    return {"return": float(values[0]), "upright_held": float(held[0]), "drawn_held": held[1:], "cosines": np.asarray(cosines[0])}


def run(quick: bool = False, plot: str | None = None, verbose: bool = True) -> dict:
    """Train; returns the figures reached (and writes the plots to the folder ``plot``)."""
    if plot is not None:
        require_matplotlib()  # now, not after the run
    config = settings(quick)
    task = tasks.cart_pole_swing_up(horizon=0, auto_reset=False)
    schedule = optax.cosine_decay_schedule(config["learning_rate"], config["iterations"], alpha=0.01)
    optimizer = optax.chain(optax.clip_by_global_norm(1.0), optax.adam(schedule))
    params = init_policy(jax.random.PRNGKey(1), config["hidden"])
    opt_state = optimizer.init(params)

    @jax.jit
    def apply(params, opt_state, grads):
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state

    def update(params, opt_state, keys):
        value, grads = value_and_grad(params, keys, task, config["window"], horizon=config["horizon"], balancing=config["balancing"])
        return *apply(params, opt_state, grads), value

    began = time.perf_counter()
    history = []
    key = jax.random.PRNGKey(2)
    for iteration in range(config["iterations"]):
        key, sub = jax.random.split(key)
        params, opt_state, value = update(params, opt_state, jax.random.split(sub, config["worlds"]))
        history.append((time.perf_counter() - began, -float(value)))
        if verbose and iteration % 20 == 0:
            print(f"iteration {iteration:4d}  {history[-1][0]:7.1f} s  mean return {history[-1][1]:8.2f}", flush=True)
    seconds = time.perf_counter() - began
    figures = {
        "initial_return": history[0][1],
        "final_return": history[-1][1],
        "training_horizon": config["horizon"],
        "gradient_window": config["window"],
        "iterations": config["iterations"],
        "seconds": seconds,
    }
    evaluation = None if quick else evaluate(task, params)  # quick: the training returns only
    if evaluation is not None:
        figures["evaluation_return"] = evaluation["return"]
        figures["evaluation_upright_last_2s"] = evaluation["upright_held"]
        figures["drawn_starts_held_90_percent"] = int(np.sum(evaluation["drawn_held"] > 0.9))
        figures["drawn_starts_upright_last_2s_mean"] = float(np.mean(evaluation["drawn_held"]))
    if plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        folder = Path(plot)
        folder.mkdir(parents=True, exist_ok=True)
        fig, axes = plt.subplots(1, 1 if evaluation is None else 2, figsize=(5 if evaluation is None else 10, 4), squeeze=False)
        left, right = axes[0, 0], axes[0, -1]
        times, returns = np.array(history).T
        left.plot(times, returns)
        left.set(xlabel="wall time [s]", ylabel=f"mean return ({config['horizon']} actions)", title="cart-pole APG training")
        if evaluation is not None:
            right.plot(np.arange(EVALUATION_ACTIONS) * float(task.control_dt), evaluation["cosines"])
            right.set(xlabel="time [s]", ylabel="cos(pole angle)", title="trained policy from rest, pole down")
        fig.tight_layout()
        fig.savefig(folder / "cart_pole_apg.png", dpi=100)
        plt.close(fig)
        figures["plots"] = str(folder)
    if verbose:
        for name, value in figures.items():
            print(f"{name:32s} {value:.6g}" if isinstance(value, float) else f"{name:32s} {value}")
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few iterations on short rollouts (seconds)")
    parser.add_argument("--plot", metavar="DIR", help="save the return against wall time as a PNG in DIR (needs matplotlib)")
    args = parser.parse_args(argv)
    figures = run(quick=args.quick, plot=args.plot)
    if args.quick:
        return 0 if figures["final_return"] > figures["initial_return"] + 5 else 1
    return 0 if figures["evaluation_upright_last_2s"] > 0.9 else 1


if __name__ == "__main__":
    sys.exit(main())
