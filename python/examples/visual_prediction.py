#!/usr/bin/env python3
"""visual-prediction: from 3 frames of balls bouncing in a box, predict the frame 10 frames
later through encoder → physics engine → decoder (issue 20's second experiment, de Avila
Belbute-Peres et al. 2018 §4.2, Figure 4), against an MLP in place of the physics.

Data (bouncing_balls.py): the engine simulates 1 or 3 equal balls in a frictionless walled box
(no gravity, restitution 1) and its camera films them from above at 32 × 32 pixels, a frame
every 0.1 s; a sample is frames t − 2, t − 1, t and the target frame t + 10, with the true
planar states s_t, s_{t+10} ((x, y, vx, vy) per ball) as its label.

Model (the paper's Figure 2):
- encoder: per ball, its colour filter (the frames projected on the ball's colour: the paper's
  colour masks) goes through a small CNN shared by the balls and frames (2 convolutions and a
  spatial soft-argmax, then 2 dense layers, where the paper has optical flow and VGG-11) that
  gives the ball's position (confined to the box by tanh) and velocity at t;
- physics: diffphys.torch.world_rollout of the same box from the encoded state for 1 s (20
  world steps), batched; the baseline replaces it by an MLP (4K → 100 → 100 → 4K);
- decoder: the engine's camera (diffphys.torch.render) of the predicted state — fixed, where
  the paper learns a decoder (a mirror of its encoder), because its engine could not draw and
  ours draws these frames exactly: a learned decoder could only add error, and the frame loss
  of an unlabelled sample then reaches the encoder through the engine's camera and physics.
Losses (eqs. 5 and 6, MSE): a labelled sample gives L_enc + L_phys + L_dec with the true states
as the inputs of physics and decoder. The camera has no weights and drew the data, so L_dec is
a constant at rounding level; so is L_phys for the engine: a labelled sample trains the encoder
by L_enc, and the MLP by L_phys. An unlabelled sample gives L_dec of
decoder(physics(encoder(x))), weighted by `--frame-weight` (30, one value tried, not tuned: a
missed ball costs a frame MSE of ~0.003, the empty box's with one ball, where the untrained
encoder's state MSE is 0.44). Regimes: 100, 25, 10, 2 % of the training windows labelled (a
fixed seeded subset), batches drawn from all of them; the MLP baseline trains on labelled
samples only. Every run takes the same number of updates; the figure plots the validation
frame MSE against the labelled samples used so far (Figure 4's axes), beside two trivial
predictors: the last input frame repeated, and the empty box.

    PYTHONPATH=build/python /usr/bin/python3 python/examples/visual_prediction.py [--quick] [--out DIR]

`--quick` (CI): 1 ball, a small dataset, the 100 % regime and the MLP for 150 updates each.
`--out DIR` writes results.json and sample_efficiency.png (and predictions.png).
Float32 networks, float64 physics and camera; seeded, so a run gives the same numbers again.
"""

import argparse
import json
import pathlib
import time

import numpy as np
import torch
from torch import nn

from diffphys import torch as dpt

import bouncing_balls as balls_data
from bouncing_balls import CAMERA, HORIZON, INPUT_FRAMES, RESOLUTION, STEPS_PER_FRAME


class Encoder(nn.Module):
    """Frames (B, 3, 3, H, W) → planar states (B, K, 4). Each ball's colour filter (its colour's
    projection of a frame) goes through two convolutions at full resolution and a spatial
    soft-argmax (the expected pixel coordinates of each feature map's softmax: Levine et al.
    2016, Finn et al. 2016), which locates a ball to a fraction of a pixel where pooling layers
    would not; the keypoints of the three frames → a dense layer → position (confined to the
    box by tanh) and velocity. One network for every ball and frame."""

    def __init__(self, balls, channels=8):
        super().__init__()
        self.register_buffer("colours", torch.tensor(balls_data.COLOURS[:balls], dtype=torch.float32))
        axis = (torch.arange(RESOLUTION, dtype=torch.float32) + 0.5) / RESOLUTION * 2 - 1
        rows, columns = torch.meshgrid(axis, axis, indexing="ij")
        self.register_buffer("grid", torch.stack([columns.reshape(-1), rows.reshape(-1)]))  # (2, H·W)
        self.channels = channels
        self.features = nn.Sequential(nn.Conv2d(1, channels, 5, padding=2), nn.ReLU(),
                                      nn.Conv2d(channels, channels, 3, padding=1))
        self.log_temperature = nn.Parameter(torch.tensor(3.0))  # a sharp softmax from the start
        self.head = nn.Sequential(nn.Linear(INPUT_FRAMES * 2 * channels, 128), nn.ReLU(), nn.Linear(128, 4))

    def forward(self, frames):
        size, balls = frames.shape[0], self.colours.shape[0]
        masked = torch.einsum("bfchw,kc->bkfhw", frames, self.colours)  # the colour filters
        maps = self.features(masked.reshape(-1, 1, RESOLUTION, RESOLUTION))
        weights = torch.softmax(maps.reshape(maps.shape[0], self.channels, -1) * self.log_temperature.exp(), dim=-1)
        keypoints = torch.einsum("ncp,dp->ncd", weights, self.grid)  # (n, C, 2), image units in [−1, 1]
        # The latest frame's keypoints and their two backward differences per frame time (a fixed
        # linear map of the same numbers, so that a velocity is a weight of order one).
        keypoints = keypoints.reshape(size * balls, INPUT_FRAMES, -1)
        differences = (keypoints[:, 1:] - keypoints[:, :-1]) / balls_data.FRAME_SECONDS
        raw = self.head(torch.cat([keypoints[:, -1], differences.reshape(size * balls, -1)], dim=-1))
        raw = raw.reshape(size, balls, 4)
        return torch.cat([balls_data.FREE_HALF_WIDTH * torch.tanh(raw[..., :2]), raw[..., 2:]], dim=-1)


class EnginePhysics:
    """Planar states at t (B, K, 4) → at t + HORIZON frames, by the engine (batched
    world_rollout of the box, differentiable); no weights."""

    def __init__(self, world, threads):
        self.world, self.threads = world, threads
        self.base = torch.from_numpy(world.initial_state())
        self.theta = torch.from_numpy(world.default_params())

    def __call__(self, planar):
        size = planar.shape[0]
        start = balls_data.place(self.base, planar.double())
        steps = HORIZON * STEPS_PER_FRAME
        controls = torch.zeros(size, steps, self.world.layout.control_count, dtype=torch.float64)
        states = dpt.world_rollout(self.world, start, controls, self.theta.expand(size, -1), threads=self.threads)
        return balls_data.planar_states(states[:, -1])


class MlpPhysics(nn.Module):
    """The paper's baseline: an MLP with two hidden layers of 100 in place of the physics."""

    def __init__(self, balls):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(4 * balls, 100), nn.ReLU(), nn.Linear(100, 100), nn.ReLU(),
                                 nn.Linear(100, 4 * balls))

    def forward(self, planar):
        return self.net(planar.float().reshape(planar.shape[0], -1)).reshape(planar.shape)


class CameraDecoder:
    """Planar states (B, K, 4) → frames (B, 3, H, W): the engine's camera of the box (float64)."""

    def __init__(self, world, threads):
        self.world, self.threads = world, threads
        self.base = torch.from_numpy(world.initial_state())
        self.theta = torch.from_numpy(world.default_params())

    def __call__(self, planar):
        colour, _ = dpt.render(self.world, balls_data.place(self.base, planar.double()), self.theta, CAMERA,
                               threads=self.threads)
        return colour.permute(0, 3, 1, 2)


def frame_loss(predicted, target):
    """Per-sample frame MSE: (B,)."""
    return ((predicted - torch.as_tensor(target).to(predicted.dtype)) ** 2).mean(dim=(1, 2, 3))


def end_to_end_loss(planar, physics, decoder, target):
    """Mean frame MSE of decoder(physics(planar)) against target frames: the unlabelled loss as a
    function of the encoder's output (what the gradient test differentiates)."""
    return frame_loss(decoder(physics(planar)), target).mean()


def predict(encoder, physics, decoder, seen, chunk=256):
    """Predicted target frames (n, 3, H, W) of inputs (n, 3, 3, H, W), float64, no gradient."""
    with torch.no_grad():
        return torch.cat([decoder(physics(encoder(torch.from_numpy(seen[k:k + chunk]))))
                          for k in range(0, len(seen), chunk)])


def trivial_losses(seen, target):
    """The frame MSE of repeating the last input frame, and of the empty box (all background)."""
    seen, target = torch.from_numpy(seen).double(), torch.from_numpy(target).double()
    return {"last_frame": frame_loss(seen[:, -1], target).mean().item(),
            "empty_box": frame_loss(torch.zeros_like(target), target).mean().item()}


def train(kind, fraction, data, held_out, options, world, seed):
    """Trains one model: kind "engine" (fraction of labelled windows) or "mlp" (labelled only).
    Returns its curve [(updates, labelled used, samples used, validation frame MSE, seconds)]
    and the trained parts."""
    torch.manual_seed(seed)
    balls = balls_data.ball_count(world)
    encoder = Encoder(balls, options.channels)
    physics = EnginePhysics(world, options.threads) if kind == "engine" else MlpPhysics(balls)
    decoder = CameraDecoder(world, options.threads)
    weights = list(encoder.parameters()) + (list(physics.parameters()) if kind == "mlp" else [])
    optimiser = torch.optim.Adam(weights, lr=options.lr)
    windows = balls_data.windows(data)
    rng = np.random.default_rng(seed)
    labelled = np.zeros(len(windows), dtype=bool)
    labelled[rng.permutation(len(windows))[:max(1, round(fraction * len(windows)))]] = True
    pool = np.flatnonzero(labelled) if kind == "mlp" else np.arange(len(windows))
    seen_val, target_val = held_out[0], held_out[1]
    curve, labelled_used, samples_used = [], 0, 0
    begin = time.perf_counter()

    def evaluate(updates):
        loss = frame_loss(predict(encoder, physics, decoder, seen_val), target_val).mean().item()
        curve.append((updates, labelled_used, samples_used, loss, time.perf_counter() - begin))

    evaluate(0)
    for update in range(1, options.updates + 1):
        chosen = rng.choice(pool, size=options.batch, replace=True)
        seen, target, state_now, state_later = balls_data.batch(data, windows[chosen])
        is_labelled = torch.from_numpy(labelled[chosen])
        encoded = encoder(torch.from_numpy(seen))
        total = encoded.new_zeros(())
        if is_labelled.any():  # eq. (5): L_enc + L_phys (L_dec: the camera has no weights)
            truth_now = torch.from_numpy(state_now[is_labelled.numpy()]).float()
            total = total + ((encoded[is_labelled] - truth_now) ** 2).mean(dim=(1, 2)).sum()
            if kind == "mlp":
                truth_later = torch.from_numpy(state_later[is_labelled.numpy()]).float()
                total = total + ((physics(truth_now) - truth_later) ** 2).mean(dim=(1, 2)).sum()
        if kind == "engine" and (~is_labelled).any():  # eq. (6): L_dec through physics and camera
            unlabelled = ~is_labelled
            frames = decoder(physics(encoded[unlabelled]))
            total = total + options.frame_weight * frame_loss(frames, torch.from_numpy(target[unlabelled.numpy()])).sum()
        optimiser.zero_grad()
        (total / options.batch).backward()
        optimiser.step()
        labelled_used += int(is_labelled.sum())
        samples_used += options.batch
        if update % options.eval_every == 0 or update == options.updates:
            evaluate(update)
    return curve, encoder, physics, decoder


def check_gradient(world, data, threads, samples=2, epsilon=1e-6):
    """d(end-to-end frame loss)/d(encoder output) by backward through camera and world_rollout,
    against central differences of the whole loss, for every entry of `samples` windows'
    encoded states (the true states at t, so that the balls are where the frames are).
    Returns [(entry, analytic, numeric)]."""
    physics, decoder = EnginePhysics(world, threads), CameraDecoder(world, threads)
    windows = balls_data.windows(data)
    chosen = windows[np.linspace(0, len(windows) - 1, samples).round().astype(int)]
    _, target, state_now, _ = balls_data.batch(data, chosen)
    target = torch.from_numpy(target).double()
    # Off the true state by a few pixels, so that the predicted balls are near, not on, theirs.
    planar = torch.from_numpy(state_now).clone()
    planar[..., :2] += 0.05
    planar[..., 2:] *= 1.05
    planar.requires_grad_()
    end_to_end_loss(planar, physics, decoder, target).backward()
    rows = []
    with torch.no_grad():
        for index in np.ndindex(*planar.shape):
            values = []
            for sign in (1, -1):
                moved = planar.detach().clone()
                moved[index] += sign * epsilon
                values.append(end_to_end_loss(moved, physics, decoder, target).item())
            rows.append((index, planar.grad[index].item(), (values[0] - values[1]) / (2 * epsilon)))
    return rows


def plot(results, path):
    """Figure 4's axes: validation frame MSE against labelled samples used, one panel per dataset."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot
    datasets = list(results["datasets"])
    figure, axes = pyplot.subplots(1, len(datasets), figsize=(6 * len(datasets), 4.2), squeeze=False)
    for axis, name in zip(axes[0], datasets):
        entry = results["datasets"][name]
        for label, run in entry["runs"].items():
            curve = np.array(run["curve"])
            curve = curve[curve[:, 1] > 0]  # a log axis: from the first validation after a labelled sample
            axis.plot(curve[:, 1], curve[:, 3], marker=".", label=label,
                      linestyle="--" if label.startswith("MLP") else "-")
        for what, style in (("last_frame", ":"), ("empty_box", "-.")):
            axis.axhline(entry["trivial_validation"][what], color="grey", linestyle=style,
                         label=what.replace("_", " ") + " predictor")
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xlabel("labelled samples used")
        axis.set_ylabel("validation frame MSE")
        axis.set_title(name)
        axis.legend(fontsize=7, loc="best")
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    pyplot.close(figure)


def plot_predictions(world, encoder, physics, decoder, seen, target, path, count=6):
    """Rows: last input frame, true target frame, predicted frame, for `count` held-out samples
    spread evenly over the set."""
    from PIL import Image
    chosen = np.linspace(0, len(seen) - 1, count).round().astype(int)
    predicted = predict(encoder, physics, decoder, seen[chosen]).float().numpy()
    rows = [seen[chosen, -1], target[chosen], predicted]
    sheet = np.concatenate([np.concatenate(list(row.transpose(0, 2, 3, 1)), axis=1) for row in rows], axis=0)
    picture = Image.fromarray((np.clip(sheet, 0, 1) * 255).round().astype("uint8"))
    picture.resize((picture.width * 4, picture.height * 4), Image.NEAREST).save(path)


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 ball, small data, 100 %% and the MLP (CI)")
    parser.add_argument("--balls", type=str, default=None, help="comma-separated ball counts (default 1,3; quick 1)")
    parser.add_argument("--regimes", type=str, default=None,
                        help="labelled percentages for the engine model (default 100,25,10,2; quick 100)")
    parser.add_argument("--updates", type=int, default=None, help="updates per model (default 600, quick 150)")
    parser.add_argument("--batch", type=int, default=32, help="samples per update")
    parser.add_argument("--lr", type=float, default=1e-3, help="Adam's step size")
    parser.add_argument("--frame-weight", type=float, default=30.0, help="weight of the unlabelled frame loss")
    parser.add_argument("--channels", type=int, default=8, help="channels of the encoder's first convolution")
    parser.add_argument("--train-trials", type=int, default=None, help="training trials (default 100, quick 12)")
    parser.add_argument("--validation-trials", type=int, default=None, help="validation trials (default 20, quick 4)")
    parser.add_argument("--validation-samples", type=int, default=256,
                        help="validation windows (spread evenly over the validation trials)")
    parser.add_argument("--test-trials", type=int, default=None, help="test trials (default 20, quick 4)")
    parser.add_argument("--trial-seconds", type=float, default=None, help="length of a trial (default 10, quick 4)")
    parser.add_argument("--eval-every", type=int, default=None, help="updates between validations (default 100, quick 50)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="engine and camera threads")
    parser.add_argument("--out", type=pathlib.Path, default=None, help="directory for results.json and the figures")
    options = parser.parse_args(argv)
    quick = options.quick
    defaults = {"balls": "1" if quick else "1,3", "regimes": "100" if quick else "100,25,10,2",
                "updates": 150 if quick else 600, "train_trials": 12 if quick else 100,
                "validation_trials": 4 if quick else 20, "test_trials": 4 if quick else 20,
                "trial_seconds": 4.0 if quick else 10.0, "eval_every": 50 if quick else 100}
    for name, value in defaults.items():
        if getattr(options, name) is None:
            setattr(options, name, value)
    for name in ("updates", "batch", "channels", "train_trials", "validation_trials", "validation_samples", "test_trials", "eval_every",
                 "threads"):
        value = getattr(options, name)
        if value < 1:
            parser.error(f"--{name.replace('_', '-')} must be a positive integer, got {value}")
    for name in ("lr", "frame_weight"):
        value = getattr(options, name)
        if not value > 0:
            parser.error(f"--{name.replace('_', '-')} must be positive, got {value}")
    shortest = (INPUT_FRAMES + HORIZON) * balls_data.FRAME_SECONDS
    if not options.trial_seconds >= shortest:
        parser.error(f"--trial-seconds must be at least {shortest:.1f} (3 input frames and 10 ahead), "
                     f"got {options.trial_seconds}")
    try:
        options.balls = [int(word) for word in options.balls.split(",")]
    except ValueError:
        parser.error(f"--balls must be ball counts separated by commas, got {options.balls!r}")
    if not options.balls or any(count not in (1, 2, 3) for count in options.balls):
        parser.error(f"--balls: each count must be 1, 2 or 3, got {','.join(map(str, options.balls))}")
    try:
        options.regimes = [float(word) for word in options.regimes.split(",")]
    except ValueError:
        parser.error(f"--regimes must be percentages separated by commas, got {options.regimes!r}")
    if not options.regimes or any(not 0 < value <= 100 for value in options.regimes):
        parser.error(f"--regimes: each percentage must be in (0, 100], got {','.join(map(str, options.regimes))}")
    return options


def main(argv=None):
    options = parse(argv)
    torch.set_num_threads(1)  # the networks are small; the engine and camera take the threads
    frames = round(options.trial_seconds / balls_data.FRAME_SECONDS) + 1
    results = {"options": {k: str(v) for k, v in vars(options).items()}, "datasets": {}}
    begin = time.perf_counter()
    for balls in options.balls:
        name = f"{balls} ball" + ("s" if balls > 1 else "")
        world = balls_data.make_world(balls)
        start = time.perf_counter()
        train_data = balls_data.generate(world, options.train_trials, frames, seed=1000 * options.seed + balls,
                                         threads=options.threads)
        sets = {}
        for part, trials, offset in (("validation", options.validation_trials, 100),
                                     ("test", options.test_trials, 200)):
            held = balls_data.generate(world, trials, frames, seed=1000 * options.seed + offset + balls,
                                       threads=options.threads)
            chosen = balls_data.windows(held)
            if part == "validation" and len(chosen) > options.validation_samples:  # evenly spread, fixed
                chosen = chosen[np.linspace(0, len(chosen) - 1, options.validation_samples).round().astype(int)]
            sets[part] = balls_data.batch(held, chosen)
        generation = time.perf_counter() - start
        entry = {"train_windows": len(balls_data.windows(train_data)), "validation_windows": len(sets["validation"][0]),
                 "test_windows": len(sets["test"][0]), "generation_seconds": generation,
                 "trivial_validation": trivial_losses(*sets["validation"][:2]),
                 "trivial_test": trivial_losses(*sets["test"][:2]), "runs": {}}
        print(f"{name}: {options.train_trials} training trials of {options.trial_seconds:g} s "
              f"({entry['train_windows']} windows), {entry['validation_windows']} validation and "
              f"{entry['test_windows']} test windows, made and filmed in {generation:.1f} s; validation MSE of "
              f"the last input frame {entry['trivial_validation']['last_frame']:.5f}, of the empty box "
              f"{entry['trivial_validation']['empty_box']:.5f}", flush=True)
        models = [("engine", value / 100, f"engine, {value:g} % labelled") for value in options.regimes]
        models.append(("mlp", 1.0, "MLP, labelled only"))
        for kind, fraction, label in models:
            curve, encoder, physics, decoder = train(kind, fraction, train_data, sets["validation"], options, world,
                                                     seed=options.seed)
            test = frame_loss(predict(encoder, physics, decoder, sets["test"][0]), sets["test"][1]).mean().item()
            with torch.no_grad():
                encoded = torch.cat([encoder(torch.from_numpy(sets["test"][0][k:k + 256]))
                                     for k in range(0, len(sets["test"][0]), 256)])
            position_error = (encoded[..., :2].double() - torch.from_numpy(sets["test"][2][..., :2])).norm(dim=-1)
            run = {"curve": curve, "validation": curve[-1][3], "test": test, "seconds": curve[-1][4],
                   "labelled_used": curve[-1][1], "encoder_position_error": position_error.mean().item()}
            entry["runs"][label] = run
            print(f"  {label}: validation frame MSE {curve[0][3]:.5f} → {run['validation']:.5f}, test "
                  f"{test:.5f}, encoder position error {run['encoder_position_error']:.3f} m, "
                  f"{curve[-1][1]} labelled of {curve[-1][2]} samples used, {run['seconds']:.0f} s", flush=True)
            if options.out is not None and kind == "engine" and fraction == options.regimes[0] / 100:
                options.out.mkdir(parents=True, exist_ok=True)
                plot_predictions(world, encoder, physics, decoder, sets["test"][0], sets["test"][1],
                                 options.out / f"predictions_{balls}.png")
        results["datasets"][name] = entry
    results["seconds"] = time.perf_counter() - begin
    if options.out is not None:
        options.out.mkdir(parents=True, exist_ok=True)
        with open(options.out / "results.json", "w") as out:
            json.dump(results, out)
        plot(results, options.out / "sample_efficiency.png")
    print(f"done in {results['seconds']:.0f} s")
    return results


if __name__ == "__main__":
    main()
