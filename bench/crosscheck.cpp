// bench/crosscheck.cpp — owns `diffphys_bench_crosscheck`: evidence that the two engines'
// benchmark models are the same physical system, so the timings compare like with like.
//
// It simulates each model in diffphys and in MuJoCo from the same start and prints a few
// observables side by side: joint angles of the chain and of the arm, the bounce apexes of the
// sphere, the height of the settled pile. Agreement is expected to be close, not exact: the
// engines differ in formulation (maximal vs generalised coordinates, hard vs soft contact,
// a hard velocity servo vs a stiff velocity actuator). Not a test: it prints, it asserts nothing.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <span>
#include <utility>
#include <vector>

#include "bench_models.hpp"
#include "diffphys/simulator.hpp"
#include "diffphys_scenes.hpp"
#include "mujoco_scenes.hpp"

namespace diffphys::bench {
namespace {

struct DiffphysRun {
  Scene scene;
  State next;
  Workspace workspace;
  StepStatus last;

  explicit DiffphysRun(Scene built) : scene(std::move(built)), next(scene.state) {}
  void advance(int steps) {
    for (int k = 0; k < steps; ++k) {
      last = step(scene.model, scene.params, scene.state, scene.controls, next, workspace);
      std::swap(scene.state, next);
    }
  }
  double angle(int joint, int dof) const { return joint_position(scene.model, scene.state, joint, dof); }
};

void compare_chain(int links, int steps) {
  DiffphysRun ours(build_chain_scene(links));
  DiffphysRun reduced(build_chain_scene(links, Coordinates::Reduced));
  const MujocoWorld theirs(chain_mjcf(links));
  ours.advance(steps);
  reduced.advance(steps);
  for (int k = 0; k < steps; ++k) mj_step(theirs.model(), theirs.data());
  std::printf("chain N=%d after %.2f s: hinge angles (rad), diffphys (maximal, reduced coordinates) vs MuJoCo\n",
              links, steps * ChainDimensions::time_step);
  for (int joint = 0; joint < links; joint += std::max(1, (links - 1) / 2))
    std::printf("  hinge%-3d %+12.8f  %+12.8f  %+12.8f\n", joint, ours.angle(joint, 0), reduced.angle(joint, 0),
                theirs.data()->qpos[joint]);
}

// Apex heights of the sphere's centre after each bounce, over `steps`.
template <typename Height>
std::vector<double> bounce_apexes(int steps, Height&& height_after_step) {
  std::vector<double> apexes;
  double previous = height_after_step(), before_previous = previous + 1.0;
  for (int k = 1; k < steps; ++k) {
    const double current = height_after_step();
    if (previous > current && previous > before_previous) apexes.push_back(previous);
    before_previous = previous;
    previous = current;
  }
  return apexes;
}

void compare_bouncing_sphere() {
  using D = BouncingSphereDimensions;
  DiffphysRun ours(build_bouncing_sphere_scene());
  const MujocoWorld theirs(bouncing_sphere_mjcf());
  const std::vector<double> our_apexes = bounce_apexes(D::reset_period_steps, [&] {
    ours.advance(1);
    return ours.scene.state.position[1].z;
  });
  const std::vector<double> their_apexes = bounce_apexes(D::reset_period_steps, [&] {
    mj_step(theirs.model(), theirs.data());
    return theirs.data()->qpos[2];
  });
  std::printf("bouncing sphere: apex heights of the centre (m) after each bounce, diffphys vs MuJoCo\n");
  for (std::size_t k = 0; k < std::min<std::size_t>(4, std::max(our_apexes.size(), their_apexes.size())); ++k)
    std::printf("  bounce %zu  %.4f  %.4f\n", k + 1, k < our_apexes.size() ? our_apexes[k] : NAN,
                k < their_apexes.size() ? their_apexes[k] : NAN);
  std::printf("  height at %.1f s: %.4f  %.4f (radius %.2f)\n", D::reset_period_steps * D::time_step,
              ours.scene.state.position[1].z, theirs.data()->qpos[2], D::radius);
}

void compare_arm(int steps) {
  using D = ArmDimensions;
  DiffphysRun ours(build_arm_scene());
  const MujocoWorld theirs(arm_mjcf());
  ours.advance(steps);
  mjData* data = theirs.data();
  for (int k = 0; k < steps; ++k) {
    for (int actuator = 0; actuator < 4; ++actuator)
      data->ctrl[actuator] = D::servo_gain * (D::targets[actuator] - data->qpos[actuator]);
    mj_step(theirs.model(), data);
  }
  std::printf("arm after %.2f s: joint angles (rad), target / diffphys / MuJoCo\n", steps * D::time_step);
  const char* names[4] = {"shoulder_x", "shoulder_y", "elbow_x", "elbow_y"};
  for (int k = 0; k < 4; ++k)
    std::printf("  %-10s %+7.4f  %+9.5f  %+9.5f\n", names[k], D::targets[k], ours.angle(k / 2, k % 2), data->qpos[k]);
}

void compare_sphere_pile() {
  using D = SpherePileDimensions;
  DiffphysRun ours(build_sphere_pile_scene(SolverType::ProjectedGaussSeidel));
  const MujocoWorld theirs(sphere_pile_mjcf("PGS"));
  ours.advance(D::settle_steps);
  for (int k = 0; k < D::settle_steps; ++k) mj_step(theirs.model(), theirs.data());
  double our_mean = 0, their_mean = 0, our_top = 0, their_top = 0, our_speed = 0, their_speed = 0;
  const int first_sphere = ours.scene.model.body_index("sphere0");
  for (int s = 0; s < D::sphere_count; ++s) {
    const auto body = static_cast<std::size_t>(first_sphere + s);
    const double our_height = ours.scene.state.position[body].z;
    const double their_height = theirs.data()->qpos[7 * s + 2];
    our_mean += our_height / D::sphere_count;
    their_mean += their_height / D::sphere_count;
    our_top = std::max(our_top, our_height);
    their_top = std::max(their_top, their_height);
    our_speed = std::max(our_speed, norm(ours.scene.state.linear_velocity[body]));
    const double* v = theirs.data()->qvel + 6 * s;
    their_speed = std::max(their_speed, std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]));
  }
  std::printf("sphere pile after %.1f s (PGS): diffphys vs MuJoCo\n", D::settle_steps * D::time_step);
  std::printf("  mean centre height (m)  %.4f  %.4f\n", our_mean, their_mean);
  std::printf("  top centre height (m)   %.4f  %.4f\n", our_top, their_top);
  std::printf("  fastest sphere (m/s)    %.4f  %.4f\n", our_speed, their_speed);
  std::printf("  contacts                %d  %d (diffphys keeps pairs within its %.0f mm margin)\n",
              ours.last.contact_count, theirs.data()->ncon, 1000 * ours.scene.model.solver.contact_margin);
}

}  // namespace
}  // namespace diffphys::bench

int main() {
  using namespace diffphys::bench;
  std::printf("MuJoCo %s\n\n", mj_versionString());
  compare_chain(1, 500);
  compare_chain(10, 300);
  compare_bouncing_sphere();
  compare_arm(1000);  // mid-swing: the shoulder torque is saturated
  compare_arm(2000);  // settled on the targets
  compare_sphere_pile();
  return 0;
}
