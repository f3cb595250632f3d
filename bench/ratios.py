#!/usr/bin/python3
"""bench/ratios.py — owns the summary of one diffphys_bench run (Google Benchmark JSON).

Reads the JSON that scripts/bench writes (out/bench.json, run with
--benchmark_report_aggregates_only) and prints, from that one run:
  1. time per step of every model for diffphys and MuJoCo and their ratio;
  2. the box towers' time against their contacts per step, with the exponent p of
     t ∝ contacts^p per engine;
  3. the chain's time against its number of links N: the cost per link, the marginal cost
     of each added link, and the growth exponent p of t ∝ N^p fitted on N ≥ 5 (p = 1 is
     linear growth; the fixed per-step overhead dominates below N = 5).

Each time comes with its spread over the repetitions: min–max (when the run kept every
repetition, --benchmark_report_aggregates_only=false) and the coefficient of variation.

Rows are paired by name: BM_<Model>/<engine>[_<solver>][/<size>]. A diffphys row is compared
with the MuJoCo row of the same model and size whose solver suffix matches (pgs ↔ pgs), else
with its partner (convex ↔ newton_elliptic), else with the plain `mujoco` row. Times are the
median over repetitions of the CPU time per step (CPU time rather than wall time: the
machine may be shared while the suite runs).

Usage: bench/ratios.py out/bench.json [--markdown]
"""
import json
import math
import sys

STATISTIC = "median"
TIME_FIELD = "cpu_time"
UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
CHAIN_FAMILY = "BM_Chain"


def load_times(path):
    """{run_name: (seconds per step, counters)} for the chosen aggregate statistic."""
    with open(path) as handle:
        report = json.load(handle)
    times = {}
    for entry in report["benchmarks"]:
        if entry.get("error_occurred"):
            continue
        aggregate = entry.get("aggregate_name")
        if aggregate not in (None, STATISTIC):
            continue
        if aggregate is None and entry["run_name"] in times:
            continue  # without aggregates: keep the first repetition
        seconds = entry[TIME_FIELD] * UNIT_SECONDS[entry.get("time_unit", "ns")]
        times[entry["run_name"]] = (seconds, entry)
    return report.get("context", {}), times


def load_spread(path):
    """{run_name: (min, max, cv)} over the repetitions: min and max in seconds when the run
    kept every repetition (--benchmark_report_aggregates_only=false), else None; cv (stddev /
    mean of the CPU time) from Google Benchmark's cv aggregate, else computed, else None."""
    with open(path) as handle:
        report = json.load(handle)
    samples, cvs = {}, {}
    for entry in report["benchmarks"]:
        if entry.get("error_occurred"):
            continue
        name = entry["run_name"]
        if entry.get("run_type") == "aggregate":
            if entry.get("aggregate_name") == "cv":
                cvs[name] = entry[TIME_FIELD]
            continue
        samples.setdefault(name, []).append(entry[TIME_FIELD] * UNIT_SECONDS[entry.get("time_unit", "ns")])
    spread = {}
    for name in set(samples) | set(cvs):
        values = samples.get(name, [])
        low, high = (min(values), max(values)) if len(values) > 1 else (None, None)
        cv = cvs.get(name)
        if cv is None and len(values) > 1:
            mean = sum(values) / len(values)
            cv = math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1)) / mean
        spread[name] = (low, high, cv)
    return spread


def format_spread(spread):
    """'min–max, CV x %' of one row, or '—'."""
    if not spread:
        return "—"
    low, high, cv = spread
    parts = []
    if low is not None:
        parts.append(f"{format_time(low)}–{format_time(high)}")
    if cv is not None:
        parts.append(f"CV {100 * cv:.0f} %")
    return ", ".join(parts) or "—"


def split_name(run_name):
    """'BM_Chain/diffphys/10' -> ('BM_Chain', 'diffphys', '', '10')."""
    parts = [part for part in run_name.split("/") if ":" not in part]  # drop e.g. iterations:1
    family, variant = parts[0], parts[1] if len(parts) > 1 else ""
    size = parts[2] if len(parts) > 2 else ""
    engine, _, solver = variant.partition("_")
    return family, engine, solver, size


def format_time(seconds):
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def model_label(family, solver, size):
    label = family.removeprefix("BM_")
    if size:
        label += f" N={size}"
    if solver:
        label += f" ({solver.replace('_', ' ')})"
    return label


def comparison_rows(times):
    """(model, diffphys seconds or None, MuJoCo seconds or None, MuJoCo solver, diffphys run
    name or None, MuJoCo run name or None) in run order."""
    rows, used_mujoco = [], set()
    names = list(times)
    for name in names:
        family, engine, solver, size = split_name(name)
        if engine != "diffphys":
            continue
        candidates = [f"{family}/mujoco_{solver}" if solver else None, *[f"{family}/mujoco_{other}" for other in
                      PARTNER_SOLVERS.get(solver, ())], f"{family}/mujoco", f"{family}/mujoco_newton_elliptic"]
        partner = None
        for candidate in candidates:
            if candidate is None:
                continue
            full = f"{candidate}/{size}" if size else candidate
            if full in times:
                partner = full
                break
        if partner:
            used_mujoco.add(partner)
        mujoco_solver = split_name(partner)[2] if partner else ""
        rows.append((model_label(family, solver, size), times[name][0],
                     times[partner][0] if partner else None, mujoco_solver, name, partner))
    for name in names:
        family, engine, solver, size = split_name(name)
        if engine == "mujoco" and name not in used_mujoco:
            rows.append((model_label(family, solver, size) + " [MuJoCo only]", None, times[name][0], solver, None, name))
    return rows


# MuJoCo rows a diffphys solver is compared with when no MuJoCo row has its own suffix: the
# convex formulation with MuJoCo's Newton on the elliptic cone (the same kind of problem).
PARTNER_SOLVERS = {"convex": ("newton_elliptic",)}

GROWTH_FIT_MIN_LINKS = 5
TOWER_FAMILY = "BM_BoxTower"


def growth_exponent(points):
    """p of t ∝ N^p: least-squares slope of log t against log N over N ≥ GROWTH_FIT_MIN_LINKS."""
    logs = [(math.log(n), math.log(t)) for n, t in points if n >= GROWTH_FIT_MIN_LINKS]
    if len(logs) < 2:
        return None
    mean_x = sum(x for x, _ in logs) / len(logs)
    mean_y = sum(y for _, y in logs) / len(logs)
    spread = sum((x - mean_x) ** 2 for x, _ in logs)
    return sum((x - mean_x) * (y - mean_y) for x, y in logs) / spread


def chain_series(times, engine, variant=""):
    """[(N, seconds)] of one engine's chain rows; variant "reduced" picks diffphys_reduced."""
    series = []
    for name, (seconds, _) in times.items():
        family, row_engine, row_variant, size = split_name(name)
        if family == CHAIN_FAMILY and row_engine == engine and row_variant == variant and size:
            series.append((int(size), seconds))
    return sorted(series)


def print_table(headers, rows, markdown):
    if markdown:
        print("| " + " | ".join(headers) + " |")
        print("|" + "|".join("---" for _ in headers) + "|")
        for row in rows:
            print("| " + " | ".join(row) + " |")
        return
    widths = [max(len(str(cell)) for cell in column) for column in zip(headers, *rows)]
    print("  ".join(h.ljust(w) for h, w in zip(headers, widths)))
    print("  ".join("-" * w for w in widths))
    for row in rows:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths)))


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    markdown = "--markdown" in argv[2:]
    context, times = load_times(argv[1])
    if not times:
        print(f"ratios.py: no benchmark results in {argv[1]}", file=sys.stderr)
        return 1

    print(f"Time per step: {STATISTIC} {TIME_FIELD.replace('_', ' ')} over repetitions "
          f"(MuJoCo {context.get('mujoco_version', '?')}, {context.get('num_cpus', '?')} CPUs "
          f"at {context.get('mhz_per_cpu', '?')} MHz, load average at start "
          f"{', '.join(f'{x:.2f}' for x in context.get('load_avg', [])) or '?'})\n")
    spread = load_spread(argv[1])
    table = []
    for model, ours, theirs, mujoco_solver, our_name, their_name in comparison_rows(times):
        ratio = f"{ours / theirs:.2f}×" if ours and theirs else "—"
        table.append([model, format_time(ours) if ours else "—",
                      (format_time(theirs) + (f" ({mujoco_solver})" if mujoco_solver else "")) if theirs else "—",
                      ratio, format_spread(spread.get(our_name)), format_spread(spread.get(their_name))])
    print_table(["model", "diffphys", "MuJoCo", "diffphys / MuJoCo", "spread diffphys", "spread MuJoCo"], table,
                markdown)

    print_tower_growth(times, markdown)
    theirs = chain_series(times, "mujoco")
    for variant, title in (("", "maximal coordinates"), ("reduced", "reduced (joint) coordinates")):
        print_chain_table(chain_series(times, "diffphys", variant), theirs, title, markdown)
    return 0


def print_tower_growth(times, markdown):
    """The box towers: time per step against contacts per step, and the exponent p of
    t ∝ contacts^p fitted over every height, per engine and solver."""
    series = {}
    for name, (seconds, entry) in times.items():
        family, engine, solver, size = split_name(name)
        if family == TOWER_FAMILY and size and entry.get("contacts"):
            series.setdefault(f"{engine} {solver}".strip(), []).append((int(size), entry["contacts"], seconds))
    if not series:
        return
    print("\nBox towers: time per step against the contacts per step\n")
    table = []
    for label, points in sorted(series.items()):
        points.sort()
        logs = [(math.log(c), math.log(t)) for _, c, t in points]
        exponent = "—"
        if len(logs) >= 2:
            mean_x = sum(x for x, _ in logs) / len(logs)
            mean_y = sum(y for _, y in logs) / len(logs)
            spread = sum((x - mean_x) ** 2 for x, _ in logs)
            exponent = f"{sum((x - mean_x) * (y - mean_y) for x, y in logs) / spread:.2f}"
        table.append([label.replace("_", " "), " ".join(f"{n}:{c:.0f}" for n, c, _ in points),
                      " ".join(format_time(t) for _, _, t in points), exponent])
    print_table(["engine", "height:contacts", "time per step", "p in t ∝ contacts^p"], table, markdown)


def print_chain_table(ours, theirs, title, markdown):
    """The chain's time per step against N, diffphys (one description) beside MuJoCo."""
    if ours:
        print(f"\nChain, diffphys in {title}: time per step against the number of links N\n")
        mujoco_by_n = dict(theirs)

        def marginal(series, index):
            """Cost of each link added since the previous N of the series."""
            if index == 0:
                return "—"
            (n0, t0), (n1, t1) = series[index - 1], series[index]
            return format_time((t1 - t0) / (n1 - n0))

        theirs_index = {n: k for k, (n, _) in enumerate(theirs)}
        table = []
        for index, (n, seconds) in enumerate(ours):
            other = mujoco_by_n.get(n)
            table.append([str(n), format_time(seconds), format_time(seconds / n), marginal(ours, index),
                          format_time(other) if other else "—", format_time(other / n) if other else "—",
                          marginal(theirs, theirs_index[n]) if other else "—",
                          f"{seconds / other:.2f}×" if other else "—"])
        print_table(["N", "diffphys", "per link", "per added link", "MuJoCo", "per link", "per added link",
                     "diffphys / MuJoCo"], table, markdown)
        print()
        for engine, series in (("diffphys", ours), ("MuJoCo", theirs)):
            exponent = growth_exponent(series)
            if exponent is not None:
                print(f"{engine}: t ∝ N^{exponent:.2f} for N ≥ {GROWTH_FIT_MIN_LINKS} "
                      f"(1.00 = linear); t({series[-1][0]}) / t({series[0][0]}) = {series[-1][1] / series[0][1]:.1f}")


if __name__ == "__main__":
    sys.exit(main(sys.argv))
