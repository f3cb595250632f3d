#!/usr/bin/python3
"""Plots the learning curve of `diffphys experiment quadruped` (docs/EXPERIMENTS-quadruped.md).

Reads quadruped_loss.csv under the experiment's --out directory (and, when present, the final
JSON line saved as quadruped.json there, for the hand-tuned trot's velocity) and writes
docs/img/quadruped.png:

    scripts/plot_quadruped.py [OUT_DIR] [IMAGE]     # defaults: out, docs/img/quadruped.png
"""
import csv
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read(path):
    with open(path, newline="") as stream:
        rows = list(csv.DictReader(stream))
    if not rows:
        sys.exit(f"{path}: no rows")
    return {key: [float(row[key]) for row in rows] for key in rows[0]}


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "out"
    image = sys.argv[2] if len(sys.argv) > 2 else os.path.join("docs", "img", "quadruped.png")
    data = read(os.path.join(out_dir, "quadruped_loss.csv"))
    figures = {}
    summary = os.path.join(out_dir, "quadruped.json")
    if os.path.exists(summary):
        with open(summary) as stream:
            figures = json.loads(stream.read().strip().splitlines()[-1])

    evaluations, velocity = data["evaluation"], data["average_forward_velocity_m_s"]
    best, running = [], float("-inf")
    for v in velocity:
        running = max(running, v)
        best.append(running)
    figure, (axis, zoom) = plt.subplots(1, 2, figsize=(11.0, 4.2))
    axis.plot(evaluations, velocity, linewidth=0.8, label="learned policy, each evaluation")
    axis.plot(evaluations, best, linewidth=1.5, label="best so far")
    lines = [(1.17, "paper: learned, 500 evaluations", "tab:red", "--"),
             (0.7, "paper: hand-tuned trot (their model)", "tab:red", ":")]
    if "trot_average_forward_velocity_m_s" in figures:
        lines.append((figures["trot_average_forward_velocity_m_s"], "ours: hand-tuned trot (our model)", "gray", ":"))
    for value, label, color, style in lines:
        axis.axhline(value, color=color, linestyle=style, linewidth=1)
        axis.text(evaluations[0], value, label, ha="left", va="bottom", fontsize=8, color=color)
    axis.set_xlabel("evaluation (one 10 s episode + gradient + Adam update)")
    axis.set_ylabel("torso's average forward velocity (m/s)")
    axis.set_title("quadruped (Degrave et al. 2019 §3.3)")
    axis.legend(loc="center right", fontsize=8)

    # The learned curve at its own scale, with the torso's lowest height: the crouch onto the
    # joint stops shows as the drop from 0.18 m.
    zoom.plot(evaluations, velocity, linewidth=0.8, label="learned policy, average forward velocity")
    zoom.set_xlabel("evaluation")
    zoom.set_ylabel("average forward velocity (m/s)")
    zoom.set_title("learned policy, zoomed")
    height = zoom.twinx()
    height.plot(evaluations, data["lowest_torso_height_m"], color="tab:green", linewidth=0.8,
                label="torso's lowest height in the episode")
    height.set_ylabel("torso's lowest height (m)", color="tab:green")
    handles = zoom.get_legend_handles_labels()[0] + height.get_legend_handles_labels()[0]
    zoom.legend(handles, [h.get_label() for h in handles], loc="center right", fontsize=8)
    figure.tight_layout()
    os.makedirs(os.path.dirname(image) or ".", exist_ok=True)
    figure.savefig(image, dpi=110)
    print(f"wrote {image}")


if __name__ == "__main__":
    main()
