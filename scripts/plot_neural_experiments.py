#!/usr/bin/python3
"""Plots the loss curves of the neural-controller experiments (docs/EXPERIMENTS-neural.md).

Reads the CSV files that `diffphys experiment arm-reach` and `arm-reach-random` write under
their --out directory and writes PNGs into docs/img/:

    scripts/plot_neural_experiments.py [OUT_DIR] [IMG_DIR]     # defaults: out, docs/img
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read(path):
    with open(path, newline="") as stream:
        rows = list(csv.DictReader(stream))
    return {key: [float(row[key]) for row in rows] for key in rows[0]} if rows else {}


def plot(path, x_key, title, thresholds, image):
    data = read(path)
    figure, axis = plt.subplots(figsize=(6.4, 4.0))
    axis.semilogy(data[x_key], data["average_distance_m"], label="distance averaged over the episode")
    axis.semilogy(data[x_key], data["final_distance_m"], label="distance at the end of the episode")
    for value, label in thresholds:
        axis.axhline(value, color="gray", linestyle=":", linewidth=1)
        axis.text(data[x_key][-1], value, label, ha="right", va="bottom", fontsize=8, color="gray")
    axis.set_xlabel(x_key.replace("_", " "))
    axis.set_ylabel("distance to target (m)")
    axis.set_title(title)
    axis.legend()
    figure.tight_layout()
    figure.savefig(image, dpi=110)
    print(f"wrote {image}")


def main():
    out_dir = sys.argv[1] if len(sys.argv) > 1 else "out"
    image_dir = sys.argv[2] if len(sys.argv) > 2 else os.path.join("docs", "img")
    os.makedirs(image_dir, exist_ok=True)
    reach = os.path.join(out_dir, "arm-reach_loss.csv")
    if os.path.exists(reach):
        plot(reach, "evaluation", "arm-reach (Degrave et al. 2019 §3.2.1)", [(0.04, "4 cm"), (0.01, "1 cm")],
             os.path.join(image_dir, "arm-reach.png"))
    random_reach = os.path.join(out_dir, "arm-reach-random_loss.csv")
    if os.path.exists(random_reach):
        plot(random_reach, "update", "arm-reach-random (Degrave et al. 2019 §3.2.2)", [(0.10, "10 cm"), (0.05, "5 cm")],
             os.path.join(image_dir, "arm-reach-random.png"))


if __name__ == "__main__":
    main()
