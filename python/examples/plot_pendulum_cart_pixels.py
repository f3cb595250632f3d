#!/usr/bin/env python3
"""Plots a pendulum_cart_pixels_policy.py run: its log.json (written by --out DIR) → one PNG of
the episode losses (each episode and a running mean of 50), the evaluation loss against
episodes, and the final evaluation's tip height above the hinge over time.

    /usr/bin/python3 python/examples/plot_pendulum_cart_pixels.py DIR OUT.png
"""

import argparse
import json
import pathlib

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=pathlib.Path, help="the --out directory of a run (holding log.json)")
    parser.add_argument("png", type=pathlib.Path)
    options = parser.parse_args(argv)
    if not (options.run / "log.json").is_file():
        parser.error(f"no log.json in {options.run}")
    log = json.loads((options.run / "log.json").read_text())
    losses = log["episode_loss"]
    window = 50
    running = [sum(losses[max(0, k - window + 1):k + 1]) / len(losses[max(0, k - window + 1):k + 1])
               for k in range(len(losses))]
    period = float(log["options"]["every"]) * 0.01  # the scene's dt is 0.01 s

    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 3.6))
    episodes = range(1, len(losses) + 1)
    left.plot(episodes, losses, ".", markersize=1.5, color="0.7", label="episode (random start)")
    left.plot(episodes, running, color="C0", label=f"mean of {window}")
    evaluation = log["evaluation"]
    left.plot([e[0] for e in evaluation], [e[2] for e in evaluation], color="C3", label="evaluation (fixed start)")
    left.axhline(1.06, color="k", linewidth=0.5, linestyle=":")
    left.set_xlabel("episode (3 s)")
    left.set_ylabel("loss (m)")
    left.set_ylim(0, min(3.0, max(losses) * 1.05))
    left.set_title(f"{log['episodes']} episodes, {log['seconds'] / 60:.0f} min")
    left.legend(fontsize=8)
    heights = log.get("tip_heights", [])
    right.plot([k * period for k in range(len(heights))], heights, color="C2")
    right.axhline(0.53, color="k", linewidth=0.5, linestyle=":")
    right.axhline(-0.53, color="k", linewidth=0.5, linestyle=":")
    right.set_xlabel("time (s)")
    right.set_ylabel("tip height above the hinge (m)")
    right.set_title("learned policy from the evaluation start")
    figure.tight_layout()
    figure.savefig(options.png, dpi=100)


if __name__ == "__main__":
    main()
