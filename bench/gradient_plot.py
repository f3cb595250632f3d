#!/usr/bin/python3
"""bench/gradient_plot.py — owns the summary of one diffphys_gradient_bench run: the tables of
ratios and the plot docs/img/gradient_vs_finite_differences.png.

Reads the Google Benchmark JSON that scripts/bench-gradients writes (out/gradient_bench.json)
and, optionally, the peak-memory JSON objects of `diffphys_gradient_bench
--peak_memory_budget_mb=B` (one file per budget), and prints from that one run:
  1. forward + backward against forward alone for each 1,000-step rollout (BM_Rollout), and
     the step records as solutions against whole Workspaces, on a reused and a fresh Rollout;
  2. the gradient with respect to every link mass of an N-link chain, analytic against
     central finite differences, in milliseconds and in units of one forward rollout
     (BM_MassGradient), with the growth exponents of t ∝ N^p;
  3. the 10-link chain's dL/dx_0 and dL/du_t, diffphys against MuJoCo's mjd_transitionFD
     (BM_ChainGradient), as MuJoCo / diffphys;
  4. the contact rollouts' (box tower, humanoid; convex formulation) dL/dx_0 and dL/du_t,
     diffphys against MuJoCo's centred mjd_transitionFD (BM_ContactGradient), with the
     spread over repetitions and each engine's check of its gradient against central
     differences of its own loss;
  5. peak resident memory per memory budget.
Times are the median over repetitions of the CPU time per iteration (bench/ratios.py's rule;
a row run once is taken as it is).

Usage: bench/gradient_plot.py out/gradient_bench.json [--memory FILE ...] [--plot PNG] [--markdown]
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ratios import (GROWTH_FIT_MIN_LINKS, format_spread, format_time, growth_exponent, load_spread,  # noqa: E402
                    load_times, print_table)  # (same directory)

ROLLOUT_FAMILY = "BM_Rollout"
MASS_FAMILY = "BM_MassGradient"
CHAIN_FAMILY = "BM_ChainGradient"
CONTACT_FAMILY = "BM_ContactGradient"
FORWARD_BACKWARD_TARGET = 3.0  # (forward + backward) / forward, at most
MUJOCO_TARGET = 30.0  # MuJoCo / diffphys, at least
MEMORY_TARGET_MIB = 200.0


def rows_of(times, family):
    """{name without the family: (seconds, entry)} of one family; parts such as
    iterations:1 or repeats:1 that Google Benchmark appends are dropped."""
    rows = {}
    for name, value in times.items():
        parts = name.split("/")
        if parts[0] == family:
            rows["/".join(part for part in parts[1:] if ":" not in part)] = value
    return rows


def rollout_table(times, markdown):
    rows = rows_of(times, ROLLOUT_FAMILY)
    models = []
    for name in rows:
        model = name.split("/")[0]
        if model not in models:
            models.append(model)
    table = []
    for model in models:
        step = rows.get(f"{model}/step")
        run = rows.get(f"{model}/run")
        both = rows.get(f"{model}/run_backward")
        if not (run and both):
            continue
        ratio = both[0] / run[0]
        steps = int(both[1].get("steps", 0)) or 1
        table.append([model, format_time(step[0]) if step else "—", format_time(run[0]), format_time(both[0]),
                      format_time(both[0] - run[0]), format_time((both[0] - run[0]) / steps),
                      f"{ratio:.2f}×", f"{both[0] / step[0]:.2f}×" if step else "—",
                      "met" if ratio <= FORWARD_BACKWARD_TARGET else "not met"])
    if not table:
        return
    print(f"Forward + backward against forward alone (whole rollout; target ≤ {FORWARD_BACKWARD_TARGET:g}×)\n")
    print_table(["model", "step ×T", "Rollout::run", "run + backward", "backward", "backward per step",
                 "(run+backward) / run", "(run+backward) / step", "≤ 3×"], table, markdown)
    print()


def real_seconds(row):
    """The real (wall) time of a row, in seconds."""
    return row[1]["real_time"] * {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}[row[1].get("time_unit", "ns")]


def records_table(times, markdown):
    """A step's record as by default (its solution; a Workspace for problems of joint rows
    only) against its whole Workspace (keep_step_workspaces), on a reused Rollout and on a
    fresh one (real time: page faults)."""
    rows = rows_of(times, ROLLOUT_FAMILY)
    table = []
    for name, (seconds, entry) in rows.items():
        model, _, phase = name.partition("/")
        if phase != "run_backward":
            continue
        workspaces = rows.get(f"{model}/run_backward_workspaces")
        fresh = rows.get(f"{model}/fresh_run_backward")
        fresh_workspaces = rows.get(f"{model}/fresh_run_backward_workspaces")
        if not (workspaces and fresh and fresh_workspaces):
            continue
        table.append([model, format_time(seconds), format_time(workspaces[0]), f"{seconds / workspaces[0]:.2f}×",
                      format_time(real_seconds(fresh)), format_time(real_seconds(fresh_workspaces)),
                      f"{entry.get('records_MiB', 0):.2f} MiB", f"{workspaces[1].get('workspaces_MiB', 0):.1f} MiB"])
    if not table:
        return
    print("Step records: the default (solutions; Workspaces for joint rows only) against whole Workspaces (keep_step_workspaces)\n")
    print_table(["model", "run + backward", "with workspaces", "default / workspaces (CPU)", "fresh Rollout (real)",
                 "fresh, workspaces (real)", "kept by default", "workspaces kept"], table, markdown)
    print()


def mass_series(times):
    """{method: [(N, seconds)]} and {N: relative difference FD vs analytic}."""
    series, agreement = {}, {}
    for name, (seconds, entry) in rows_of(times, MASS_FAMILY).items():
        method, _, size = name.partition("/")
        if not size.isdigit():
            continue
        series.setdefault(method, []).append((int(size), seconds))
        if "rel_diff_vs_analytic" in entry:
            agreement[int(size)] = entry["rel_diff_vs_analytic"]
    for points in series.values():
        points.sort()
    return series, agreement


def mass_table(times, markdown):
    series, agreement = mass_series(times)
    analytic = dict(series.get("analytic", []))
    differences = dict(series.get("finite_differences", []))
    forward = dict(series.get("forward", []))
    if not analytic or not differences:
        return
    print("Gradient w.r.t. every link mass of an N-link chain (100 steps): analytic against central "
          "finite differences\n")
    table = []
    for n in sorted(analytic):
        if n not in differences:
            continue
        unit = forward.get(n)
        table.append([str(n), format_time(forward[n]) if unit else "—", format_time(analytic[n]),
                      format_time(differences[n]),
                      f"{analytic[n] / unit:.1f}" if unit else "—", f"{differences[n] / unit:.1f}" if unit else "—",
                      f"{differences[n] / analytic[n]:.2f}×",
                      f"{agreement[n]:.1e}" if n in agreement else "—"])
    print_table(["N", "one rollout", "analytic", "finite diff.", "analytic / rollout", "finite diff. / rollout",
                 "finite diff. / analytic", "FD vs analytic (max Δ / max g)"], table, markdown)
    print()
    for method, label in (("analytic", "analytic"), ("finite_differences", "finite differences"),
                          ("forward", "one rollout")):
        exponent = growth_exponent(series.get(method, []))
        if exponent is not None:
            print(f"{label}: t ∝ N^{exponent:.2f} for N ≥ {GROWTH_FIT_MIN_LINKS}")
    if forward:
        normalised = [analytic[n] / forward[n] for n in analytic if n in forward]
        print(f"analytic / one rollout: {min(normalised):.1f} … {max(normalised):.1f} over N = "
              f"{min(analytic)} … {max(analytic)} (finite differences: 2 N rollouts by construction)")
    print()


def chain_table(times, markdown):
    """Every diffphys variant of BM_ChainGradient against MuJoCo's finite-differenced rows."""
    rows = rows_of(times, CHAIN_FAMILY)
    ours = {key: value for key, value in rows.items() if key.startswith("diffphys")}
    if not ours:
        return
    print(f"10-link chain, 1,000 steps: dL/dx_0 and dL/du_t, MuJoCo mjd_transitionFD against diffphys "
          f"(target ≥ {MUJOCO_TARGET:g}×)\n")
    labels = {
        "diffphys": "diffphys, maximal coordinates: run + backward (dL/dθ too)",
        "diffphys_reduced": "diffphys, reduced coordinates: run + backward (dL/dθ too)",
        "diffphys_reduced_state_controls": "diffphys, reduced coordinates: run + backward, dL/dx_0 and dL/du_t only",
        "mujoco_forward_only": "MuJoCo: rollout storing states only",
        "mujoco_fd_centred": "MuJoCo: rollout + mjd_transitionFD centred + VJPs",
        "mujoco_fd_forward": "MuJoCo: rollout + mjd_transitionFD forward + VJPs",
    }
    centred, forward = rows.get("mujoco_fd_centred"), rows.get("mujoco_fd_forward")
    table = []
    for key, label in labels.items():
        if key not in rows:
            continue
        seconds, entry = rows[key]
        if key in ours:
            versus = [f"{other[0] / seconds:.2f}×" if other else "—" for other in (centred, forward)]
            met = ("met" if centred[0] / seconds >= MUJOCO_TARGET else "not met") if centred else "—"
            table.append([label, format_time(seconds)] + versus + [met, "—"])
        else:
            agreement = entry.get("control_gradient_rel_diff_vs_diffphys_100_steps")
            table.append([label, format_time(seconds), "—", "—", "—", f"{agreement:.1e}" if agreement is not None else "—"])
    print_table(["method", "time", "MuJoCo centred / this", "MuJoCo forward / this", "≥ 30× (centred)",
                 "dL/du vs diffphys (100 steps)"], table, markdown)
    print()


def contact_table(times, spread, markdown):
    """BM_ContactGradient: per model, diffphys' run + backward against MuJoCo's centred
    finite differences of the same loss, with each side's gradient check."""
    rows = rows_of(times, CONTACT_FAMILY)
    models = []
    for name in rows:
        model = name.split("/")[0]
        if model not in models:
            models.append(model)
    if not models:
        return
    print(f"Contact rollouts (convex formulation), 1,000 steps: dL/dx_0 and dL/du_t, MuJoCo's centred "
          f"differences against diffphys (target ≥ {MUJOCO_TARGET:g}×)\n")
    table = []
    for model in models:
        centred = rows.get(f"{model}/mujoco_fd_centred")
        for key, label in (("diffphys", "diffphys: run + backward (dL/dθ too)"),
                           ("diffphys_state_controls", "diffphys: run + backward, dL/dx_0 and dL/du_t only"),
                           ("mujoco_forward_only", "MuJoCo: rollout storing states"),
                           ("mujoco_fd_centred", "MuJoCo: rollout + mjd_transitionFD centred + VJPs")):
            if f"{model}/{key}" not in rows:
                continue
            seconds, entry = rows[f"{model}/{key}"]
            full_name = next(name for name in times if name.startswith(f"{CONTACT_FAMILY}/{model}/{key}")
                             and name.split("/")[2] == key)
            if key.startswith("diffphys"):
                versus = f"{centred[0] / seconds:.2f}×" if centred else "—"
                met = ("met" if centred[0] / seconds >= MUJOCO_TARGET else "not met") if centred else "—"
                check = (f"L = {entry['loss']:.6g}; worst |analytic − central difference| / |·| "
                         f"= {entry['fd_worst_rel_error']:.1e}") if "fd_worst_rel_error" in entry else "—"
            else:
                versus, met = "—", "—"
                check = f"L = {entry['loss']:.6g}" if "loss" in entry else "—"
                if "dL_dlift_fd_transition" in entry:
                    check += (f"; dL/dlift {entry['dL_dlift_fd_transition']:.6g} (chained) against "
                              f"{entry['dL_dlift_central_diff']:.6g} (whole rollouts)"
                              + ("" if entry.get("gradient_finite", 1) else "; the gradient is NOT finite"))
            table.append([model, label, format_time(seconds), format_spread(spread.get(full_name)), versus, met,
                          check])
    print_table(["model", "method", "time", "spread", "MuJoCo centred / this", "≥ 30×", "check"], table, markdown)
    print()


def memory_table(paths, markdown):
    results = []
    for path in paths:
        with open(path) as handle:
            results.append(json.load(handle))
    if not results:
        return
    results.sort(key=lambda result: -result["memory_budget_MiB"])
    print(f"Peak resident memory, differentiating {results[0]['steps']:,} steps of the "
          f"{results[0]['model']} (target < {MEMORY_TARGET_MIB:g} MiB)\n")
    table = []
    for result in results:
        table.append([f"{result['memory_budget_MiB']:g} MiB", str(result["checkpoint_interval"]),
                      f"{result['stored_state_MiB']:.1f} MiB", f"{result['peak_rss_MiB_before_run']:.0f} MiB",
                      f"{result['peak_rss_MiB_after_run']:.0f} MiB", f"{result['peak_rss_MiB']:.0f} MiB",
                      f"{result['run_seconds']:.2f} s", f"{result['backward_seconds']:.2f} s",
                      "met" if result["peak_rss_MiB"] < MEMORY_TARGET_MIB else "not met"])
    print_table(["memory budget", "checkpoint interval", "stored states", "peak RSS before run",
                 "after run", "after backward", "run (wall)", "backward (wall)", "< 200 MiB"], table, markdown)
    print()


def plot(times, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    series, _ = mass_series(times)
    analytic, differences = series.get("analytic", []), series.get("finite_differences", [])
    forward = dict(series.get("forward", []))
    if not analytic or not differences:
        print("gradient_plot.py: no BM_MassGradient rows: no plot", file=sys.stderr)
        return
    figure, (absolute, relative) = plt.subplots(1, 2, figsize=(11, 4.3))
    style = {"analytic": dict(color="tab:blue", marker="o", label="analytic: 1 run + 1 backward"),
             "fd": dict(color="tab:red", marker="s", label="central finite differences: 2N runs")}
    absolute.plot([n for n, _ in analytic], [t * 1e3 for _, t in analytic], **style["analytic"])
    absolute.plot([n for n, _ in differences], [t * 1e3 for _, t in differences], **style["fd"])
    absolute.set_xlabel("links N = number of mass parameters")
    absolute.set_ylabel("time for dL/dm of every link (ms, CPU)")
    absolute.set_title("Time per gradient")
    absolute.grid(alpha=0.3)
    absolute.legend()
    if forward:
        relative.plot([n for n, _ in analytic if n in forward], [t / forward[n] for n, t in analytic if n in forward],
                      **style["analytic"])
        relative.plot([n for n, _ in differences if n in forward],
                      [t / forward[n] for n, t in differences if n in forward], **style["fd"])
        sizes = [n for n, _ in differences]
        relative.plot(sizes, [2 * n for n in sizes], color="0.5", linestyle="--", linewidth=1,
                      label="2N (finite differences' count of rollouts)")
        relative.set_ylabel("time / one forward rollout of the same chain")
        relative.set_title("In units of one forward rollout")
        relative.set_xlabel("links N = number of mass parameters")
        relative.grid(alpha=0.3)
        relative.legend()
        relative.set_ylim(bottom=0)
    absolute.set_ylim(bottom=0)
    for axes in (absolute, relative):
        axes.set_xticks(range(0, max(n for n, _ in analytic) + 1, 2))
    figure.suptitle("Gradient of a 100-step loss w.r.t. every link mass of an N-link chain "
                    "(de Avila Belbute-Peres et al. 2018, Fig. 1)", fontsize=10)
    figure.tight_layout()
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    figure.savefig(path, dpi=110)
    print(f"plot: {path}")


def main(argv):
    if len(argv) < 2 or argv[1].startswith("--"):
        print(__doc__, file=sys.stderr)
        return 2
    markdown = "--markdown" in argv
    memory_paths, plot_path = [], None
    arguments = argv[2:]
    index = 0
    while index < len(arguments):
        if arguments[index] == "--memory":
            index += 1
            while index < len(arguments) and not arguments[index].startswith("--"):
                memory_paths.append(arguments[index])
                index += 1
            continue
        if arguments[index] == "--plot" and index + 1 < len(arguments):
            plot_path = arguments[index + 1]
            index += 2
            continue
        index += 1
    context, times = load_times(argv[1])
    if not times:
        print(f"gradient_plot.py: no benchmark results in {argv[1]}", file=sys.stderr)
        return 1
    print(f"Median CPU time over repetitions (MuJoCo {context.get('mujoco_version', '?')}, "
          f"{context.get('num_cpus', '?')} CPUs at {context.get('mhz_per_cpu', '?')} MHz, load average at start "
          f"{', '.join(f'{x:.2f}' for x in context.get('load_avg', [])) or '?'})\n")
    rollout_table(times, markdown)
    records_table(times, markdown)
    mass_table(times, markdown)
    chain_table(times, markdown)
    contact_table(times, load_spread(argv[1]), markdown)
    memory_table(memory_paths, markdown)
    if plot_path:
        plot(times, plot_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
