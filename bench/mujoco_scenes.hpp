// bench/mujoco_scenes.hpp — owns the MuJoCo side of the benchmark models: MJCF text for each
// model (from the constants of bench_models.hpp) and MujocoWorld, which loads such text from
// memory and owns the resulting mjModel/mjData. Compiled only when MuJoCo was found; the
// diffphys library itself never sees these headers.
#pragma once

#include <mujoco/mujoco.h>

#include <string>
#include <string_view>

namespace diffphys::bench {

// MJCF documents. Every model uses the Euler integrator at the same time step as diffphys.
std::string chain_mjcf(int link_count);
// chain_mjcf with a motor (gear 1, no control or force limit) on every hinge, in hinge order.
std::string motor_chain_mjcf(int link_count);
std::string bouncing_sphere_mjcf();
std::string arm_mjcf();
// solver: "PGS" or "Newton" (MuJoCo's option/solver values); cone: "pyramidal" or "elliptic".
std::string sphere_pile_mjcf(std::string_view solver, std::string_view cone = "pyramidal");
// The box tower and the 27-box pile, with the Newton solver and the elliptic cone (the
// convex formulation's cone).
std::string box_tower_mjcf(int height);
std::string box_pile_mjcf();
// The text of MuJoCo's humanoid.xml (HumanoidDimensions::mjcf_path), unchanged; throws
// std::runtime_error if the file cannot be read (libmujoco-samples not installed).
std::string humanoid_mjcf();

// Switches a loaded model to the Newton solver on the elliptic friction cone, the convex
// formulation's counterpart; its other options (tolerance, iterations, integrator, time
// step) stay as the file gave them.
void use_newton_elliptic(mjModel* model);

// An mjModel and its mjData, loaded from MJCF text through MuJoCo's virtual file system.
// Throws std::runtime_error with MuJoCo's message if the text does not compile.
class MujocoWorld {
 public:
  explicit MujocoWorld(const std::string& mjcf_text);
  ~MujocoWorld();
  MujocoWorld(const MujocoWorld&) = delete;
  MujocoWorld& operator=(const MujocoWorld&) = delete;

  mjModel* model() const { return model_; }
  mjData* data() const { return data_; }

 private:
  mjModel* model_ = nullptr;
  mjData* data_ = nullptr;
};

// Restitution e as MuJoCo's contact damping ratio: a damped spring whose bounce returns the
// fraction e of the approach speed has ζ = −ln e / √(π² + ln² e).
double damping_ratio_for_restitution(double restitution);

}  // namespace diffphys::bench
