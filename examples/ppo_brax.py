"""Brax's own PPO (``brax.training.agents.ppo``) on the cart-pole swing-up (``--task quadruped``
for the walking task), through the Brax-style adapter (``jaxsim_like.tasks.brax_style.for_brax``):
the task without its own horizon and reset, which Brax's training wrappers add
(``episode_length``, automatic reset).

Needs the ``brax`` extra (``pip install -e ".[brax]"``). brax 0.14.2, the newest on PyPI, calls
``jax.device_put_replicated``, which JAX 0.10 removed; :func:`restore_device_put_replicated`
puts back a function with its documented meaning (the value stacked once per device, each copy
on its device) before Brax is imported. Brax evaluates the policy ``num_evals`` times on
``num_eval_envs`` fresh episodes of at most 250 actions (5 s); the mean evaluation return is
plotted against wall time, and the task's metrics are reported per action of the last
evaluation (Brax sums them over each episode). The run succeeds (exit 0) when the last
evaluation beats the first one by ``RETURN_GAIN``.

    python examples/ppo_brax.py [--quick] [--task cart_pole|quadruped] [--plot DIR]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

try:
    import jaxsim_like  # noqa: F401
except ImportError:  # a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from jaxsim_like import tasks
from jaxsim_like.plots import require_matplotlib
from jaxsim_like.tasks.brax_style import for_brax

EPISODE_ACTIONS = 250
RETURN_GAIN = 5.0


def restore_device_put_replicated() -> None:
    """Give JAX a ``device_put_replicated(x, devices)`` again if it has none: every leaf of ``x``
    stacked ``len(devices)`` times along a new leading axis, sharded one copy per device."""
    if hasattr(jax, "device_put_replicated"):
        return

    def device_put_replicated(x, devices):
        mesh = jax.sharding.Mesh(np.asarray(devices), ("devices",))
        sharding = jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("devices"))
        return jax.tree.map(lambda leaf: jax.device_put(jnp.stack([jnp.asarray(leaf)] * len(devices)), sharding), x)

    jax.device_put_replicated = device_put_replicated


def settings(quick: bool, task: str = "cart_pole") -> dict:
    """Brax PPO's arguments (``num_timesteps`` env steps in all)."""
    common = {"episode_length": EPISODE_ACTIONS, "learning_rate": 3e-4, "entropy_cost": 1e-3, "discounting": 0.99,
              "unroll_length": 32, "num_minibatches": 4, "num_updates_per_batch": 4, "normalize_observations": True,
              "reward_scaling": 1.0, "seed": 0}
    if quick:
        return common | {"num_timesteps": 16_000, "num_envs": 32, "num_eval_envs": 8, "batch_size": 32, "unroll_length": 16, "num_evals": 2}
    full = common | {"num_timesteps": 2_000_000, "num_envs": 256, "num_eval_envs": 64, "batch_size": 256, "num_evals": 11}
    return full | ({"num_timesteps": 2_500_000, "num_evals": 6} if task == "quadruped" else {})


TASKS = {"cart_pole": tasks.cart_pole_swing_up, "quadruped": tasks.quadruped_walk}


def run(task_name: str = "cart_pole", quick: bool = False, plot: str | None = None, verbose: bool = True) -> dict:
    """Train; returns the figures reached (and writes the plot to the folder ``plot``)."""
    if plot is not None:
        require_matplotlib()  # now, not after the run
    restore_device_put_replicated()
    from brax.training.agents.ppo import train as ppo

    config = settings(quick, task_name)
    task = TASKS[task_name]()
    env = for_brax(task)
    history, last = [], {}
    began = time.perf_counter()

    def progress(env_steps: int, metrics: dict) -> None:
        history.append((time.perf_counter() - began, env_steps, float(metrics["eval/episode_reward"])))
        last.update(metrics)
        if verbose:
            print(f"{history[-1][0]:7.1f} s  {env_steps:9d} env steps  evaluation return {history[-1][2]:8.2f}", flush=True)

    ppo.train(environment=env, progress_fn=progress, **config)
    seconds = time.perf_counter() - began
    length = float(last["eval/avg_episode_length"])
    figures = {
        "task": task.name,
        "first_evaluation_return": history[0][2],
        "final_evaluation_return": history[-1][2],
        "best_evaluation_return": max(h[2] for h in history),
        "episode_actions": EPISODE_ACTIONS,
        "final_evaluation_episode_actions": length,
        "env_steps": history[-1][1],
        "seconds": seconds,
    }
    names = jax.eval_shape(task.reset, jax.random.PRNGKey(0)).metrics
    figures.update({f"final_mean_{name}": float(last[f"eval/episode_{name}"]) / length for name in names})
    if plot:
        from jaxsim_like.plots import plot_returns

        folder = Path(plot)
        folder.mkdir(parents=True, exist_ok=True)
        wall_times, returns = [h[0] for h in history], [h[2] for h in history]
        plot_returns(
            wall_times, returns, folder / f"ppo_brax_{task_name}.png",
            ylabel=f"mean evaluation return ({EPISODE_ACTIONS} actions)",
            title=f"Brax PPO on {task.name}",
        )
        figures["plots"] = str(folder)
    if verbose:
        for name, value in figures.items():
            print(f"{name:34s} {value:.6g}" if isinstance(value, float) else f"{name:34s} {value}")
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a short run (seconds)")
    parser.add_argument("--task", choices=tuple(TASKS), default="cart_pole")
    parser.add_argument("--plot", metavar="DIR", help="save the return against wall time as a PNG in DIR (needs matplotlib)")
    args = parser.parse_args(argv)
    figures = run(args.task, quick=args.quick, plot=args.plot)
    return 0 if figures["final_evaluation_return"] > figures["first_evaluation_return"] + RETURN_GAIN else 1


if __name__ == "__main__":
    sys.exit(main())
