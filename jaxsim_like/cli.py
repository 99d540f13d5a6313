"""The ``jaxsim-like`` command line."""

from __future__ import annotations

import argparse
import os
import sys

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


def info(source: str) -> str:
    """A text summary of a model: tree, DoFs, masses, frames and contact points."""
    from .loading import load_model

    model = load_model(_model_source(source))
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


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``jaxsim-like`` console script."""
    parser = argparse.ArgumentParser(prog="jaxsim-like", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    info_parser = commands.add_parser("info", help="print a model's tree, DoFs, masses, frames and contact points")
    info_parser.add_argument("model", help="a shipped model name (pendulum, cart_pole, quadruped, humanoid) or a URDF/SDF path")
    args = parser.parse_args(argv)
    from .parsers.errors import ModelLoadError

    try:
        if args.command == "info":
            print(info(args.model))
    except (ModelLoadError, ValueError) as error:
        print(f"jaxsim-like: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
