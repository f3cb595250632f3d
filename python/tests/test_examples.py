"""Smoke runs of the Python examples with --quick, each asserting progress that a broken
gradient or binding could not fake: the identified parameters approach the true ones, the
throw reaches the basket, the policy's cost falls, CMA-ES solves the ball throw."""

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
