"""PPO through the Brax-style adapter (``reset(rng)`` / ``step(state, action)``), on the
cart-pole swing-up (``--task quadruped`` for the walking task).

Brax's own PPO takes this environment as it is (``examples/ppo_brax.py``, behind the ``brax``
extra); this example carries a compact PPO in JAX, with no import beyond the project's, that
also runs the quadruped and uses the task's own automatic reset: a Gaussian MLP policy and an MLP value, running observation normalisation, ``num_envs`` worlds unrolled
``unroll`` actions in one ``lax.scan`` (the task resets finished worlds itself), GAE, clipped
surrogate, a few epochs of minibatch Adam, all jitted. The mean return of the training episodes
that finished in each ``eval_every`` iterations is plotted against wall time.

    python examples/ppo_brax_style.py [--quick] [--task cart_pole|quadruped] [--plot DIR]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import optax

try:
    import jaxsim_like  # noqa: F401
except ImportError:  # a checkout without `pip install -e .`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from jaxsim_like import tasks
from jaxsim_like.plots import require_matplotlib
from jaxsim_like.tasks.brax_style import BraxStyleEnv, EnvState


def settings(task: str, quick: bool) -> dict:
    if task == "cart_pole":
        if quick:
            return {"num_envs": 64, "unroll": 16, "iterations": 30, "eval_every": 5, "learning_rate": 1e-3, "horizon": 100}
        return {"num_envs": 256, "unroll": 32, "iterations": 500, "eval_every": 10, "learning_rate": 3e-4, "horizon": 250}
    if quick:
        return {"num_envs": 32, "unroll": 8, "iterations": 10, "eval_every": 5, "learning_rate": 1e-3, "horizon": 50}
    return {"num_envs": 256, "unroll": 32, "iterations": 300, "eval_every": 20, "learning_rate": 3e-4, "horizon": 250}


def make_task(name: str, horizon: int) -> tasks.Task:
    if name == "cart_pole":
        return tasks.cart_pole_swing_up(horizon=horizon)
    return tasks.quadruped_walk(horizon=horizon)


def mlp_init(key, sizes, last_scale=1.0):
    keys = jax.random.split(key, len(sizes) - 1)
    layers = [(jax.random.normal(k, (m, n)) * np.sqrt(2.0 / m), jnp.zeros(n)) for k, m, n in zip(keys, sizes[:-1], sizes[1:])]
    w, b = layers[-1]
    layers[-1] = (w * last_scale, b)
    return layers


def mlp(layers, x):
    for w, b in layers[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = layers[-1]
    return x @ w + b


class Normaliser(NamedTuple):
    mean: jax.Array
    var: jax.Array
    count: jax.Array

    def __call__(self, obs):
        return jnp.clip((obs - self.mean) / jnp.sqrt(self.var + 1e-8), -10.0, 10.0)

    def update(self, batch):
        batch = batch.reshape(-1, batch.shape[-1])
        n = batch.shape[0]
        mean, var = batch.mean(0), batch.var(0)
        total = self.count + n
        delta = mean - self.mean
        new_mean = self.mean + delta * n / total
        new_var = (self.var * self.count + var * n + delta**2 * self.count * n / total) / total
        return Normaliser(new_mean, new_var, total)


class Params(NamedTuple):
    policy: list
    log_std: jax.Array
    value: list


def log_prob(mean, log_std, action):
    return jnp.sum(-0.5 * ((action - mean) / jnp.exp(log_std)) ** 2 - log_std - 0.5 * jnp.log(2 * jnp.pi), axis=-1)


def run(task_name: str = "cart_pole", quick: bool = False, plot: str | None = None, verbose: bool = True, seed: int = 0) -> dict:
    if plot is not None:
        require_matplotlib()  # now, not after the run
    config = settings(task_name, quick)
    task = make_task(task_name, config["horizon"])
    env = BraxStyleEnv(task)
    O, A, E, T = env.observation_size, env.action_size, config["num_envs"], config["unroll"]
    gamma, lam, clip, epochs, minibatches = 0.99, 0.95, 0.2, 4, 4
    key = jax.random.PRNGKey(seed)
    k_pi, k_v, k_env, key = jax.random.split(key, 4)
    params = Params(mlp_init(k_pi, [O, 64, 64, A], 0.01), jnp.full(A, -0.5, dtype=float), mlp_init(k_v, [O, 64, 64, 1]))
    optimizer = optax.chain(optax.clip_by_global_norm(0.5), optax.adam(config["learning_rate"]))
    opt_state = optimizer.init(params)
    normaliser = Normaliser(jnp.zeros(O), jnp.ones(O), jnp.asarray(1e-4))
    reset, step = jax.vmap(env.reset), jax.vmap(env.step)
    states = jax.jit(reset)(jax.random.split(k_env, E))

    def unroll(params, normaliser, states: EnvState, running, key):
        def one(carry, k):
            s, running, finished, count = carry
            obs = normaliser(s.obs)
            mean = mlp(params.policy, obs)
            action = mean + jnp.exp(params.log_std) * jax.random.normal(k, mean.shape)
            following = step(s, action)
            value = mlp(params.value, obs)[:, 0]
            running = running + following.reward
            finished = finished + jnp.sum(following.done * running)
            count = count + jnp.sum(following.done)
            running = running * (1 - following.done)
            record = (s.obs, action, log_prob(mean, params.log_std, action), value, following.reward, following.done)
            return (following, running, finished, count), record

        zero = jnp.zeros(())
        (states, running, finished, count), records = jax.lax.scan(one, (states, running, zero, zero), jax.random.split(key, T))
        return states, running, finished, count, records

    def loss(params, normaliser, batch):
        obs, action, old_logp, advantage, target = batch
        x = normaliser(obs)
        logp = log_prob(mlp(params.policy, x), params.log_std, action)
        ratio = jnp.exp(logp - old_logp)
        advantage = (advantage - advantage.mean()) / (advantage.std() + 1e-8)
        surrogate = jnp.minimum(ratio * advantage, jnp.clip(ratio, 1 - clip, 1 + clip) * advantage)
        value = mlp(params.value, x)[:, 0]
        return -surrogate.mean() + 0.5 * jnp.mean((value - target) ** 2)

    @jax.jit
    def iteration(params, opt_state, normaliser, states, running, key):
        k_roll, k_perm = jax.random.split(key)
        states, running, finished, count, records = unroll(params, normaliser, states, running, k_roll)
        obs, actions, logp, values, rewards, dones = records
        last_value = mlp(params.value, normaliser(states.obs))[:, 0]
        # GAE backwards over the unroll; a finished world's next value is not bootstrapped.
        def backwards(carry, x):
            advantage, next_value = carry
            value, reward, done = x
            delta = reward + gamma * next_value * (1 - done) - value
            advantage = delta + gamma * lam * (1 - done) * advantage
            return (advantage, value), advantage

        _, advantages = jax.lax.scan(backwards, (jnp.zeros(E), last_value), (values, rewards, dones), reverse=True)
        targets = advantages + values
        normaliser = normaliser.update(obs)
        flat = jax.tree.map(lambda x: x.reshape((T * E,) + x.shape[2:]), (obs, actions, logp, advantages, targets))

        def epoch(carry, k):
            params, opt_state = carry
            order = jax.random.permutation(k, T * E).reshape(minibatches, -1)

            def minibatch(carry, indices):
                params, opt_state = carry
                grads = jax.grad(loss)(params, normaliser, jax.tree.map(lambda x: x[indices], flat))
                updates, opt_state = optimizer.update(grads, opt_state, params)
                return (optax.apply_updates(params, updates), opt_state), None

            return jax.lax.scan(minibatch, (params, opt_state), order)[0], None

        (params, opt_state), _ = jax.lax.scan(epoch, (params, opt_state), jax.random.split(k_perm, epochs))
        metrics = jax.tree.map(jnp.mean, states.metrics)
        return params, opt_state, normaliser, states, running, finished, count, metrics

    began = time.perf_counter()
    history, env_steps, running = [], 0, jnp.zeros(E)
    finished, count = 0.0, 0.0
    for i in range(config["iterations"]):
        key, k_it = jax.random.split(key)
        params, opt_state, normaliser, states, running, f, c, metrics = iteration(params, opt_state, normaliser, states, running, k_it)
        env_steps += T * E
        finished, count = finished + float(f), count + float(c)
        if (i + 1) % config["eval_every"] == 0 and count:
            history.append((time.perf_counter() - began, env_steps, finished / count, {k: float(v) for k, v in metrics.items()}))
            finished, count = 0.0, 0.0
            if verbose:
                print(f"iteration {i + 1:4d}  {history[-1][0]:7.1f} s  {env_steps:9d} steps  episode return {history[-1][2]:8.2f}", flush=True)
    seconds = time.perf_counter() - began
    figures = {
        "task": task.name,
        "first_episode_return": history[0][2],
        "final_episode_return": history[-1][2],
        "best_episode_return": max(h[2] for h in history),
        "episode_actions": task.horizon,
        "env_steps": env_steps,
        "seconds": seconds,
        "env_steps_per_second": env_steps / seconds,
    }
    figures.update({f"final_mean_{name}": value for name, value in history[-1][3].items()})
    if plot:
        from jaxsim_like.plots import plot_returns

        folder = Path(plot)
        folder.mkdir(parents=True, exist_ok=True)
        wall_times, returns = [h[0] for h in history], [h[2] for h in history]
        plot_returns(
            wall_times, returns, folder / f"ppo_{task_name}.png",
            ylabel=f"mean training episode return ({task.horizon} actions)",
            title=f"PPO on {task.name}",
        )
        figures["plots"] = str(folder)
    if verbose:
        for name, value in figures.items():
            print(f"{name:32s} {value:.6g}" if isinstance(value, float) else f"{name:32s} {value}")
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few iterations (seconds)")
    parser.add_argument("--task", choices=("cart_pole", "quadruped"), default="cart_pole")
    parser.add_argument("--plot", metavar="DIR", help="save the return against wall time as a PNG in DIR (needs matplotlib)")
    args = parser.parse_args(argv)
    figures = run(args.task, quick=args.quick, plot=args.plot)
    return 0 if figures["final_episode_return"] > figures["first_episode_return"] else 1


if __name__ == "__main__":
    sys.exit(main())
