"""Figures of recorded rollouts, optimisations and training runs (needs matplotlib: ``pip install jaxsim_like[plot]``)."""

from __future__ import annotations

import importlib.util
import os
from typing import Sequence

import numpy as np

from .recording import Recording


MISSING = "plots need matplotlib: pip install 'jaxsim_like[plot]'"


def require_matplotlib() -> None:
    """ImportError when matplotlib is not installed: call it before the work whose results a plot shows."""
    if importlib.util.find_spec("matplotlib") is None:
        raise ImportError(MISSING)


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as error:
        raise ImportError(MISSING) from error
    return plt


JOINTS_PER_PANEL = 8
GROUPS_PER_PAGE = 5


def _pages(path: str | os.PathLike, count: int) -> list[str]:
    """``path`` for one page; ``stem-1.ext``, ``stem-2.ext``, ... for several."""
    if count == 1:
        return [os.fspath(path)]
    stem, extension = os.path.splitext(os.fspath(path))
    return [f"{stem}-{page}{extension}" for page in range(1, count + 1)]


def plot_recording(
    recording: Recording,
    path: str | os.PathLike,
    *,
    world: int = 0,
    joints_per_panel: int = JOINTS_PER_PANEL,
    groups_per_page: int = GROUPS_PER_PAGE,
) -> list[str]:
    """Save figures of a recording: base height and total contact force, then every joint's
    position and applied torque in groups of ``joints_per_panel``, ``groups_per_page`` groups a
    page; returns the files written (``path``, or ``stem-1.png``, ``stem-2.png``, ... when the
    joints need several pages). Panels whose fields were not recorded (or a model without
    collidable points or joints) are left out. For a batched recording, ``world`` selects the world.
    """
    plt = _pyplot()

    def pick(array: np.ndarray | None, sample_axes: int) -> np.ndarray | None:
        if array is None:
            return None
        return array[world] if array.ndim > sample_axes + 1 else array

    t = recording.time
    q, tau = pick(recording.joint_positions, 1), pick(recording.joint_torques, 1)
    base = pick(recording.base_position, 1)
    forces = pick(recording.contact_forces, 2)
    overview = []
    if base is not None:
        overview.append(("base height [m]", "base height", [(base[:, 2], None)]))
    if forces is not None and forces.shape[1]:
        total = forces.sum(axis=1)
        overview.append(("total contact force [N]", "total contact force (world axes)", [(total[:, k], f"f_{a}") for k, a in enumerate("xyz")]))
    names = recording.joint_names
    n = len(names)
    if q is not None and q.shape[-1] != n:
        raise ValueError(f"the recording's {q.shape[-1]} joint positions hold ball-joint quaternions ({n} joints): plotting them is not supported yet")
    groups = [range(start, min(start + joints_per_panel, n)) for start in range(0, n, joints_per_panel)] if (q is not None or tau is not None) else []
    pages = [groups[i : i + groups_per_page] for i in range(0, len(groups), groups_per_page)] or [[]]
    every = recording.metadata.get("every", 1)
    title = f"{recording.metadata.get('model', '')}: world {world}, {t.size} samples, every {every} step(s)"
    files = _pages(path, len(pages))
    for number, (page, file) in enumerate(zip(pages, files), start=1):
        rows = [overview] if number == 1 and overview else []
        for group in page:
            label = f"joints {group.start + 1}-{group.stop} of {n}"
            row = []
            if q is not None:
                row.append(("position [rad, m]", f"joint positions, {label}", [(q[:, k], names[k]) for k in group]))
            if tau is not None:
                row.append(("applied torque [N m, N]", f"joint torques, {label}", [(tau[:, k], names[k]) for k in group]))
            rows.append(row)
        if not rows:
            raise ValueError("the recording holds nothing to plot (no base, contact or joint fields)")
        columns = max(len(row) for row in rows)
        figure, axes = plt.subplots(len(rows), columns, figsize=(7 * columns, 3.2 * len(rows)), sharex=True, squeeze=False)
        for r, row in enumerate(rows):
            for c in range(columns):
                axis = axes[r, c]
                if c >= len(row):
                    axis.set_visible(False)
                    continue
                ylabel, panel_title, curves = row[c]
                for values, name in curves:
                    axis.plot(t, values, label=name, linewidth=1)
                axis.set_ylabel(ylabel)
                axis.set_title(panel_title, fontsize=9)
                if any(name for _, name in curves):
                    axis.legend(fontsize=6, ncol=2, loc="best")
        for axis in axes[-1]:
            axis.set_xlabel("time [s]")
        page_note = f" (page {number} of {len(pages)})" if len(pages) > 1 else ""
        figure.suptitle(title + page_note)
        figure.tight_layout()
        figure.savefig(file, dpi=100)
        plt.close(figure)
    return files


def plot_losses(losses: Sequence[float], path: str | os.PathLike, *, title: str = "optimisation") -> None:
    """Save a figure of a loss curve (log scale when positive)."""
    plt = _pyplot()
    values = np.asarray(losses, dtype=float)
    figure, axis = plt.subplots(figsize=(6, 4))
    axis.plot(np.arange(values.size), values)
    if np.all(values > 0):
        axis.set_yscale("log")
    axis.set_xlabel("iteration")
    axis.set_ylabel("loss")
    axis.set_title(title)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


def plot_returns(
    seconds: Sequence[float], returns: Sequence[float], path: str | os.PathLike, *, ylabel: str = "mean return", title: str = "training"
) -> None:
    """Save a figure of a training run's return against wall time ``seconds`` [s] (one marker per evaluation)."""
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(6, 4))
    axis.plot(np.asarray(seconds, dtype=float), np.asarray(returns, dtype=float), marker="o")
    axis.set(xlabel="wall time [s]", ylabel=ylabel, title=title)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
