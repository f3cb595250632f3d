#!/usr/bin/env python3
"""pendulum-cart-pixels: a convolutional controller that sees only camera frames learns to swing
up the pendulum-cart (issue 20's first experiment, Degrave et al. 2019 §3.4), trained by
backpropagation through the CNN, the camera and the physics.

Closed loop, every control period (`--every` world steps of 0.01 s, default 5: 20 Hz): the
scene's camera "side" (examples/scenes/pendulum_cart.json) renders the 288 × 96 frame of x_t
(diffphys.torch.render); in torch the sky's colour is subtracted and the frame average-pooled
`--downsample`× (default 2: 144 × 48); the CNN reads it with the two previous ones (the paper's
current frame and two past frames, from which velocity can be told), given as the current frame
and its two backward differences ×10 — a fixed linear map of the same 9 channels, so that
motion of a few pixels weighs like the picture. Its output is the cart force
u_t = 15 N · tanh(·) (the motor's limit is 20 N), held for the period while the world steps
(diffphys.torch.world_rollout of `--every` steps from x_t: the world step with autograd). The
episode's loss is the mean over all world steps of the distance of the pole's tip to the
upright target (0.53 m above the rail's centre) plus 0.01 s²/m × the tip's squared speed (the
paper's "distance from the end of the pendulum to the desired point" and speed regulariser);
its gradient flows back through the CNN, every frame and every step. Adam (step 3e-4), one
episode of `--seconds` (3 s, the paper's) per update from a random start (cart at
x ∈ [−0.3, 0.3] m, the pole at rest anywhere on the circle: `--start-spread` π rad about
hanging), the gradient's norm clipped to 1; in training the gradient through each control
step's state is scaled by `--gradient-decay` 0.95 (a soft truncation of backpropagation through
time to ~20 control steps, 1 s; the forward pass is unchanged). The evaluation starts hanging
(0.2 rad off), the paper's swing-up.
Everything is float64 and seeded: a run is deterministic (for any renderer thread count).

    PYTHONPATH=build/python /usr/bin/python3 python/examples/pendulum_cart_pixels_policy.py \
        [--quick] [--episodes N] [--minutes M] [--out DIR]

`--quick` (CI) checks the closed loop's gradient against central differences of a 0.5 s
episode's loss — along the whole gradient's direction, w.r.t. the force bias and one weight of
the first convolution —, then trains 20 episodes of 1 s (exact BPTT, step 1e-3), all from one
start (0.6 rad), whose loss must fall. `--out DIR` writes log.json (losses, evaluation curve, wall times) and policy.pt
(also at every evaluation, as checkpoints), and the final evaluation episode's tip heights
(tip_height.csv) and camera frames at 288 × 96 (frames/*.png, replay.gif, filmstrip.png);
`--replay --load DIR/policy.pt --out DIR2` writes the latter again for a saved policy.
"""

import argparse
import json
import math
import pathlib
import time

import torch
from torch import nn

import diffphys as dp
from diffphys import torch as dpt

SCENE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "scenes" / "pendulum_cart.json"
CAMERA = "side"
MAX_FORCE = 15.0        # N; below the motor's 20 N clamp, so that the force stays smooth
HINGE_TO_CENTRE = 0.28  # m: the pole's centre hangs this far from the hinge (the scene's pose)
HINGE_TO_TIP = 0.53     # m: the end of the capsule's segment, away from the hinge
RAIL_HEIGHT = 1.0       # m: the hinge's height (the cart's centre)
TARGET = (0.0, 0.0, RAIL_HEIGHT + HINGE_TO_TIP)  # the tip of the upright pole above the rail's centre
SPEED_WEIGHT = 0.01     # s²/m: the speed penalty per (m/s)² of tip speed
DIFFERENCE_GAIN = 10.0  # the frame differences' weight in the CNN's input


class Controller(nn.Module):
    """Three stacked RGB frames (9, H, W) → the cart force, 15 N · tanh(·)."""

    def __init__(self, height, width, channels=16, head_gain=1.0):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(9, channels, 5, stride=2, padding=2), nn.ReLU(),
            nn.Conv2d(channels, 2 * channels, 3, stride=2, padding=1), nn.ReLU(),
            nn.Conv2d(2 * channels, 2 * channels, 3, stride=2, padding=1), nn.ReLU(),
            nn.Flatten())
        with torch.no_grad():
            flat = self.features(torch.zeros(1, 9, height, width)).shape[1]
        self.head = nn.Sequential(nn.Linear(flat, 64), nn.Tanh(), nn.Linear(64, 1))
        with torch.no_grad():  # no force on average at the start; head_gain scales its spread
            self.head[2].weight.mul_(head_gain)
            self.head[2].bias.zero_()

    def forward(self, frames):
        return MAX_FORCE * torch.tanh(self.head(self.features(frames)))


def start_state(world, cart_x, angle):
    """The world state (39) with the cart at cart_x and the pole `angle` rad from hanging (about
    the hinge's axis y), at rest."""
    x = torch.from_numpy(world.initial_state()).clone()
    x[13:16] = torch.tensor([cart_x, 0.0, RAIL_HEIGHT])
    x[16:20] = torch.tensor([1.0, 0.0, 0.0, 0.0])
    x[26:29] = torch.tensor([cart_x - HINGE_TO_CENTRE * math.sin(angle), 0.0,
                             RAIL_HEIGHT - HINGE_TO_CENTRE * math.cos(angle)])
    x[29:33] = torch.tensor([math.cos(angle / 2), 0.0, math.sin(angle / 2), 0.0])
    x[[*range(20, 26), *range(33, 39)]] = 0.0
    return x


def tips(states):
    """The pole tip's world position (…, 3) from states (…, 39): hinge + (0.53/0.28)(pole − hinge)."""
    hinge, centre = states[..., 13:16], states[..., 26:29]
    return hinge + (HINGE_TO_TIP / HINGE_TO_CENTRE) * (centre - hinge)


def observe(world, x, theta, downsample, threads, background):
    """The camera frame of x, average-pooled, minus the sky's colour (so that the input is zero
    but where the cart, pole and ground are): (3, H/d, W/d)."""
    colour, _ = dpt.render(world, x, theta, CAMERA, threads=threads)
    image = (colour - background).permute(2, 0, 1).unsqueeze(0)
    if downsample > 1:
        image = nn.functional.avg_pool2d(image, downsample)
    return image[0]


def episode(world, theta, policy, x0, control_steps, every, downsample, threads, decay=1.0):
    """Runs the closed loop from x0; returns the loss (a scalar tensor), the states
    (control_steps · every + 1, 39) and the forces (control_steps). `decay` < 1 scales the
    gradient that flows back through each control step's state (the forward pass unchanged):
    a soft truncation of backpropagation through time, whose horizon is 1/(1 − decay) steps."""
    x, seen, states, forces = x0, [], [x0.unsqueeze(0)], []
    background = torch.tensor(world.camera_appearance(CAMERA).background, dtype=torch.float64)
    for _ in range(control_steps):
        image = observe(world, x, theta, downsample, threads, background)
        seen = [image] + (seen or [image, image])[:2]  # the first frame stands in for the missing past
        # The three frames as the current one and its two backward differences (a fixed linear map
        # of the same pixels, scaled so that a few pixels' motion weighs like the picture).
        stacked = torch.cat([seen[0], DIFFERENCE_GAIN * (seen[0] - seen[1]), DIFFERENCE_GAIN * (seen[1] - seen[2])])
        force = policy(stacked.unsqueeze(0)).reshape(1, 1)
        rolled = dpt.world_rollout(world, x, force.repeat(every, 1), theta)
        states.append(rolled[1:])
        forces.append(force.reshape(()))
        x = rolled[-1]
        if decay != 1.0:  # the same value; d/dx of the next steps reaches this one × decay
            x = decay * x + (1.0 - decay) * x.detach()
    states = torch.cat(states)
    tip = tips(states)
    distance = (tip[1:] - torch.tensor(TARGET, dtype=torch.float64)).norm(dim=-1)
    speed = (tip[1:] - tip[:-1]) / world.dt()
    loss = (distance + SPEED_WEIGHT * (speed ** 2).sum(dim=-1)).mean()
    return loss, states, torch.stack(forces)


def unit(tensor, index):
    """A tensor shaped as `tensor`, one at `index`, zero elsewhere."""
    direction = torch.zeros_like(tensor)
    direction[index] = 1.0
    return direction


def check_gradient(world, theta, policy, x0, control_steps, every, downsample, threads):
    """Backward against central differences of the episode's loss: along the whole gradient's
    own direction (every weight at once), and w.r.t. the force bias and one weight of the first
    convolution. Returns [(what, analytic, numeric)]."""
    def loss_now():
        return episode(world, theta, policy, x0, control_steps, every, downsample, threads)[0].item()

    policy.zero_grad()
    episode(world, theta, policy, x0, control_steps, every, downsample, threads)[0].backward()
    parameters = list(policy.parameters())
    gradient = [p.grad.detach().clone() for p in parameters]
    norm = torch.sqrt(sum((g ** 2).sum() for g in gradient)).item()
    rows = []
    # ε: the truncation error (ε²) far below the loss's rounding (1e-16 / ε) for each.
    for what, epsilon, moves in (
            ("the gradient's direction", 1e-6, [(p, g / norm) for p, g in zip(parameters, gradient)]),
            ("the force bias", 1e-6, [(policy.head[2].bias, unit(policy.head[2].bias, (0,)))]),
            ("conv1 weight [3, 4, 2, 2]", 1e-6, [(policy.features[0].weight,
                                                  unit(policy.features[0].weight, (3, 4, 2, 2)))])):
        analytic = sum((g * d).sum() for (p, d), g in zip(moves, [p.grad for p, _ in moves])).item()
        values = []
        with torch.no_grad():
            for sign in (1, -1):
                for p, d in moves:
                    p.add_(sign * epsilon * d)
                values.append(loss_now())
                for p, d in moves:
                    p.sub_(sign * epsilon * d)
        rows.append((what, analytic, (values[0] - values[1]) / (2 * epsilon)))
    policy.zero_grad()
    return rows


def write_replay(directory, world, theta, states, heights, forces, seconds_per_frame, threads):
    """The camera's full 288 × 96 frames of `states` (one per control step) as frames/NNN.png,
    replay.gif and filmstrip.png (one frame every 0.5 s, top to bottom), and tip_height.csv."""
    from PIL import Image  # only for the files; training does not need it
    with torch.no_grad():
        colour, _ = dpt.render(world, states, theta, CAMERA, threads=threads)
    (directory / "frames").mkdir(parents=True, exist_ok=True)
    pictures = [Image.fromarray((frame.clamp(0, 1).numpy() * 255).round().astype("uint8")) for frame in colour]
    for k, picture in enumerate(pictures):
        picture.save(directory / "frames" / f"{k:03d}.png")
    pictures[0].save(directory / "replay.gif", save_all=True, append_images=pictures[1:],
                     duration=round(1000 * seconds_per_frame), loop=0)
    strip = pictures[::max(1, round(0.5 / seconds_per_frame))]
    sheet = Image.new("RGB", (strip[0].width, strip[0].height * len(strip)))
    for k, picture in enumerate(strip):
        sheet.paste(picture, (0, k * picture.height))
    sheet.save(directory / "filmstrip.png")
    with open(directory / "tip_height.csv", "w") as out:
        out.write("time_s,tip_height_above_hinge_m,force_N\n")
        for k, (height, force) in enumerate(zip(heights, forces)):
            out.write(f"{k * seconds_per_frame:.3f},{height:.4f},{force:.4f}\n")


def save(directory, policy, log, options, episodes, seconds):
    """policy.pt and log.json (the options, the curves, the episodes and wall time so far)."""
    directory.mkdir(parents=True, exist_ok=True)
    torch.save(policy.state_dict(), directory / "policy.pt")
    with open(directory / "log.json", "w") as out:
        json.dump({"options": {k: str(v) for k, v in vars(options).items()}, **log, "episodes": episodes,
                   "seconds": seconds}, out)


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="gradient check and 20 short episodes (CI)")
    parser.add_argument("--episodes", type=int, default=None, help="training episodes (default 3000, quick 20)")
    parser.add_argument("--minutes", type=float, default=None, help="stop training after this wall time")
    parser.add_argument("--seconds", type=float, default=None, help="episode length in model seconds (3, quick 1)")
    parser.add_argument("--every", type=int, default=5, help="world steps (0.01 s) per control step")
    parser.add_argument("--downsample", type=int, default=2, help="average-pooling of the 288 × 96 frames")
    parser.add_argument("--channels", type=int, default=16, help="channels of the first convolution")
    parser.add_argument("--head-gain", type=float, default=1.0, help="scale of the output layer's initial weights")
    parser.add_argument("--gradient-decay", type=float, default=None,
                        help="factor on the gradient through each control step's state in training (1: exact BPTT; "
                             "default 0.95, quick 1)")
    parser.add_argument("--lr", type=float, default=None, help="Adam's step size (default 3e-4, quick 1e-3)")
    parser.add_argument("--start-angle", type=float, default=None,
                        help="every episode from this angle from hanging (rad; quick: 0.6) instead of random starts")
    parser.add_argument("--start-spread", type=float, default=math.pi,
                        help="random starts within ± this angle of hanging (rad; π: anywhere on the circle)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2, help="renderer threads")
    parser.add_argument("--eval-every", type=int, default=20, help="episodes between evaluations")
    parser.add_argument("--eval-seconds", type=float, default=6.0, help="length of the final evaluation")
    parser.add_argument("--load", type=pathlib.Path, default=None, help="start from this policy.pt")
    parser.add_argument("--replay", action="store_true", help="no training: evaluate --load's policy and write --out")
    parser.add_argument("--out", type=pathlib.Path, default=None, help="directory for the log, policy and replay")
    options = parser.parse_args(argv)
    for name in ("episodes", "every", "downsample", "channels", "threads", "eval_every"):
        value = getattr(options, name)
        if value is not None and value < 1:
            parser.error(f"--{name.replace('_', '-')} must be a positive integer, got {value}")
    for name in ("minutes", "seconds", "lr", "eval_seconds", "head_gain", "start_spread"):
        value = getattr(options, name)
        if value is not None and not value > 0:
            parser.error(f"--{name.replace('_', '-')} must be positive, got {value}")
    if options.gradient_decay is None:  # quick: exact BPTT and larger steps, to see one episode's loss fall
        options.gradient_decay = 1.0 if options.quick else 0.95
    if options.lr is None:
        options.lr = 1e-3 if options.quick else 3e-4
    if not 0 < options.gradient_decay <= 1:
        parser.error(f"--gradient-decay must be in (0, 1], got {options.gradient_decay}")
    if options.replay and (options.load is None or options.out is None):
        parser.error("--replay needs --load POLICY and --out DIR")
    if options.load is not None and not options.load.is_file():
        parser.error(f"--load: no such file {options.load}")
    if 96 % options.downsample or 288 % options.downsample:
        parser.error(f"--downsample must divide the frame's 288 × 96 pixels, got {options.downsample}")
    return options


def main(argv=None):
    options = parse(argv)
    quick = options.quick
    episodes = options.episodes or (20 if quick else 3000)
    seconds = options.seconds or (1.0 if quick else 3.0)
    if quick and options.start_angle is None:
        options.start_angle = 0.6  # one start, so that the loss of the same episode can be watched falling
    torch.manual_seed(options.seed)
    torch.set_num_threads(1)  # the renderer takes the cores; the small CNN does not need them
    world = dp.load_world(SCENE)
    theta = torch.from_numpy(world.default_params())
    period = options.every * world.dt()
    control_steps = max(1, round(seconds / period))
    camera = world.cameras[0]
    height, width = camera.height // options.downsample, camera.width // options.downsample
    policy = Controller(height, width, options.channels, options.head_gain).double()
    if options.load is not None:
        policy.load_state_dict(torch.load(options.load))
    parameters = sum(p.numel() for p in policy.parameters())
    sizes = (options.every, options.downsample, options.threads)
    print(f"pendulum-cart-pixels: {camera.width} × {camera.height} frames pooled to {width} × {height}, "
          f"CNN of {parameters} parameters, control every {period:.2f} s, episodes of {control_steps} control "
          f"steps ({control_steps * period:.1f} s)")

    result = {"parameters": parameters, "control_period": period, "control_steps": control_steps}
    if quick:
        # A 0.5 s episode from a tilted start, so that the frames change and every path is exercised.
        rows = check_gradient(world, theta, policy, start_state(world, 0.1, 0.6), round(0.5 / period), *sizes)
        for name, analytic, numeric in rows:
            print(f"d loss along {name}: backward {analytic:.10e}, central difference {numeric:.10e}")
        result["gradient_check"] = rows

    generator = torch.Generator().manual_seed(options.seed)
    evaluation_start = start_state(world, 0.0, 0.2)

    def evaluate():
        with torch.no_grad():
            return episode(world, theta, policy, evaluation_start, control_steps, *sizes)[0].item()

    optimiser = torch.optim.Adam(policy.parameters(), lr=options.lr)
    log = {"episode_loss": [], "evaluation": [], "gradient_norm": [], "mean_force": [], "skipped": []}
    first_evaluation = evaluate()
    log["evaluation"].append((0, 0.0, first_evaluation))
    begin = time.perf_counter()
    trained = 0
    for index in range(0 if options.replay else episodes):
        if options.minutes is not None and time.perf_counter() - begin > 60 * options.minutes:
            break
        draw = torch.rand(2, generator=generator, dtype=torch.float64)
        x0 = (start_state(world, 0.6 * (draw[0].item() - 0.5), 2 * options.start_spread * (draw[1].item() - 0.5))
              if options.start_angle is None else start_state(world, 0.0, options.start_angle))
        optimiser.zero_grad()
        loss, _, forces = episode(world, theta, policy, x0, control_steps, *sizes, decay=options.gradient_decay)
        loss.backward()
        log["mean_force"].append(forces.abs().mean().item())
        norm = nn.utils.clip_grad_norm_(policy.parameters(), 1.0).item()
        if math.isfinite(norm):
            optimiser.step()
        else:  # counted and reported, not applied: one bad episode must not end a long run
            log["skipped"].append(index)
        trained = index + 1
        log["episode_loss"].append(loss.item())
        log["gradient_norm"].append(norm)
        if trained % options.eval_every == 0 or trained == episodes:
            wall = time.perf_counter() - begin
            log["evaluation"].append((trained, wall, evaluate()))
            recent = log["episode_loss"][-options.eval_every:]
            print(f"episode {trained}: loss {loss.item():.4f} (mean of the last {len(recent)}: "
                  f"{sum(recent) / len(recent):.4f}), evaluation {log['evaluation'][-1][2]:.4f}, "
                  f"mean |u| {log['mean_force'][-1]:.2f} N, gradient norm {norm:.2e}, {wall:.0f} s", flush=True)
            if options.out is not None:  # a checkpoint: a long run stopped early keeps its curve and policy
                save(options.out, policy, log, options, trained, wall)
    wall = time.perf_counter() - begin
    if log["evaluation"][-1][0] != trained:
        log["evaluation"].append((trained, wall, evaluate()))
    last_evaluation = log["evaluation"][-1][2]
    print(f"{trained} episodes of {control_steps * period:.1f} s in {wall:.1f} s ({wall / max(trained, 1):.2f} s "
          f"each; {len(log['skipped'])} updates skipped, non-finite); evaluation loss {first_evaluation:.4f} → "
          f"{last_evaluation:.4f}")
    result.update(episodes=trained, seconds=wall, evaluation_before=first_evaluation,
                  evaluation_after=last_evaluation, episode_losses=log["episode_loss"],
                  gradient_norms=log["gradient_norm"])

    # The learned policy from the evaluation start for --eval-seconds: tip heights and frames.
    with torch.no_grad():
        steps = max(1, round(options.eval_seconds / period))
        _, states, forces = episode(world, theta, policy, evaluation_start, steps, *sizes)
    heights = (tips(states[::options.every]) - states[::options.every, 13:16])[:, 2]
    upright = (heights > 0.9 * HINGE_TO_TIP).float()
    result.update(tip_heights=heights.tolist(), upright_fraction=upright.mean().item())
    print("tip height above the hinge (m) every 0.5 s: "
          + " ".join(f"{h:+.2f}" for h in heights[::max(1, round(0.5 / period))].tolist()))
    if options.out is not None:
        log["tip_heights"] = heights.tolist()
        if not options.replay:
            save(options.out, policy, log, options, trained, wall)
        write_replay(options.out, world, theta, states[::options.every], heights.tolist(),
                     forces.tolist() + [float("nan")], period, options.threads)
    return result


if __name__ == "__main__":
    main()
