// tests/soft_coupled_test.cpp — rigid ↔ soft coupling (a coupled scene as a World, stepped
// and differentiated by WorldRollout's schedule; coupled scene files): gradients w.r.t. the rigid initial state (all 12 tangent components, orientation as
// q' = exp(δθ) ⊗ q), rigid and soft parameters and the soft initial state against central
// differences of the whole coupled rollout — a cloth caught by a spinning, rising paddle
// (moving contact with friction + an attachment), and a cloth hanging from a swinging pendulum
// (jointed rigid body) — plus the scene format and `diffphys simulate`.
#include "soft_test_scenes.hpp"
#include "test_paths.hpp"
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "diffphys/coupled.hpp"
#include "diffphys/world.hpp"
#include "diffphys/world_gradcheck.hpp"
#include "diffphys/error.hpp"
#include "soft/shape_distance.hpp"

namespace diffphys {
namespace {

// A free box (no rigid gravity) rising and spinning under a 2 × 2 cloth that starts in the
// barrier band above it; one cloth corner is tied to the box.
const char* kPaddleScene = R"({
  "rigid": {"name": "paddle", "dt": 0.005, "gravity": [0, 0, 0],
            "bodies": [{"name": "paddle", "position": [0, 0, 0], "linear_velocity": [0.05, 0.0, 0.1],
                        "angular_velocity": [0.2, -0.1, 0.8], "density": 500,
                        "shapes": [{"name": "plate", "type": "box", "half_extents": [0.15, 0.15, 0.02]}]}]},
  "soft": {"name": "cloth", "dt": 0.01, "newton": {"tolerance": 1e-12},
           "contact": {"barrier_distance": 0.002, "stiffness": 1.0},
           "cloth_materials": [{"name": "cotton", "stretch_modulus": 40, "poisson_ratio": 0.3, "bending_stiffness": 0.0005,
                                "areal_density": 0.2}],
           "cloth_rectangles": [{"material": "cotton", "origin": [-0.1, -0.1, 0.0215], "edge_u": [0.2, 0, 0],
                                 "edge_v": [0, 0.2, 0], "cells": [2, 2]}]},
  "coupling": {"attachments": [{"body": "paddle", "node": 0, "stiffness": 30}],
               "colliders": [{"body": "paddle", "friction": 0.4}]}
})";

// A pendulum (hinge at 1 m, a capsule rod with a box bob) swinging from horizontal with a
// 2 × 2 cloth hanging from the bob's bottom edge.
const char* kPendulumScene = R"({
  "rigid": {"name": "pendulum", "dt": 0.0025,
            "bodies": [{"name": "arm", "position": [0, 0, 1], "density": 1000, "angular_velocity": [0, 0.5, 0],
                        "shapes": [{"name": "bob", "type": "box", "position": [0.3, 0, 0], "half_extents": [0.05, 0.1, 0.02]}]}],
            "joints": [{"name": "hinge", "type": "revolute", "parent": "world", "child": "arm", "anchor": [0, 0, 1],
                        "axis": [0, 1, 0], "damping": 0.01}]},
  "soft": {"name": "flag", "dt": 0.01, "newton": {"tolerance": 1e-12},
           "cloth_materials": [{"name": "silk", "stretch_modulus": 30, "poisson_ratio": 0.3, "bending_stiffness": 0.0002,
                                "areal_density": 0.1}],
           "cloth_rectangles": [{"material": "silk", "origin": [0.3, -0.1, 0.97], "edge_u": [0, 0.2, 0],
                                 "edge_v": [0, 0, -0.2], "cells": [2, 2]}]},
  "coupling": {"attachments": [{"body": "arm", "region": {"min": [0.29, -0.2, 0.969], "max": [0.31, 0.2, 0.971]},
                                "stiffness": 200}]}
})";

double weight(std::size_t k, int which) { return std::sin(1.3 * static_cast<double>(k) + 0.7 * which + 0.1); }

// L = Σ a·x_T + Σ b·v_T (soft) + c·(p, v, ω) of every rigid body at T + Σ d·x_{T/2} (soft).
struct CoupledLoss {
  int steps = 0;
  double value(const WorldRollout& rollout) const {
    double total = 0.0;
    const WorldState last = rollout.state(steps), middle = rollout.state(steps / 2);
    for (std::size_t k = 0; k < last.soft.positions.size(); ++k)
      total += weight(k, 0) * last.soft.positions[k] + weight(k, 1) * last.soft.velocities[k] + weight(k, 2) * middle.soft.positions[k];
    const State& rigid = last.rigid;
    for (int b = 1; b < rigid.body_count(); ++b) {
      const auto i = static_cast<std::size_t>(b);
      const Vec3 parts[3] = {rigid.position[i], rigid.linear_velocity[i], rigid.angular_velocity[i]};
      for (int p = 0; p < 3; ++p) total += weight(i, 3 + 3 * p) * parts[p].x + weight(i, 4 + 3 * p) * parts[p].y + weight(i, 5 + 3 * p) * parts[p].z;
    }
    return total;
  }
  WorldLossGradient gradient() const {
    return [this](int t, const WorldState& state, WorldStateGradient& g) {
      for (std::size_t k = 0; k < state.soft.positions.size(); ++k) {
        if (t == steps) {
          g.soft_positions[k] += weight(k, 0);
          g.soft_velocities[k] += weight(k, 1);
        }
        if (t == steps / 2) g.soft_positions[k] += weight(k, 2);
      }
      if (t != steps) return;
      for (int b = 1; b < state.rigid.body_count(); ++b) {
        const auto i = static_cast<std::size_t>(b);
        const int blocks[3] = {0, 6, 9};  // p, v, ω in the tangent layout
        for (int p = 0; p < 3; ++p)
          for (int r = 0; r < 3; ++r) g.rigid[12 * i + static_cast<std::size_t>(blocks[p] + r)] += weight(i, 3 + 3 * p + r);
      }
    };
  }
};

void expect_close(double analytic, double numeric, const std::string& what) {
  EXPECT_NEAR(analytic, numeric, 5e-5 * std::max(1.0, std::abs(numeric))) << what;
}

// The coupled scene as a world, with its parameters (which the tests change).
struct CoupledWorld {
  World world;
  WorldParams params;
  CoupledWorld(const char* text, const std::string& source, bool two_way = false)
      : world(parse_world(text, source)), params(world.default_params()) {
    world.coupling.two_way = two_way || world.coupling.two_way;
  }
  std::span<double> rigid(const std::string& name) { return params.slice(world, name); }
  std::span<double> soft(const std::string& name) { return params.slice(world, "soft/" + name); }
  const soft::SoftModel& soft_model() const { return world.soft->model; }
};

void check_coupled_gradients(CoupledWorld& coupled, int steps, const std::vector<std::string>& rigid_slices,
                             const std::vector<std::string>& soft_slices, int* contact_steps, double state_epsilon) {
  const World& world = coupled.world;
  WorldParams& params = coupled.params;
  const soft::SoftModel& model = coupled.soft_model();
  const WorldState initial = world.initial_state();
  const CoupledLoss loss{steps};
  WorldRollout rollout(world, params);
  rollout.run(initial, {}, steps);
  for (int t = 0; t < steps; ++t) ASSERT_TRUE(rollout.status(t).soft->converged) << rollout.status(t).soft->message;
  // How many soft steps had a node in the barrier band of a moving shape (posed by its body
  // at the step's end).
  *contact_steps = 0;
  for (int t = 1; t <= steps; ++t) {
    const WorldState state = rollout.state(t);
    soft::SoftParams theta = soft_params(world, params);
    for (std::size_t f = 0; f < world.coupling.frame_bodies.size(); ++f) {
      const auto b = static_cast<std::size_t>(world.coupling.frame_bodies[f]);
      const Vec3& p = state.rigid.position[b];
      const Quat& q = state.rigid.orientation[b];
      soft::set_frame_pose(model, theta, static_cast<int>(f), {p.x, p.y, p.z}, {q.w, q.x, q.y, q.z}, false);
    }
    bool any = false;
    for (int i = 0; i < model.node_count; ++i)
      for (const soft::Obstacle& o : model.obstacles) {
        const double* pose = theta.values.data() + model.layout.frame_pose[static_cast<std::size_t>(o.frame)];
        const double d = soft::shape_distance(o, soft::to_frame(pose, soft::load3(state.soft.positions.data() + 3 * i)),
                                              static_cast<soft::V3<double>*>(nullptr));
        any = any || d < model.contact.barrier_distance;
      }
    *contact_steps += any ? 1 : 0;
  }
  const WorldGradients g = rollout.backward(loss.gradient());
  ASSERT_TRUE(g.soft_health.solver_converged);

  const auto evaluate = [&](const WorldState& start) {
    WorldRollout probe(world, params);
    probe.run(start, {}, steps);
    return loss.value(probe);
  };
  // Rigid initial state: every body, every tangent component.
  for (int b = 1; b < world.rigid->model.body_count(); ++b) {
    const auto i = static_cast<std::size_t>(b);
    for (int component = 0; component < 12; ++component) {
      const double epsilon = state_epsilon;
      const auto perturbed = [&](double sign) {
        WorldState start = initial;
        State& state = start.rigid;
        const double e = sign * epsilon;
        const int r = component % 3;
        Vec3 delta{r == 0 ? e : 0.0, r == 1 ? e : 0.0, r == 2 ? e : 0.0};
        switch (component / 3) {
          case 0: state.position[i] = state.position[i] + delta; break;
          case 1: {
            const double angle = std::sqrt(delta.x * delta.x + delta.y * delta.y + delta.z * delta.z);
            const Quat turn = Quat::from_axis_angle(delta * (1.0 / angle), angle);
            state.orientation[i] = (turn * state.orientation[i]).normalized();
            break;
          }
          case 2: state.linear_velocity[i] = state.linear_velocity[i] + delta; break;
          default: state.angular_velocity[i] = state.angular_velocity[i] + delta; break;
        }
        return evaluate(start);
      };
      const double numeric = (perturbed(1.0) - perturbed(-1.0)) / (2 * epsilon);
      expect_close(g.initial_state[12 * i + static_cast<std::size_t>(component)], numeric,
                   "dL/d rigid x0, body " + std::to_string(b) + " component " + std::to_string(component));
    }
  }
  // Every component of a parameter slice, by a relative step (inertias are ~1e-4).
  const auto check_slice = [&](const std::string& name, const std::string& label) {
    const std::span<double> slice = params.slice(world, name);
    const std::span<const double> analytic = g.param(world, name);
    for (std::size_t k = 0; k < slice.size(); ++k) {
      const double original_value = slice[k];
      const double epsilon = original_value != 0.0 ? 1e-6 * std::abs(original_value) : 1e-6;
      slice[k] = original_value + epsilon;
      const double plus = evaluate(initial);
      slice[k] = original_value - epsilon;
      const double minus = evaluate(initial);
      slice[k] = original_value;
      expect_close(analytic[k], (plus - minus) / (2 * epsilon), label + "[" + std::to_string(k) + "]");
    }
  };
  for (const std::string& name : rigid_slices) check_slice(name, "dL/d rigid " + name);
  for (const std::string& name : soft_slices) check_slice("soft/" + name, "dL/d soft " + name);
  // Soft initial state (a few DOFs).
  const auto offset = static_cast<std::size_t>(world.layout().soft_tangent_offset);
  const auto dofs = static_cast<std::size_t>(model.dof_count());
  for (std::size_t k = 1; k < initial.soft.positions.size(); k += 4)
    for (const bool velocity : {false, true}) {
      WorldState plus = initial, minus = initial;
      const double epsilon = 1e-7;
      (velocity ? plus.soft.velocities : plus.soft.positions)[k] += epsilon;
      (velocity ? minus.soft.velocities : minus.soft.positions)[k] -= epsilon;
      const double numeric = (evaluate(plus) - evaluate(minus)) / (2 * epsilon);
      expect_close(g.initial_state[offset + (velocity ? dofs : 0) + k], numeric,
                   std::string(velocity ? "dL/d soft v0[" : "dL/d soft x0[") + std::to_string(k) + "]");
    }
}

TEST(SoftCoupled, GradientsThroughAMovingPaddleMatchCentralDifferences) {
  CoupledWorld coupled(kPaddleScene, "paddle");
  ASSERT_EQ(coupled.world.coupling.substeps, 2);
  ASSERT_EQ(coupled.world.coupling.frame_bodies, std::vector<int>{1});
  int contact_steps = 0;
  check_coupled_gradients(coupled, 5, {"gravity"},
                          {"contact_stiffness", "obstacle/paddle/plate/friction", "frame_attachment_stiffness",
                           "cloth_material/cotton/stretch_modulus"},
                          &contact_steps,
                          // The barrier band is 2 mm wide and nodes rest ~0.1 mm into it: the
                          // loss is strongly curved in the pose, so the difference step must be
                          // small (1e-6 leaves a 0.2 % error).
                          1e-7);
  EXPECT_GE(contact_steps, 3) << "the cloth should touch the paddle";
}

// The same paddle kinematic (docs/simulation.md, "Kinematic bodies"): it moves at its state
// velocity whatever the cloth does (two-way: its reactions have no force slot to act on), the
// soft step sees its motion through its poses at both ends of each step, and every gradient,
// its 12 x₀ entries included, matches central differences (check_world_gradients: fourth-order
// differences with their error estimate; this loss is so curved in the paddle's pose that the
// second-order ones of check_coupled_gradients are off by 1e-4 at any step).
TEST(SoftCoupled, GradientsThroughAKinematicPaddleMatchCentralDifferences) {
  std::string text = kPaddleScene;
  const std::string density = "\"density\": 500,";
  text.replace(text.find(density), density.size(), "\"type\": \"kinematic\",");
  CoupledWorld coupled(text.c_str(), "kinematic_paddle", true);
  ASSERT_EQ(coupled.world.rigid->model.bodies[1].type, BodyType::Kinematic);
  const int steps = 5;
  WorldRollout rollout(coupled.world, coupled.params);
  const WorldState initial = coupled.world.initial_state();
  rollout.run(initial, {}, steps);
  const WorldState end = rollout.state(steps);
  const State& last = end.rigid;
  const double time = steps * coupled.world.rigid->model.dt * coupled.world.coupling.substeps;
  EXPECT_EQ(last.linear_velocity[1], initial.rigid.linear_velocity[1]);
  EXPECT_NEAR(norm(last.position[1] - (initial.rigid.position[1] + initial.rigid.linear_velocity[1] * time)), 0.0, 1e-12);
  GradientCheckOptions options;
  options.steps = steps;
  options.tolerance = 1e-5;
  options.state_epsilon = 1e-7;
  options.param_epsilon = 1e-7;
  const WorldGradientCheckReport report = check_world_gradients(coupled.world, {}, options);
  int paddle_entries = 0;
  for (const GradientCheckEntry& entry : report.check.entries) {
    EXPECT_LE(entry.relative_error, options.tolerance)
        << entry.name << ": analytic " << entry.analytic << ", numeric " << entry.numeric << " ± " << entry.uncertainty;
    paddle_entries += entry.name.starts_with("rigid x0/paddle/");
    // The cloth touches the moving paddle: its contact stiffness and friction matter.
    if (entry.name == "soft/contact_stiffness[0]" || entry.name == "soft/obstacle/paddle/plate/friction[0]") {
      EXPECT_GT(std::abs(entry.numeric), 1e-3) << entry.name;
    }
  }
  EXPECT_TRUE(report.check.passed);
  EXPECT_EQ(paddle_entries, 12);
}

TEST(SoftCoupled, GradientsOfAClothHangingFromASwingingPendulum) {
  CoupledWorld coupled(kPendulumScene, "pendulum");
  ASSERT_EQ(coupled.world.coupling.substeps, 4);
  ASSERT_EQ(coupled.soft_model().frame_attachment_nodes.size(), 3u);  // the top row of the cloth
  int contact_steps = 0;
  check_coupled_gradients(coupled, 6, {"gravity", "joint/hinge/damping"},
                          {"frame_attachment_stiffness", "cloth_material/silk/stretch_modulus", "gravity"}, &contact_steps,
                          // A perturbed orientation leaves the hinge, and the joint projection
                          // stops at 1e-10 m: steps of 1e-7 would see that as 0.1 % noise.
                          1e-6);
}

// Two-way: the attachment springs' reactions act on the rigid bodies (staggered by one soft
// step), and the gradient goes through that loop too.
TEST(SoftCoupled, TwoWayGradientsThroughAMovingPaddleMatchCentralDifferences) {
  CoupledWorld coupled(kPaddleScene, "paddle", true);
  // A light paddle (20 g against the 8 g cloth), so that the cloth's attachment and contact
  // reactions move it measurably.
  const double scale = 0.02 / coupled.rigid("body/paddle/mass")[0];
  coupled.rigid("body/paddle/mass")[0] *= scale;
  for (double& moment : coupled.rigid("body/paddle/inertia")) moment *= scale;
  int contact_steps = 0;
  check_coupled_gradients(coupled, 5, {"gravity", "body/paddle/mass", "body/paddle/inertia"},
                          {"contact_stiffness", "obstacle/paddle/plate/friction", "frame_attachment_stiffness",
                           "cloth_material/cotton/stretch_modulus", "cloth_material/cotton/areal_density"},
                          &contact_steps, 1e-7);
  EXPECT_GE(contact_steps, 3);
}

TEST(SoftCoupled, TwoWayGradientsOfAClothHangingFromASwingingPendulum) {
  CoupledWorld coupled(kPendulumScene, "pendulum", true);
  // A heavy cloth (0.2 kg against the 0.8 kg bob), so that its pull on the arm matters.
  coupled.soft("cloth_material/silk/areal_density")[0] = 5.0;
  int contact_steps = 0;
  check_coupled_gradients(coupled, 6, {"gravity", "joint/hinge/damping", "body/arm/mass"},
                          {"frame_attachment_stiffness", "cloth_material/silk/areal_density", "gravity"}, &contact_steps, 1e-6);
}

// Two-way momentum balance of a free body carrying a cloth (no rigid gravity, soft gravity
// on, no contact): the body receives h·F(x_t, P_t) per soft step, the cloth −h·F(x_{t+1},
// P_{t+1}) (implicit), so the total momentum changes by M_cloth g T h + h (F_0 − F_T) — the
// staggering's whole error telescopes to the end terms. One-way fails it by h Σ F_t.
TEST(SoftCoupled, TwoWayMomentumBalanceOfAFreeBodyCarryingACloth) {
  const std::string scene = R"({
    "rigid": {"dt": 0.005, "gravity": [0, 0, 0],
              "bodies": [{"name": "block", "position": [0, 0, 1], "mass": 0.05, "angular_velocity": [0.3, 0.2, 0.1],
                          "shapes": [{"name": "b", "type": "box", "half_extents": [0.05, 0.05, 0.05]}]}]},
    "soft": {"dt": 0.01, "newton": {"tolerance": 1e-12},
             "cloth_materials": [{"name": "c", "stretch_modulus": 20, "poisson_ratio": 0.3, "bending_stiffness": 0.0001,
                                  "areal_density": 0.3}],
             "cloth_rectangles": [{"material": "c", "origin": [-0.1, 0.06, 1.0], "edge_u": [0.2, 0, 0], "edge_v": [0, 0.2, -0.1],
                                   "cells": [4, 4]}]},
    "coupling": {"two_way": true,
                 "attachments": [{"body": "block", "region": {"min": [-0.2, 0.059, 0.99], "max": [0.2, 0.061, 1.01]}, "stiffness": 50}]}
  })";
  for (const bool two_way : {true, false}) {
    CoupledWorld coupled(scene.c_str(), "block");
    coupled.world.coupling.two_way = two_way;
    WorldRollout rollout(coupled.world, coupled.params);
    const int steps = 40;
    rollout.run(coupled.world.initial_state(), {}, steps);
    const soft::SoftModel& model = coupled.soft_model();
    const soft::SoftParams soft_theta = soft_params(coupled.world, coupled.params);
    std::vector<double> masses(static_cast<std::size_t>(model.node_count));
    soft::lumped_masses(model, soft_theta, masses);
    double cloth_mass = 0.0;
    for (const double m : masses) cloth_mass += m;
    const double body_mass = coupled.rigid("body/block/mass")[0];
    const auto momentum = [&](int t) {
      const WorldState state = rollout.state(t);
      Vec3 total = state.rigid.linear_velocity[1] * body_mass;
      const soft::SoftState& s = state.soft;
      for (std::size_t i = 0; i < masses.size(); ++i)
        total = total + Vec3{s.velocities[3 * i], s.velocities[3 * i + 1], s.velocities[3 * i + 2]} * masses[i];
      return total;
    };
    const auto spring_force = [&](int t) {  // on the body, Σ k (x − p − R r)
      Vec3 total;
      const WorldState state = rollout.state(t);
      const State& rigid = state.rigid;
      for (std::size_t a = 0; a < model.frame_attachment_nodes.size(); ++a) {
        const soft::Vector3& r = model.frame_attachment_points[a];
        const auto node = static_cast<std::size_t>(model.frame_attachment_nodes[a]);
        const auto& x = state.soft.positions;
        const Vec3 stretch = Vec3{x[3 * node], x[3 * node + 1], x[3 * node + 2]} - rigid.position[1] -
                             rigid.orientation[1].rotate(Vec3{r[0], r[1], r[2]});
        total = total + stretch * soft_theta.values[static_cast<std::size_t>(model.layout.frame_attachment_stiffness) + a];
      }
      return total;
    };
    const double h = model.dt;
    const Vec3 change = momentum(steps) - momentum(0);
    const Vec3 expected = Vec3{0, 0, -9.81 * cloth_mass * steps * h} + (spring_force(0) - spring_force(steps)) * h;
    const double error = std::sqrt(dot(change - expected, change - expected));
    if (two_way) {
      EXPECT_LT(error, 1e-9) << "two-way momentum balance";
      EXPECT_LT(rollout.state(steps).rigid.linear_velocity[1].z, -0.5) << "the cloth pulls the block down";
    } else {
      EXPECT_GT(error, 1e-2) << "one-way coupling ignores the reaction on the block";
    }
  }
}

// Two-way contact: a cloth falls onto a light free tray (no rigid gravity). The tray is pushed
// down by the contact reaction; the pair's momentum grows by M_cloth g T h up to the last soft
// step's contact impulse (the staggering's end term), while one-way leaves the tray in place.
TEST(SoftCoupled, TwoWayContactPushesALightTray) {
  const std::string scene = soft::testing::cloth_on_tray_scene(false);
  const int steps = 40;
  for (const bool two_way : {true, false}) {
    CoupledWorld coupled(scene.c_str(), "tray");
    coupled.world.coupling.two_way = two_way;
    WorldRollout rollout(coupled.world, coupled.params);
    rollout.run(coupled.world.initial_state(), {}, steps);
    for (int t = 0; t < steps; ++t) ASSERT_TRUE(rollout.status(t).soft->converged) << rollout.status(t).soft->message;
    const soft::SoftModel& model = coupled.soft_model();
    std::vector<double> masses(static_cast<std::size_t>(model.node_count));
    soft::lumped_masses(model, soft_params(coupled.world, coupled.params), masses);
    const WorldState last = rollout.state(steps);
    double cloth_mass = 0.0, cloth_momentum = 0.0;
    for (std::size_t i = 0; i < masses.size(); ++i) {
      cloth_mass += masses[i];
      cloth_momentum += masses[i] * last.soft.velocities[3 * i + 2];
    }
    const double tray_velocity = last.rigid.linear_velocity[1].z;
    const double impulse = -9.81 * cloth_mass * steps * model.dt;
    const double total = cloth_momentum + 0.02 * tray_velocity;
    if (two_way) {
      // The last step's contact impulse (≈ the cloth's weight × h) is the only mismatch.
      EXPECT_NEAR(total, impulse, 1.5 * std::abs(impulse) / steps);
      // Together they fall as one body under the cloth's weight: v = M_c g t / (M_c + M_t).
      EXPECT_NEAR(tray_velocity, impulse / (cloth_mass + 0.02), 0.1 * std::abs(impulse / (cloth_mass + 0.02)));
    } else {
      EXPECT_EQ(tray_velocity, 0.0);
      EXPECT_GT(std::abs(total - impulse), 0.5 * std::abs(impulse));
    }
  }
}

TEST(SoftCoupled, AttachedNodesFollowTheRigidBody) {
  // The pendulum swings for 0.3 s; the attached nodes stay near their points on the arm (the
  // springs are stiff against the cloth's weight) while the arm has turned by a large angle.
  CoupledWorld coupled(kPendulumScene, "pendulum");
  WorldRollout rollout(coupled.world, coupled.params);
  const int steps = 30;
  rollout.run(coupled.world.initial_state(), {}, steps);
  const WorldState last = rollout.state(steps);
  const State& rigid = last.rigid;
  const Quat& q = rigid.orientation[1];
  EXPECT_GT(2 * std::acos(std::min(1.0, std::abs(q.w))), 0.5) << "the pendulum should have swung";
  const soft::SoftModel& model = coupled.soft_model();
  for (std::size_t a = 0; a < model.frame_attachment_nodes.size(); ++a) {
    const soft::Vector3& r = model.frame_attachment_points[a];
    const Vec3 target = rigid.position[1] + q.rotate(Vec3{r[0], r[1], r[2]});
    const int node = model.frame_attachment_nodes[a];
    const auto& x = last.soft.positions;
    const double gap = std::hypot(x[static_cast<std::size_t>(3 * node)] - target.x, x[static_cast<std::size_t>(3 * node + 1)] - target.y,
                                  x[static_cast<std::size_t>(3 * node + 2)] - target.z);
    EXPECT_LT(gap, 0.02) << "attached node " << node;
  }
}

TEST(SoftCoupled, SceneErrorsNameThePathAndValue) {
  const auto refuses = [](std::string text, const std::string& needle) {
    try {
      parse_coupled_scene(text, "bad.json");
      ADD_FAILURE() << "accepted: " << text;
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find(needle), std::string::npos) << error.what();
    }
  };
  const std::string paddle = kPaddleScene;
  const auto replace = [&](const std::string& from, const std::string& to) {
    std::string text = paddle;
    const auto at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return text.replace(at, from.size(), to);
  };
  refuses(replace(R"("body": "paddle", "node": 0)", R"("body": "padle", "node": 0)"), "coupling.attachments[0].body: unknown rigid body 'padle'");
  refuses(replace(R"("body": "paddle", "node": 0)", R"("body": "paddle", "node": 99)"), "unknown node index 99");
  refuses(replace(R"("dt": 0.01)", R"("dt": 0.0125)"), "whole number of rigid steps");
  refuses(replace(R"("colliders")", R"("colliderz")"), "unknown key \"colliderz\"");
  refuses(replace(R"("friction": 0.4)", R"("friction": -1)"), "obstacle/paddle/plate/friction");
  refuses(replace(R"("origin": [-0.1, -0.1, 0.0215])", R"("origin": [-0.1, -0.1, 0.01])"), "strictly outside");
  refuses(replace(R"("body": "paddle", "node": 0)", R"("body": "world", "node": 0)"), "the world does not move");
  refuses(replace(R"("stiffness": 1.0})", R"("stiffness": 1.0, "stiffness": 2.0})"), "duplicate key \"stiffness\"");
  // The C++ API checks the binding too.
  const World paddle_world = parse_world(kPaddleScene, "paddle");
  const auto refuses_rollout = [&](std::vector<int> bodies, int substeps, const std::string& needle) {
    try {
      const World world("paddle", "paddle", paddle_world.rigid, paddle_world.soft, WorldCoupling{std::move(bodies), substeps, false});
      ADD_FAILURE() << "accepted";
    } catch (const Error& error) {
      EXPECT_NE(std::string(error.what()).find(needle), std::string::npos) << error.what();
    }
  };
  refuses_rollout({0}, 2, "bound to rigid body index 0");
  refuses_rollout({}, 2, "one rigid body per soft frame");
  refuses_rollout({1}, 3, "must equal substeps (3)");
}

TEST(SoftCoupled, SimulateWritesATrajectory) {
  const std::string scene = std::string(test_paths::source_dir()) + "/examples/soft/cloth_on_pendulum.json";
  const CoupledSystem system = load_coupled_scene(scene);  // the example loads
  EXPECT_GT(system.soft_model.frame_attachment_nodes.size(), 0u);
  const std::string out = ::testing::TempDir() + "coupled_trajectory.json";
  const std::string command = std::string(test_paths::cli_program()) + " simulate " + scene + " -n 20 -o " + out + " > /dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  std::ifstream file(out);
  const nlohmann::json trajectory = nlohmann::json::parse(file);
  EXPECT_EQ(trajectory.at("format"), "diffphys-world-trajectory");
  const nlohmann::json& soft = trajectory.at("parts").at("soft");
  ASSERT_EQ(soft.at("frames").size(), 21u);
  const nlohmann::json& last = soft.at("frames").back();
  EXPECT_EQ(last.at("positions").size(), static_cast<std::size_t>(3 * system.soft_model.node_count));
  EXPECT_TRUE(last.at("converged").get<bool>());
  const nlohmann::json& rigid = trajectory.at("parts").at("rigid");
  ASSERT_EQ(rigid.at("frames").size(), 21u);
  EXPECT_EQ(rigid.at("frames").back().at("bodies").size(), rigid.at("bodies").size());
  std::remove(out.c_str());
}

}  // namespace
}  // namespace diffphys
