// tests/convex_mujoco_test.cpp — the convex formulation (Formulation::Convex, maximal
// coordinates) against MuJoCo 2.2 (libmujoco-dev; elliptic cone, Newton, Euler): one MJCF text
// per scenario loaded by both engines, states compared step for step over 1 s. Owns the map
// from diffphys' compliance (τ, ζ) to MuJoCo's solref/solimp that makes the two contact rows
// the same row, and three scenarios: a sphere that bounces on its spring, slides and rolls; a
// box that slides, decelerates and stops; a 4-link arm dragged across the ground by its motors.
// Each also shows that the comparison can fail: 20 % more friction must break the agreement.
//
// The map. Per step, both engines take the velocities v⁺ that minimise
//   ½‖v⁺ − v_free‖²_M + Σ_contacts s(J v⁺ − target; R, elliptic cone)
// (docs/simulation.md, "The convex formulation"; MuJoCo's primal written in v⁺ = v + h·qacc).
//   diffphys: R = κ A_ii (A_ii = J_i M⁻¹ J_iᵀ, exact; κ = 1/(h²/(ζτ)² + 2h/τ)); the target of a
//             penetrating normal row is −r/(h + 2ζ²τ) (r the signed distance), of a friction row 0.
//   MuJoCo:   R = (1 − d)/d · A_approx (A_approx = body_invweight0, one number for the normal and
//             both friction rows with impratio 1); target J v + h·aref, aref = −b J v − k d r,
//             b = 2/(d τ'), k = 1/(d² τ'² ζ'²) for solref (τ', ζ') and constant impedance d.
// The rows are the same iff b = 1/h (J v drops out; the friction rows' target is then 0 too),
// h k d = 1/(h + 2ζ²τ) and (1 − d)/d · A_approx = κ A_ii. With ρ = A_ii / A_approx:
//   d = 1/(1 + κρ),  τ' = 2h/d,  ζ'² = d (h + 2ζ²τ) / (4h).
// s, the cone's part, is the distance to the elliptic cone in the R metric in both; with one R
// for a contact's three rows it is the Euclidean projection. τ' ≥ 2h, so MuJoCo's refsafe
// never alters it. As h → 0, d → 2h/τ, τ' → τ and ζ' → ζ: MuJoCo's "solref = τ ζ" is the
// limit, not the same discrete law (its aref damps the start-of-step velocity explicitly where
// diffphys' spring is implicit): the sphere below, so configured, is up to 1.05 m/s apart.
//
// What the map cannot match, and where each scenario stands (tolerances derived at each test):
// - A_approx is a constant; A_ii follows the pose. For a sphere ρ = 1 at every pose, so its
//   two steps are the same program and differ by the solvers' tolerances only. A box's corner
//   has ρ matched lying flat; it drifts with the tilt, which the box's bound accounts for.
// - MuJoCo's joints are exact (joint coordinates); diffphys' are stiff compliant rows between
//   bodies in maximal coordinates, a different first-order discretisation: the arm's difference
//   must vanish as O(h), which its test checks by halving h (joints' κ held fixed).
// - MuJoCo makes contacts only where surfaces overlap: diffphys' anticipating margin is set to
//   0 (its open contacts within the margin are tested in convex_contact_test.cpp). Both put a
//   contact at the midpoint of the two surfaces, one per sphere, one per box corner, one per
//   capsule end.
// - Restitution: MuJoCo has only the spring; diffphys' Newton restitution stays 0, the bounce
//   is the under-damped spring's in both.
// Built only where the test executable links MuJoCo (tests/CMakeLists.txt).
#include <gtest/gtest.h>

#ifdef DIFFPHYS_TESTS_HAVE_MUJOCO
#include <mujoco/mujoco.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "diffphys/model_builder.hpp"
#include "diffphys/robot_loaders.hpp"
#include "diffphys/simulator.hpp"

// A namespace of its own: the unity build compiles this file with other tests.
namespace diffphys::convex_mujoco_test {
namespace {

constexpr double kConvexMujocoDt = 1e-3;       // s, both engines
constexpr double kConvexMujocoDuration = 1.0;  // s
// diffphys' Newton stops at ‖M⁻¹∇ℓ‖_∞ ≤ solver.tolerance (the default, m/s and rad/s); MuJoCo's
// Newton, converging quadratically, is run to a relative cost improvement of 1e-12.
constexpr double kConvexMujocoSolveTolerance = 1e-10;

// ---------------------------------------------------------------------------------------
// The map of the header comment, and MJCF text.

struct MujocoSoftness {
  double timeconst = 0.0;  // solref[0], s
  double dampratio = 0.0;  // solref[1]
  double impedance = 0.0;  // solimp dmin = dmax
};
MujocoSoftness matching_mujoco_softness(double h, double time_constant, double damping_ratio,
                                        double inverse_mass_ratio) {
  const double zeta2 = damping_ratio * damping_ratio;
  const double kappa = 1.0 / (h * h / (zeta2 * time_constant * time_constant) + 2.0 * h / time_constant);
  const double d = 1.0 / (1.0 + kappa * inverse_mass_ratio);
  return {2.0 * h / d, std::sqrt(d * (h + 2.0 * zeta2 * time_constant) / (4.0 * h)), d};
}

std::string mjcf_number(double x) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", x);
  return text;
}

// Replaces every "{key}" of `text` by `value`.
std::string with_value(std::string text, std::string_view key, const std::string& value) {
  const std::string marker = "{" + std::string(key) + "}";
  for (std::size_t at = text.find(marker); at != std::string::npos; at = text.find(marker, at + value.size()))
    text.replace(at, marker.size(), value);
  return text;
}

std::string soft_attributes(const MujocoSoftness& softness) {
  const std::string d = mjcf_number(softness.impedance);
  return "solref=\"" + mjcf_number(softness.timeconst) + " " + mjcf_number(softness.dampratio) + "\" solimp=\"" + d +
         " " + d + " 0.001 0.5 2\"";
}

// Every scenario's MuJoCo options: Euler, the elliptic cone, Newton run to round-off, impratio
// 1 (friction rows with the normal's R, as diffphys).
std::string mujoco_option(double h) {
  return "<option timestep=\"" + mjcf_number(h) +
         R"(" integrator="Euler" cone="elliptic" solver="Newton" impratio="1" tolerance="1e-12" iterations="100"/>)";
}

mjModel* load_mujoco(const std::string& xml) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("diffphys_convex_mujoco_" + std::to_string(::getpid()) + ".xml");
  std::ofstream(file) << xml;
  char error[1000] = "";
  mjModel* model = mj_loadXML(file.c_str(), nullptr, error, sizeof error);
  std::filesystem::remove(file);
  EXPECT_NE(model, nullptr) << error;
  return model;
}

int diffphys_body(const Model& model, const std::string& name) {
  for (int b = 0; b < model.body_count(); ++b)
    if (model.bodies[static_cast<std::size_t>(b)].name == name) return b;
  ADD_FAILURE() << "no diffphys body " << name;
  return 0;
}

// The exact A = 1/m + (r×n)ᵀ I⁻¹ (r×n) of diffphys body `body` at `offset` from its centre of
// mass along `normal` (world frame), with the body at `orientation`.
double point_inverse_mass(const Scene& scene, int body, const Quat& orientation, const Vec3& offset,
                          const Vec3& normal) {
  const auto b = static_cast<std::size_t>(body);
  const Vec3 moments = scene.params.vec3_at(scene.model.layout.body_inertia[b]);
  const Vec3 lever = orientation.inverse_rotate(cross(offset, normal));  // principal frame
  return 1.0 / scene.params.at(scene.model.layout.body_mass[b]) + lever.x * lever.x / moments.x +
         lever.y * lever.y / moments.y + lever.z * lever.z / moments.z;
}

// ρ for body `name` touching the ground at `offset` (world) in its load pose: diffphys' exact
// A_ii over MuJoCo's A_approx (its translational body_invweight0).
double inverse_mass_ratio(const std::string& xml, const std::string& name, const Vec3& offset) {
  const Scene scene = parse_mjcf(xml, "convex_mujoco.xml");
  const int body = diffphys_body(scene.model, name);
  const double exact =
      point_inverse_mass(scene, body, scene.state.orientation[static_cast<std::size_t>(body)], offset, {0, 0, 1});
  mjModel* m = load_mujoco(xml);
  if (m == nullptr) return 1.0;
  const double approximate = m->body_invweight0[2 * mj_name2id(m, mjOBJ_BODY, name.c_str())];
  mj_deleteModel(m);
  return exact / approximate;
}

// ---------------------------------------------------------------------------------------
// Running both engines side by side.

struct ConvexMujocoSetup {
  std::string xml;  // one MJCF text for both engines
  double dt = kConvexMujocoDt;
  double contact_time_constant = 0.0;  // diffphys' contact τ, s
  double contact_damping_ratio = 0.0;  // diffphys' contact ζ
  double joint_time_constant = 0.0;    // diffphys' joint τ, s (0: the default)
  std::vector<std::string> bodies;     // compared bodies
  std::vector<std::string> joints;     // compared hinges
  std::vector<double> controls;        // motor controls (MuJoCo's ctrl, gear 1), held
  struct Launch {                      // a free body's initial velocities, world frame
    std::string body;
    Vec3 linear_velocity, angular_velocity;
  };
  std::vector<Launch> launches;
  double diffphys_friction_scale = 1.0;  // ≠ 1: deliberate mismatches
  double diffphys_time_constant_scale = 1.0;
};

struct BodySample {
  Vec3 position, linear_velocity, angular_velocity;  // centre of mass; world frame
  Quat orientation;                                  // diffphys' body frame (MuJoCo's: unused)
};
struct ConvexMujocoRun {
  Scene scene;  // diffphys' side, as stepped
  // Per step (after it): (steps) (compared bodies), (steps) (joints), (steps) contact points.
  std::vector<std::vector<BodySample>> diffphys, mujoco;
  std::vector<std::vector<double>> joint_angle_difference, joint_rate_difference;
  std::vector<int> diffphys_contacts, mujoco_contacts;
  // Largest differences over the run, ∞-norm over bodies, joints and components.
  double position = 0.0, linear_velocity = 0.0, angular_velocity = 0.0;  // m, m/s, rad/s
  double joint_angle = 0.0, joint_rate = 0.0;                            // rad, rad/s
};

double largest_difference(const Vec3& a, const Vec3& b) {
  return std::max({std::abs(a.x - b.x), std::abs(a.y - b.y), std::abs(a.z - b.z)});
}

// MuJoCo's body `id` at the current qpos, qvel, after the kinematic stages only (so nothing the
// next mj_step reads, its warm start, moves). For a body, mj_objectVelocity answers at the
// centre of mass (xipos).
BodySample mujoco_sample(const mjModel* m, mjData* d, int id) {
  double velocity[6];  // angular, linear; world frame
  mj_objectVelocity(m, d, mjOBJ_BODY, id, velocity, 0);
  return {{d->xipos[3 * id], d->xipos[3 * id + 1], d->xipos[3 * id + 2]},
          {velocity[3], velocity[4], velocity[5]},
          {velocity[0], velocity[1], velocity[2]},
          {}};
}

ConvexMujocoRun run_side_by_side(const ConvexMujocoSetup& setup) {
  ConvexMujocoRun run;
  mjModel* m = load_mujoco(setup.xml);
  if (m == nullptr) return run;
  mjData* d = mj_makeData(m);

  run.scene = parse_mjcf(setup.xml, "convex_mujoco.xml");
  Scene& scene = run.scene;
  set_formulation(scene, Formulation::Convex);
  scene.model.solver.contact_margin = 0.0;  // contacts where the surfaces overlap, as MuJoCo's
  scene.model.solver.speculative_factor = 0.0;  // and none before: MuJoCo has no speculative contacts
  scene.model.solver.tolerance = kConvexMujocoSolveTolerance;
  scene.params.slice(scene.model, "compliance/contact/time_constant")[0] =
      setup.contact_time_constant * setup.diffphys_time_constant_scale;
  scene.params.slice(scene.model, "compliance/contact/damping_ratio")[0] = setup.contact_damping_ratio;
  if (setup.joint_time_constant > 0)
    scene.params.slice(scene.model, "compliance/joint/time_constant")[0] = setup.joint_time_constant;
  for (const int offset : scene.model.layout.body_friction)
    if (offset >= 0) scene.params.values[static_cast<std::size_t>(offset)] *= setup.diffphys_friction_scale;
  EXPECT_DOUBLE_EQ(scene.model.dt, m->opt.timestep);

  State state = scene.state;
  for (const ConvexMujocoSetup::Launch& launch : setup.launches) {
    const auto b = static_cast<std::size_t>(diffphys_body(scene.model, launch.body));
    state.linear_velocity[b] = launch.linear_velocity;
    state.angular_velocity[b] = launch.angular_velocity;
    const int id = mj_name2id(m, mjOBJ_BODY, launch.body.c_str());
    const int dof = m->jnt_dofadr[m->body_jntadr[id]];
    // A free joint's qvel: linear in the world frame, angular in the body's (unrotated here).
    for (int k = 0; k < 3; ++k) {
      d->qvel[dof + k] = launch.linear_velocity[k];
      d->qvel[dof + 3 + k] = launch.angular_velocity[k];
    }
  }
  for (std::size_t a = 0; a < setup.controls.size(); ++a) d->ctrl[a] = setup.controls[a];

  std::vector<int> diffphys_bodies, mujoco_bodies, diffphys_joints, mujoco_joints;
  for (const std::string& name : setup.bodies) {
    diffphys_bodies.push_back(diffphys_body(scene.model, name));
    mujoco_bodies.push_back(mj_name2id(m, mjOBJ_BODY, name.c_str()));
  }
  for (const std::string& name : setup.joints) {
    int found = -1;
    for (int j = 0; j < scene.model.joint_count(); ++j)
      if (scene.model.joints[static_cast<std::size_t>(j)].name == name) found = j;
    EXPECT_GE(found, 0) << "no diffphys joint " << name;
    diffphys_joints.push_back(std::max(found, 0));
    mujoco_joints.push_back(mj_name2id(m, mjOBJ_JOINT, name.c_str()));
  }

  const int steps = static_cast<int>(std::lround(kConvexMujocoDuration / setup.dt));
  State next = state;
  Workspace workspace;
  for (int t = 0; t < steps; ++t) {
    const StepStatus status = step(scene.model, scene.params, state, setup.controls, next, workspace);
    std::swap(state, next);
    EXPECT_TRUE(status.converged) << "step " << t << ": residual " << status.residual;
    mj_step(m, d);
    mj_kinematics(m, d);
    mj_comPos(m, d);
    mj_comVel(m, d);
    run.diffphys_contacts.push_back(status.contact_count);
    run.mujoco_contacts.push_back(d->ncon);
    std::vector<BodySample> ours, theirs;
    for (std::size_t i = 0; i < diffphys_bodies.size(); ++i) {
      const auto b = static_cast<std::size_t>(diffphys_bodies[i]);
      ours.push_back({state.position[b], state.linear_velocity[b], state.angular_velocity[b], state.orientation[b]});
      theirs.push_back(mujoco_sample(m, d, mujoco_bodies[i]));
      run.position = std::max(run.position, largest_difference(ours.back().position, theirs.back().position));
      run.linear_velocity =
          std::max(run.linear_velocity, largest_difference(ours.back().linear_velocity, theirs.back().linear_velocity));
      run.angular_velocity = std::max(run.angular_velocity,
                                      largest_difference(ours.back().angular_velocity, theirs.back().angular_velocity));
    }
    std::vector<double> angle_difference, rate_difference;
    for (std::size_t i = 0; i < diffphys_joints.size(); ++i) {
      const int id = mujoco_joints[i];
      angle_difference.push_back(joint_position(scene.model, state, diffphys_joints[i], 0) -
                                 d->qpos[m->jnt_qposadr[id]]);
      rate_difference.push_back(joint_velocity(scene.model, state, diffphys_joints[i], 0) - d->qvel[m->jnt_dofadr[id]]);
      run.joint_angle = std::max(run.joint_angle, std::abs(angle_difference.back()));
      run.joint_rate = std::max(run.joint_rate, std::abs(rate_difference.back()));
    }
    run.diffphys.push_back(std::move(ours));
    run.mujoco.push_back(std::move(theirs));
    run.joint_angle_difference.push_back(std::move(angle_difference));
    run.joint_rate_difference.push_back(std::move(rate_difference));
  }
  mj_deleteData(d);
  mj_deleteModel(m);
  return run;
}

void report(const char* scenario, const ConvexMujocoRun& run) {
  std::printf(
      "%s: largest difference from MuJoCo over 1 s: position %.2e m, velocity %.2e m/s, angular velocity "
      "%.2e rad/s",
      scenario, run.position, run.linear_velocity, run.angular_velocity);
  if (!run.joint_angle_difference.empty() && !run.joint_angle_difference[0].empty())
    std::printf(", joint angle %.2e rad, joint rate %.2e rad/s", run.joint_angle, run.joint_rate);
  std::printf("\n");
  ::testing::Test::RecordProperty("position", mjcf_number(run.position));
  ::testing::Test::RecordProperty("linear_velocity", mjcf_number(run.linear_velocity));
  ::testing::Test::RecordProperty("angular_velocity", mjcf_number(run.angular_velocity));
}

// How far apart two runs may drift that solve, each step, programs no further apart than
// the solvers' tolerances and a known relative error ε_t of some rows' R (zero where the map
// is exact). Measured in the metric M of the body's velocities (m/s·√kg):
// - solvers: each answer is within ‖M⁻¹∇ℓ‖_M ≤ √(6 λ_max(M)) ε of the minimiser (the residual
//   bounds the error in the Hessian's metric, H ⪰ M), so 2√(6 λ_max) ε between the engines;
// - R: a row u⁺ = (R u_free + A v̂)/(A + R) moves by ε(1 − A/(A + R))(u_free − u⁺) when R
//   becomes R(1 + ε): at most ε times the row's own change, taken here as ε_t times the M-norm
//   of the body's velocity change from its contacts that step.
// The step map is non-expansive here (free flight is an isometry, a damped spring contracts
// its energy norm, a projection onto the cone is non-expansive), so these add up: S_t = Σ_s≤t.
// Velocities then differ by at most S_N/√m (m/s), angular velocities S_N/√I_min (rad/s), and
// positions by Σ_t h S_t/√m.
struct Bound {
  double position = 0.0, velocity = 0.0, angular_velocity = 0.0;
};
Bound drift_bound(const ConvexMujocoRun& run, int compared, int body, double h, const std::vector<double>& mismatch) {
  const auto b = static_cast<std::size_t>(body);
  const double mass = run.scene.params.at(run.scene.model.layout.body_mass[b]);
  const Vec3 moments = run.scene.params.vec3_at(run.scene.model.layout.body_inertia[b]);
  const Vec3 gravity = run.scene.params.vec3_at(run.scene.model.layout.gravity);
  const double largest = std::max({mass, moments.x, moments.y, moments.z});
  const double smallest_moment = std::min({moments.x, moments.y, moments.z});
  const double per_step_solve = 2.0 * std::sqrt(6.0 * largest) * kConvexMujocoSolveTolerance;
  Bound bound;
  double drift = 0.0, position = 0.0;  // S_t; Σ h S_t
  for (std::size_t t = 0; t < run.diffphys.size(); ++t) {
    double contact_change = 0.0;  // ‖Δv − g h, Δω‖_M
    if (t > 0 && !mismatch.empty()) {
      const BodySample& before = run.diffphys[t - 1][static_cast<std::size_t>(compared)];
      const BodySample& after = run.diffphys[t][static_cast<std::size_t>(compared)];
      const Vec3 linear = after.linear_velocity - before.linear_velocity - gravity * h;
      const Vec3 angular = after.orientation.inverse_rotate(after.angular_velocity - before.angular_velocity);
      contact_change = std::sqrt(mass * dot(linear, linear) + moments.x * angular.x * angular.x +
                                 moments.y * angular.y * angular.y + moments.z * angular.z * angular.z);
    }
    drift += per_step_solve + (mismatch.empty() ? 0.0 : mismatch[t] * contact_change);
    position += h * drift;
  }
  bound.velocity = drift / std::sqrt(mass);
  bound.angular_velocity = drift / std::sqrt(smallest_moment);
  bound.position = position / std::sqrt(mass);
  return bound;
}

// ---------------------------------------------------------------------------------------
// (a) A sphere dropped with sideways velocity and backspin: it lands, bounces on its
// under-damped spring (ζ = 0.3), slides while the backspin reverses, and rolls. Its contact
// normal passes through the centre: A_ii = 1/m = MuJoCo's A_approx at every pose (ρ = 1).

constexpr double kSphereRadius = 0.1, kSphereFriction = 0.4;
constexpr double kSphereTimeConstant = 0.01, kSphereDampingRatio = 0.3;

ConvexMujocoSetup sphere_setup() {
  std::string xml = R"(<mujoco model="convex_mujoco_sphere">
  {option}
  <worldbody>
    <geom type="plane" size="0 0 1" friction="{mu} 0 0" {soft}/>
    <body name="ball" pos="0 0 0.6">
      <freejoint/>
      <geom type="sphere" size="{radius}" mass="2" friction="{mu} 0 0" {soft}/>
    </body>
  </worldbody>
</mujoco>)";
  xml = with_value(xml, "option", mujoco_option(kConvexMujocoDt));
  xml = with_value(xml, "mu", mjcf_number(kSphereFriction));
  xml = with_value(xml, "radius", mjcf_number(kSphereRadius));
  xml = with_value(
      xml, "soft",
      soft_attributes(matching_mujoco_softness(kConvexMujocoDt, kSphereTimeConstant, kSphereDampingRatio, 1.0)));
  ConvexMujocoSetup setup;
  setup.xml = xml;
  setup.contact_time_constant = kSphereTimeConstant;
  setup.contact_damping_ratio = kSphereDampingRatio;
  setup.bodies = {"ball"};
  setup.launches = {{"ball", {2.0, 0.5, 0.0}, {0.0, -10.0, 3.0}}};
  return setup;
}

TEST(ConvexMujoco, SphereBouncesSlidesAndRollsAsInMujoco) {
  const ConvexMujocoRun run = run_side_by_side(sphere_setup());
  ASSERT_FALSE(run.diffphys.empty());
  report("sphere", run);
  // The scenario does what it says: separate contact phases (bounces), then rolling without
  // slip, v_x = ω_y r at the contact (r less half the spring's depth, sub-mm here).
  int landings = 0;
  for (std::size_t t = 1; t < run.diffphys_contacts.size(); ++t)
    landings += run.diffphys_contacts[t] > 0 && run.diffphys_contacts[t - 1] == 0;
  EXPECT_GE(landings, 3);
  const BodySample& last = run.diffphys.back()[0];
  EXPECT_GT(last.linear_velocity.x, 0.5);
  EXPECT_NEAR(last.linear_velocity.x, last.angular_velocity.y * kSphereRadius, 1e-2 * last.linear_velocity.x);

  // ρ = 1 at every pose: the solvers' tolerances are the only difference.
  const Bound bound = drift_bound(run, 0, diffphys_body(run.scene.model, "ball"), kConvexMujocoDt, {});
  std::printf("sphere: bound position %.2e m, velocity %.2e m/s, angular velocity %.2e rad/s\n", bound.position,
              bound.velocity, bound.angular_velocity);
  EXPECT_LT(run.position, bound.position);
  EXPECT_LT(run.linear_velocity, bound.velocity);
  EXPECT_LT(run.angular_velocity, bound.angular_velocity);
}

TEST(ConvexMujoco, SphereComparisonFailsWithTwentyPercentMoreFrictionOrALongerTimeConstant) {
  for (const bool friction : {true, false}) {
    ConvexMujocoSetup setup = sphere_setup();
    (friction ? setup.diffphys_friction_scale : setup.diffphys_time_constant_scale) = 1.2;
    const ConvexMujocoRun run = run_side_by_side(setup);
    const Bound bound = drift_bound(run, 0, diffphys_body(run.scene.model, "ball"), kConvexMujocoDt, {});
    EXPECT_GT(run.position, bound.position) << (friction ? "friction" : "time constant");
    EXPECT_GT(run.linear_velocity, bound.velocity) << (friction ? "friction" : "time constant");
  }
}

// ---------------------------------------------------------------------------------------
// (b) A box launched sideways 1 mm above the ground: it lands flat on four corners (a contact
// each in both engines), slides, decelerates and stops, then sticks. ρ is matched at a corner
// of the box lying flat (all four alike); as the box pitches and rolls on its springs a
// corner's A_ii moves with it (to first order in the tilt, by 2ac·θ/I about the pitch axis),
// MuJoCo's does not: that R mismatch enters the bound, measured on the trajectory.
//
// The launch (0.54 m/s) is slow enough that the corners stay in contact: the convex
// relaxation of the cone (both engines') pushes a sliding contact apart, and the spring holds
// it only while μ|v_t| < (1 + μ²) κ (m A_ii) g h / n (the weight's share m g h / n of each of
// the n corners' impulse γ_n = (y_n + μ‖y_t‖)/(1 + μ²) must leave y_n > 0): 0.62 m/s here.
// Faster, the box hops in both engines, and each landing's contact onset (a step with or
// without a contact) amplifies the R mismatch beyond this bound: launched at 2.7 m/s they are
// up to 0.088 m/s apart; the same with the box's inertia raised to 100 kg·m², which leaves
// A_ii's tilt dependence at 1e-7, 1e-8 m/s apart, hops and all.

constexpr Vec3 kBoxHalfExtents{0.15, 0.1, 0.05};
constexpr double kBoxFriction = 0.25, kBoxTimeConstant = 0.02, kBoxDampingRatio = 1.0;

ConvexMujocoSetup box_setup() {
  std::string xml = R"(<mujoco model="convex_mujoco_box">
  {option}
  <worldbody>
    <geom type="plane" size="0 0 1" friction="{mu} 0 0" {soft}/>
    <body name="box" pos="0 0 {height}">
      <freejoint/>
      <geom type="box" size="{half}" mass="3" friction="{mu} 0 0" {soft}/>
    </body>
  </worldbody>
</mujoco>)";
  xml = with_value(xml, "option", mujoco_option(kConvexMujocoDt));
  xml = with_value(xml, "mu", mjcf_number(kBoxFriction));
  xml = with_value(xml, "height", mjcf_number(kBoxHalfExtents.z + 1e-3));
  xml = with_value(
      xml, "half",
      mjcf_number(kBoxHalfExtents.x) + " " + mjcf_number(kBoxHalfExtents.y) + " " + mjcf_number(kBoxHalfExtents.z));
  const std::string plain = with_value(
      xml, "soft", soft_attributes(matching_mujoco_softness(kConvexMujocoDt, kBoxTimeConstant, kBoxDampingRatio, 1.0)));
  const double ratio = inverse_mass_ratio(plain, "box", {kBoxHalfExtents.x, kBoxHalfExtents.y, -kBoxHalfExtents.z});
  ConvexMujocoSetup setup;
  setup.xml =
      with_value(xml, "soft",
                 soft_attributes(matching_mujoco_softness(kConvexMujocoDt, kBoxTimeConstant, kBoxDampingRatio, ratio)));
  setup.contact_time_constant = kBoxTimeConstant;
  setup.contact_damping_ratio = kBoxDampingRatio;
  setup.bodies = {"box"};
  setup.launches = {{"box", {0.5, 0.2, 0.0}, {}}};
  return setup;
}

// Per step, the largest relative change of a bottom corner's A_ii from the flat pose's.
std::vector<double> box_corner_mismatch(const ConvexMujocoRun& run) {
  const int body = diffphys_body(run.scene.model, "box");
  const Quat flat = run.scene.state.orientation[static_cast<std::size_t>(body)];
  std::vector<double> mismatch;
  for (const std::vector<BodySample>& sample : run.diffphys) {
    double largest = 0.0;
    for (const double x : {-1.0, 1.0})
      for (const double y : {-1.0, 1.0}) {
        // A bottom corner in the world frame of the load pose (the box unrotated).
        const Vec3 corner{x * kBoxHalfExtents.x, y * kBoxHalfExtents.y, -kBoxHalfExtents.z};
        const double at_rest = point_inverse_mass(run.scene, body, flat, corner, {0, 0, 1});
        // The load pose's principal frame carried by the body's rotation since.
        const Quat rotation = sample[0].orientation * flat.conjugate();
        const double now =
            point_inverse_mass(run.scene, body, sample[0].orientation, rotation.rotate(corner), {0, 0, 1});
        largest = std::max(largest, std::abs(now / at_rest - 1.0));
      }
    mismatch.push_back(largest);
  }
  return mismatch;
}

TEST(ConvexMujoco, BoxSlidesDeceleratesAndStopsAsInMujoco) {
  const ConvexMujocoRun run = run_side_by_side(box_setup());
  ASSERT_FALSE(run.diffphys.empty());
  report("box", run);
  // The scenario: it slid (v²/2μg would be 5.9 cm without the landing) and stopped, and from
  // the landing on both engines kept four contacts at every step (the bound's premise).
  const BodySample& last = run.diffphys.back()[0];
  EXPECT_GT(last.position.x, 0.03);
  EXPECT_LT(norm(last.linear_velocity), 1e-4);
  std::size_t landing = 0;
  while (landing < run.diffphys_contacts.size() && run.diffphys_contacts[landing] == 0) ++landing;
  ASSERT_LT(landing, std::size_t{100});
  for (std::size_t t = landing; t < run.diffphys_contacts.size(); ++t) {
    ASSERT_EQ(run.diffphys_contacts[t], 4) << "step " << t;
    ASSERT_EQ(run.mujoco_contacts[t], 4) << "step " << t;
  }
  const std::vector<double> mismatch = box_corner_mismatch(run);
  const Bound bound = drift_bound(run, 0, diffphys_body(run.scene.model, "box"), kConvexMujocoDt, mismatch);
  std::printf(
      "box: largest corner R mismatch %.2e; bound position %.2e m, velocity %.2e m/s, angular velocity %.2e rad/s\n",
      *std::max_element(mismatch.begin(), mismatch.end()), bound.position, bound.velocity, bound.angular_velocity);
  EXPECT_LT(run.position, bound.position);
  EXPECT_LT(run.linear_velocity, bound.velocity);
  EXPECT_LT(run.angular_velocity, bound.angular_velocity);
}

TEST(ConvexMujoco, BoxComparisonFailsWithTwentyPercentMoreFriction) {
  ConvexMujocoSetup setup = box_setup();
  setup.diffphys_friction_scale = 1.2;
  const ConvexMujocoRun run = run_side_by_side(setup);
  const Bound bound =
      drift_bound(run, 0, diffphys_body(run.scene.model, "box"), kConvexMujocoDt, box_corner_mismatch(run));
  EXPECT_GT(run.position, bound.position);
  EXPECT_GT(run.linear_velocity, bound.velocity);
}

// ---------------------------------------------------------------------------------------
// (c) A 4-link arm lying on the ground (base hinge 1 mm low, so every capsule end presses on
// its spring), four vertical hinges, motors on the first and third: it is dragged round its
// base, its links sliding and sticking at eight contacts while the hinges couple them. A link
// touches at its capsule's ends, lying flat at any heading: ρ is constant and matched.
//
// Joint coordinates (MuJoCo) and maximal coordinates with compliant hinges (diffphys) are two
// first-order discretisations of the same motion with rigid joints, so their difference must
// vanish as O(h): halving h (both engines' step, the contact map recomputed for it, and the
// hinges' τ, so that their κ, a function of h/τ, stays the default's ≈ 1e-4 and their
// stiffness 1/τ grows as 1/h) must halve it. The second-order remainder moves the ratio by
// about 1 % (measured: 0.486-0.496 from h to h/2, 0.492-0.498 from h/2 to h/4); the check
// allows ±0.1. A model error Δ (friction, compliance) does not shrink with h and shows as a
// ratio near 1: (Δ + ch/2)/(Δ + ch) > 0.6 as soon as Δ > ch/4 (5 % more friction: 0.96-1.16).

ConvexMujocoSetup arm_setup(double h) {
  std::string xml = R"(<mujoco model="convex_mujoco_arm">
  {option}
  <worldbody>
    <geom type="plane" size="0 0 1" friction="0.2 0 0" {plain}/>
    <body name="link1" pos="0 0 0.029">
      <joint name="yaw1" type="hinge" axis="0 0 1"/>
      <geom type="capsule" fromto="0 0 0 0.3 0 0" size="0.03" friction="0.2 0 0" priority="1" {soft1}/>
      <body name="link2" pos="0.3 0 0">
        <joint name="yaw2" type="hinge" axis="0 0 1"/>
        <geom type="capsule" fromto="0 0 0 0.25 0 0" size="0.03" friction="0.2 0 0" priority="1" {soft2}/>
        <body name="link3" pos="0.25 0 0">
          <joint name="yaw3" type="hinge" axis="0 0 1"/>
          <geom type="capsule" fromto="0 0 0 0.25 0 0" size="0.03" friction="0.2 0 0" priority="1" {soft3}/>
          <body name="link4" pos="0.25 0 0">
            <joint name="yaw4" type="hinge" axis="0 0 1"/>
            <geom type="capsule" fromto="0 0 0 0.2 0 0" size="0.03" friction="0.2 0 0" priority="1" {soft4}/>
          </body>
        </body>
      </body>
    </body>
  </worldbody>
  <contact>
    <exclude body1="link1" body2="link3"/>
    <exclude body1="link1" body2="link4"/>
    <exclude body1="link2" body2="link4"/>
  </contact>
  <actuator>
    <motor name="turn" joint="yaw1" gear="1"/>
    <motor name="bend" joint="yaw3" gear="1"/>
  </actuator>
</mujoco>)";
  const double time_constant = 0.01, damping_ratio = 0.7;
  const std::string plain = soft_attributes(matching_mujoco_softness(h, time_constant, damping_ratio, 1.0));
  xml = with_value(with_value(xml, "option", mujoco_option(h)), "plain", plain);
  std::string unmatched = xml;
  for (int link = 1; link <= 4; ++link) unmatched = with_value(unmatched, "soft" + std::to_string(link), plain);
  const double half_length[4] = {0.15, 0.125, 0.125, 0.1};
  for (int link = 1; link <= 4; ++link) {
    // ρ at an end of the link (its axis along x in the load pose).
    const std::string name = "link" + std::to_string(link);
    const double ratio = inverse_mass_ratio(unmatched, name, {half_length[link - 1], 0, 0});
    xml = with_value(xml, "soft" + std::to_string(link),
                     soft_attributes(matching_mujoco_softness(h, time_constant, damping_ratio, ratio)));
  }
  ConvexMujocoSetup setup;
  setup.xml = xml;
  setup.dt = h;
  setup.contact_time_constant = time_constant;
  setup.contact_damping_ratio = damping_ratio;
  setup.joint_time_constant = 1e-2 * h;  // the default 1e-5 s at h = 1 ms; κ ≈ 1e-4 at every h
  setup.bodies = {"link1", "link2", "link3", "link4"};
  setup.joints = {"yaw1", "yaw2", "yaw3", "yaw4"};
  setup.controls = {3.0, 1.0};
  return setup;
}

// Largest difference over the times both runs share (every step of `coarse`, every
// `refinement`-th of `fine`), per quantity: joint angles, joint rates, positions, angular
// velocities.
struct ArmDifference {
  double joint_angle = 0.0, joint_rate = 0.0, position = 0.0, angular_velocity = 0.0;
};
ArmDifference arm_difference(const ConvexMujocoRun& run, std::size_t stride) {
  ArmDifference difference;
  for (std::size_t t = stride - 1; t < run.diffphys.size(); t += stride) {
    for (std::size_t j = 0; j < run.joint_angle_difference[t].size(); ++j) {
      difference.joint_angle = std::max(difference.joint_angle, std::abs(run.joint_angle_difference[t][j]));
      difference.joint_rate = std::max(difference.joint_rate, std::abs(run.joint_rate_difference[t][j]));
    }
    for (std::size_t b = 0; b < run.diffphys[t].size(); ++b) {
      difference.position =
          std::max(difference.position, largest_difference(run.diffphys[t][b].position, run.mujoco[t][b].position));
      difference.angular_velocity =
          std::max(difference.angular_velocity,
                   largest_difference(run.diffphys[t][b].angular_velocity, run.mujoco[t][b].angular_velocity));
    }
  }
  return difference;
}

void expect_first_order(const ArmDifference& coarse, const ArmDifference& fine) {
  const std::pair<const char*, double> ratios[] = {
      {"joint angle", fine.joint_angle / coarse.joint_angle},
      {"joint rate", fine.joint_rate / coarse.joint_rate},
      {"position", fine.position / coarse.position},
      {"angular velocity", fine.angular_velocity / coarse.angular_velocity}};
  for (const auto& [quantity, ratio] : ratios) {
    std::printf("arm: %s difference at h/2 over at h: %.4f\n", quantity, ratio);
    EXPECT_NEAR(ratio, 0.5, 0.1) << quantity;
  }
}

TEST(ConvexMujoco, FourLinkArmDraggedAcrossTheGroundAgreesToFirstOrderInTheStep) {
  const ConvexMujocoRun run = run_side_by_side(arm_setup(kConvexMujocoDt));
  ASSERT_FALSE(run.diffphys.empty());
  report("arm", run);
  // The scenario: eight contacts (two per link) at every step in both, and the arm turned.
  for (std::size_t t = 0; t < run.diffphys_contacts.size(); ++t) {
    ASSERT_EQ(run.diffphys_contacts[t], 8) << "step " << t;
    ASSERT_EQ(run.mujoco_contacts[t], 8) << "step " << t;
  }
  EXPECT_GT(std::abs(std::atan2(run.diffphys.back()[3].position.y, run.diffphys.back()[3].position.x)), 0.1);
  const ConvexMujocoRun half = run_side_by_side(arm_setup(kConvexMujocoDt / 2));
  ASSERT_FALSE(half.diffphys.empty());
  expect_first_order(arm_difference(run, 1), arm_difference(half, 2));
}

TEST(ConvexMujoco, FourLinkArmComparisonFailsWithTwentyPercentMoreFriction) {
  ConvexMujocoSetup coarse = arm_setup(kConvexMujocoDt), fine = arm_setup(kConvexMujocoDt / 2);
  coarse.diffphys_friction_scale = fine.diffphys_friction_scale = 1.2;
  const ArmDifference at_h = arm_difference(run_side_by_side(coarse), 1);
  const ArmDifference at_half = arm_difference(run_side_by_side(fine), 2);
  EXPECT_GT(at_half.joint_angle / at_h.joint_angle, 0.6);
  EXPECT_GT(at_half.position / at_h.position, 0.6);
}

}  // namespace
}  // namespace diffphys::convex_mujoco_test
#endif  // DIFFPHYS_TESTS_HAVE_MUJOCO
