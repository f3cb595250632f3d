"""Smoke runs of the Python examples with --quick, each asserting progress that a broken
gradient or binding could not fake: the identified parameters approach the true ones, the
throw reaches the basket, the policy's cost falls, CMA-ES solves the ball throw, a gradient
step of a pixel loss through the pendulum-cart's camera and physics moves the push toward the
reference one, and the pixel controller's closed-loop gradient matches central differences and
its loss falls."""

import math

import pytest

import ball_throw_cmaes
import pendulum_policy
import sysid
import throw


def test_sysid_recovers_mass_and_friction():
    result = sysid.main(["--quick"])
    assert result["final_loss"] < 1e-3 * result["first_loss"]
    assert result["mass_error"] < 0.03 and result["friction_error"] < 0.05  # from 50% and 150% off


def test_throw_reaches_the_basket():
    result = throw.main(["--quick"])
    assert result["converged"] and result["simulated_miss"] < 0.15  # from 2.9 m at the start


def test_pendulum_policy_cost_falls():
    result = pendulum_policy.main(["--quick"])
    assert result["cost_after"] < 0.8 * result["cost_before"]


def test_ball_throw_cmaes_quick_solves():
    result = ball_throw_cmaes.main(["--quick"])
    assert result["solved"] and result["position_error"] < 0.1 and result["linear_speed"] < 0.1
    assert result["evaluations"] > 0 and result["seconds"] > 0


def test_arm_reach_torques_in_joint_coordinates():
    import arm_reach_torques
    result = arm_reach_torques.main(["--quick"])
    assert result["first_miss"] > 1.5 and result["simulated_miss"] < 0.1  # 1.9 m → under 10 cm in 20 L-BFGS steps
    assert abs(result["simulated_miss"] - result["miss"]) < 1e-9  # the plain simulation ends where the rollout did


def test_pendulum_cart_pixels_gradient_step():
    import pendulum_cart_pixels
    result = pendulum_cart_pixels.main(["--quick"])
    assert (result["frames"], result["width"], result["height"]) == (21, 288, 96)
    # The backward pass along its own direction against a central difference of the whole pixel
    # loss (2e-11 relative when written; the difference's own rounding is ~1e-9 of it).
    assert abs(result["directional_numeric"] - result["directional_backward"]) < 1e-6 * result["directional_backward"]
    assert result["loss_after"] < 0.5 * result["loss_before"]  # 1.9e-4 → 3.7e-5 when written
    assert result["distance_after"] < result["distance_before"] - 1.0  # toward the reference push (12.6 → 11.3 N)


def test_pendulum_cart_pixels_policy_closed_loop(tmp_path):
    import pendulum_cart_pixels_policy
    result = pendulum_cart_pixels_policy.main(["--quick", "--out", str(tmp_path / "run")])
    # The closed loop (CNN → force → physics → camera → CNN) against central differences of a
    # 0.5 s episode's loss: along the whole gradient (1.8e-10 relative when written), the force
    # bias (below 1e-10) and one first-layer weight (2.3e-7), each with ε = 1e-6.
    for what, analytic, numeric in result["gradient_check"]:
        assert abs(numeric - analytic) < 1e-5 * abs(analytic) and abs(analytic) > 1e-6, what
    assert all(math.isfinite(n) and n > 0 for n in result["gradient_norms"])
    losses = result["episode_losses"]
    assert result["episodes"] == 20 and len(losses) == 20
    assert losses[-1] < losses[0] - 0.02  # the same 1 s episode, 1.048 → 1.012 when written
    # The saved policy replays the same evaluation (the same tip heights to the bit), and the
    # replay's frames are the camera's 288 × 96.
    replay = pendulum_cart_pixels_policy.main(["--quick", "--replay", "--load", str(tmp_path / "run" / "policy.pt"),
                                               "--out", str(tmp_path / "replay")])
    assert replay["episodes"] == 0 and replay["tip_heights"] == result["tip_heights"]
    from PIL import Image
    with Image.open(tmp_path / "replay" / "frames" / "000.png") as frame:
        assert frame.size == (288, 96)
    assert (tmp_path / "replay" / "replay.gif").is_file() and (tmp_path / "run" / "tip_height.csv").is_file()
    import plot_pendulum_cart_pixels
    plot_pendulum_cart_pixels.main([str(tmp_path / "run"), str(tmp_path / "curve.png")])
    assert (tmp_path / "curve.png").stat().st_size > 1000


def test_pendulum_cart_pixels_policy_refuses_bad_arguments(capsys):
    import pendulum_cart_pixels_policy
    for arguments, message in ((["--episodes", "0"], "--episodes must be a positive integer, got 0"),
                               (["--downsample", "5"], "--downsample must divide the frame's 288 × 96 pixels, got 5"),
                               (["--lr", "-1"], "--lr must be positive, got -1.0"),
                               (["--gradient-decay", "0"], "--gradient-decay must be in (0, 1], got 0.0"),
                               (["--replay"], "--replay needs --load POLICY and --out DIR"),
                               (["--load", "/nonexistent/policy.pt"], "--load: no such file /nonexistent/policy.pt")):
        with pytest.raises(SystemExit) as stop:
            pendulum_cart_pixels_policy.main(arguments)
        assert stop.value.code == 2 and message in capsys.readouterr().err


def test_pendulum_cart_pixels_gradient_decay_keeps_the_loss_and_scales_the_gradient():
    """The soft truncation of BPTT leaves the episode (its loss, to the bit) and shrinks only the
    gradient of the effects that go through later steps' states."""
    import torch

    import diffphys as dp
    import pendulum_cart_pixels_policy as pixels
    world = dp.load_world(pixels.SCENE)
    theta = torch.from_numpy(world.default_params())
    torch.manual_seed(0)
    policy = pixels.Controller(48, 144).double()
    gradients, losses = [], []
    for decay in (1.0, 0.5):
        policy.zero_grad()
        loss = pixels.episode(world, theta, policy, pixels.start_state(world, 0.0, 0.6), 6, 5, 2, 2, decay=decay)[0]
        loss.backward()
        losses.append(loss.item())
        gradients.append(policy.head[2].bias.grad.item())
    assert losses[0] == losses[1]
    assert abs(gradients[1]) < 0.9 * abs(gradients[0]) and gradients[1] * gradients[0] > 0
