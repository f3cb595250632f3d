"""The bouncing-balls world and dataset of `visual-prediction` (issue 20's second experiment,
de Avila Belbute-Peres et al. 2018 §4.2), made and filmed by the engine.

Owns the scene (N equal balls in a walled square box, seen from above by the differentiable
camera), the placement of balls into a world state, the random trials and the windows
(3 input frames → the frame 10 frames later, with the true states as labels) that
visual_prediction.py trains on.

The box: K balls of radius 0.2 m and mass 1 kg at z = 0 inside four frictionless walls (the
world's planes x = ±1 m, y = ±1 m), no gravity, friction 0 and restitution 1 everywhere (the
paper's billiard: Fragkiadaki et al. 2015's balls move in a plane and bounce elastically).
No force has a component along z and every contact normal lies in the plane z = 0, so the balls
stay in it. The world steps 0.05 s (two steps per frame of 0.1 s); a bounce happens at its time
of impact inside the step (docs/simulation.md), so a lone ball's path is exact.
The camera "top" looks straight down from 5 m at 32 × 32 pixels (the box's 2 m span fills the
image at z = 0, 16 px/m; a ball is about 7 px across), black background and walls, each ball
in its own pure colour (red, green, blue): the paper's colour filters become picking a channel.
"""

import json
import math

import numpy as np
import torch

import diffphys as dp

HALF_WIDTH = 1.0       # m: the walls at x = ±1, y = ±1
RADIUS = 0.2           # m
FREE_HALF_WIDTH = HALF_WIDTH - RADIUS  # m: where a ball's centre can be
STEP = 0.05            # s: the world's step
STEPS_PER_FRAME = 2    # a frame every 0.1 s
FRAME_SECONDS = STEP * STEPS_PER_FRAME
INPUT_FRAMES = 3       # the model sees frames t − 2, t − 1, t …
HORIZON = 10           # … and predicts frame t + 10 (1 s later)
RESOLUTION = 32        # pixels, square
CAMERA = "top"
CAMERA_HEIGHT = 5.0    # m above the plane of the balls
COLOURS = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))
SPEED_RANGE = (0.5, 1.5)  # m/s: initial speeds, uniform; directions uniform
BODY_SIZE = 13            # numbers per body in the world state: p, q (w, x, y, z), v, ω


def scene_json(balls):
    """The box with `balls` (1 to 3) balls as a JSON scene (they start at rest in a row; each
    trial places them)."""
    if balls not in (1, 2, 3):
        raise ValueError(f"balls must be 1, 2 or 3 (one colour each), got {balls}")
    field_of_view = 2 * math.degrees(math.atan(HALF_WIDTH / CAMERA_HEIGHT))
    walls = [{"normal": normal, "offset": -HALF_WIDTH}
             for normal in ([1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0])]
    scene = {
        "name": f"bouncing_balls_{balls}",
        "description": "Equal balls in a frictionless walled box, no gravity, restitution 1, filmed from above "
                       "(visual-prediction, issue 20; python/examples/bouncing_balls.py).",
        "dt": STEP,
        "gravity": [0, 0, 0],
        "world": {"friction": 0.0, "restitution": 1.0},
        "ground": walls,
        "bodies": [{"name": f"ball{k}", "position": [0.5 * (k - 1), 0, 0], "mass": 1.0, "friction": 0.0,
                    "restitution": 1.0, "shapes": [{"type": "sphere", "radius": RADIUS}]} for k in range(balls)],
        "cameras": [{"name": CAMERA, "position": [0, 0, CAMERA_HEIGHT], "look_at": [0, 0, 0], "up": [0, 1, 0],
                     "fov_deg": field_of_view, "width": RESOLUTION, "height": RESOLUTION, "far_depth": 30,
                     "background": [0, 0, 0],
                     "colours": {**{name: [0, 0, 0] for name in ("ground", "ground1", "ground2", "ground3")}, **{f"ball{k}": list(COLOURS[k]) for k in range(balls)}}}],
    }
    return json.dumps(scene)


def make_world(balls):
    return dp.parse_world(scene_json(balls), f"bouncing_balls_{balls}", ".")


def ball_count(world):
    return world.layout.state_size // BODY_SIZE - 1


def place(base_state, planar):
    """World states (…, state_size) from per-ball planar states (…, K, 4) = (x, y, vx, vy):
    each ball at (x, y, 0), unrotated, moving at (vx, vy, 0), not spinning. Works on NumPy
    arrays and on torch tensors (differentiably), `base_state` the world's initial state."""
    balls = planar.shape[-2]
    lead = planar.shape[:-2]
    if torch.is_tensor(planar):
        zeros = planar.new_zeros(lead + (balls, 1))
        quaternion = planar.new_tensor([1.0, 0.0, 0.0, 0.0]).expand(lead + (balls, 4))
        bodies = torch.cat([planar[..., 0:2], zeros, quaternion, planar[..., 2:4], zeros,
                                          planar.new_zeros(lead + (balls, 3))], dim=-1)
        world_row = base_state[:BODY_SIZE].to(planar.dtype).expand(lead + (BODY_SIZE,))
        return torch.cat([world_row, bodies.reshape(lead + (balls * BODY_SIZE,))], dim=-1)
    state = np.broadcast_to(np.asarray(base_state, dtype=float), lead + (base_state.shape[-1],)).copy()
    bodies = state[..., BODY_SIZE:].reshape(lead + (balls, BODY_SIZE))
    bodies[..., 0:2], bodies[..., 2] = planar[..., 0:2], 0.0
    bodies[..., 3:7] = (1.0, 0.0, 0.0, 0.0)
    bodies[..., 7:9], bodies[..., 9:13] = planar[..., 2:4], 0.0
    state[..., BODY_SIZE:] = bodies.reshape(lead + (balls * BODY_SIZE,))
    return state


def planar_states(states):
    """(…, K, 4) = (x, y, vx, vy) per ball from world states (…, state_size)."""
    bodies = states[..., BODY_SIZE:].reshape(states.shape[:-1] + (-1, BODY_SIZE))
    if torch.is_tensor(bodies):
        return torch.cat([bodies[..., 0:2], bodies[..., 7:9]], dim=-1)
    return np.concatenate([bodies[..., 0:2], bodies[..., 7:9]], axis=-1)


def random_start(rng, balls):
    """(K, 4): centres uniform in the free square, rejected until no two balls are closer than
    2.5 radii (no initial overlap), speeds uniform in SPEED_RANGE, directions uniform."""
    while True:
        centres = rng.uniform(-FREE_HALF_WIDTH, FREE_HALF_WIDTH, size=(balls, 2))
        gaps = [np.linalg.norm(centres[i] - centres[j]) for i in range(balls) for j in range(i)]
        if all(gap > 2.5 * RADIUS for gap in gaps):
            break
    speed = rng.uniform(*SPEED_RANGE, size=balls)
    heading = rng.uniform(0.0, 2 * math.pi, size=balls)
    return np.column_stack([centres, speed * np.cos(heading), speed * np.sin(heading)])


def simulate(world, start, frames):
    """The world states of `frames` frames (one every FRAME_SECONDS) from planar start (K, 4):
    (frames, state_size), the engine's WorldRollout."""
    rollout = dp.WorldRollout(world)
    steps = (frames - 1) * STEPS_PER_FRAME
    rollout.run(place(world.initial_state(), start), np.zeros((steps, world.layout.control_count)))
    if not rollout.converged():
        raise RuntimeError(f"bouncing balls: a step's contact solve did not converge from start {start.tolist()}")
    return rollout.states()[::STEPS_PER_FRAME]


def generate(world, trials, frames, seed, threads=1):
    """`trials` random trials of `frames` frames: a dict with "frames" (trials, frames, 3, H, W)
    float32 (the camera's colour, channels first) and "states" (trials, frames, K, 4) float64."""
    rng = np.random.default_rng(seed)
    camera = dp.WorldCamera(world, CAMERA, threads=threads)
    balls = ball_count(world)
    images = np.empty((trials, frames, 3, RESOLUTION, RESOLUTION), dtype=np.float32)
    labels = np.empty((trials, frames, balls, 4))
    for trial in range(trials):
        states = simulate(world, random_start(rng, balls), frames)
        colour, _ = camera.render(states)
        images[trial] = np.transpose(colour, (0, 3, 1, 2))
        labels[trial] = planar_states(states)
    return {"frames": images, "states": labels}


def windows(data):
    """Every (trial, t) whose frames t − 2 … t and t + HORIZON exist: an (n, 2) integer array."""
    trials, frames = data["states"].shape[:2]
    last = np.arange(INPUT_FRAMES - 1, frames - HORIZON)
    return np.stack(np.meshgrid(np.arange(trials), last, indexing="ij"), axis=-1).reshape(-1, 2)


def batch(data, chosen):
    """The samples at `chosen` (n, 2) windows: inputs (n, 3, 3, H, W) (frames t − 2, t − 1, t),
    target frames (n, 3, H, W), true states at t and at t + HORIZON (n, K, 4)."""
    trial, last = chosen[:, 0], chosen[:, 1]
    seen = np.stack([data["frames"][trial, last - lag] for lag in range(INPUT_FRAMES - 1, -1, -1)], axis=1)
    return (seen, data["frames"][trial, last + HORIZON], data["states"][trial, last],
            data["states"][trial, last + HORIZON])
