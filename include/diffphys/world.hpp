// diffphys/world.hpp — one world: a scene of rigid bodies, soft bodies or both (and, as they
// join, fluids and sensors) as one model, one state, one parameter vector, one control vector,
// one rollout and one gradient (docs/architecture.md). A fluid (docs/fluids.md) is a part too.
//
//   World world = load_world("examples/soft/cloth_on_pendulum.json");   // any scene file
//   WorldParams params = world.default_params();
//   WorldRollout rollout(world, params);
//   rollout.run(world.initial_state(), {}, T);      // controls: T × world.layout().control_count
//   WorldGradients g = rollout.backward([&](int t, const WorldState& x, WorldStateGradient& dx) {
//     if (t == T) dx.soft_positions[3 * tip + 2] += 2 * (x.soft.positions[3 * tip + 2] - target);
//   });
//   g.param(world, "soft/tet_material/rubber/youngs_modulus");
//
// Each part a scene holds is a subsystem with its own slices of the flat vectors (WorldLayout):
//   state    "body/<name>" 13 each [p, q (w, x, y, z), v, ω] (body 0, the world, included),
//            "soft/positions", "soft/velocities" (3 per node each);
//   tangent  (the layout of state gradients) "body/<name>" 12 each [p, θ, v, ω] with the
//            world-frame rotation increment θ of docs/gradients.md, then the soft slices;
//   params   the rigid Model's slices under their own names ("body/ball/mass", "gravity"),
//            each soft slice under "soft/<name>" ("soft/gravity", "soft/node_mass");
//   controls per world step: "actuator/<name>" (one per rigid substep: substeps values each),
//            then "soft/forces" (3 per node, N).
// A fluid adds, after those: state and tangent "fluid/velocity_u" ((nx+1) ny faces),
// "fluid/velocity_v" (nx (ny+1) faces), "fluid/scalar/<name>" (one per cell each; the
// layouts of diffphys/fluid.hpp); params "fluid/viscosity", "fluid/buoyancy"; controls
// "fluid/force" (2 per cell, m/s²). A fluid is not coupled to bodies yet: a scene holds
// either a fluid or bodies.
// A world step is the coarsest step of the scene: the soft step when the scene holds soft
// bodies (its rigid part then takes `substeps` steps per world step), else the rigid step.
// How the parts interact (one-way or two-way, substeps) is the world's coupling, read from
// the scene file; the rollout is the same class whatever the scene holds.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "diffphys/camera.hpp"
#include "diffphys/fluid.hpp"
#include "diffphys/model_builder.hpp"
#include "diffphys/robot_loaders.hpp"
#include "diffphys/rollout.hpp"
#include "diffphys/soft.hpp"
#include "diffphys/soft_rollout.hpp"

namespace diffphys {

// A named range of one of the world's flat vectors.
struct NamedSlice {
  std::string name;
  int offset = 0;
  int size = 0;
};

struct WorldLayout {
  std::vector<NamedSlice> state, tangent, params, controls;
  int state_size = 0, tangent_size = 0, param_count = 0, control_count = 0;
  // Each part the world holds, in the world's order (the registry of part kinds,
  // src/world/part_kind.hpp): its kind and its range of each vector.
  struct PartRange {
    std::string kind;    // "rigid", "soft", "fluid"
    int kind_index = 0;  // its place in the registry
    int state_offset = 0, state_size = 0, tangent_offset = 0, tangent_size = 0;
    int param_offset = 0, param_count = 0, control_offset = 0, control_count = 0;
  };
  std::vector<PartRange> parts;
  const PartRange* part(std::string_view kind) const;  // nullptr: the world holds no such part
  // The same offsets under their kinds' names, where a kind's slices start whether or not the
  // world holds it (the rigid part's slices come first, then the soft part's, then the fluid's).
  int soft_state_offset = 0, soft_tangent_offset = 0, soft_param_offset = 0, soft_control_offset = 0;
  int fluid_state_offset = 0, fluid_tangent_offset = 0, fluid_param_offset = 0, fluid_control_offset = 0;

  // The slice named `name` in `slices`; throws Error naming the vector ("parameter", ...)
  // and the nearest known name.
  static const NamedSlice& find(std::span<const NamedSlice> slices, std::string_view name, std::string_view vector);
};

// How the parts of a world act on each other (docs/soft-bodies.md#rigid-and-soft-bodies-together).
struct WorldCoupling {
  std::vector<int> frame_bodies;  // (soft frames) the rigid body that moves each soft frame
  int substeps = 1;               // rigid steps per soft step
  bool two_way = false;           // the soft bodies' reactions act on the rigid bodies
};

class World {
 public:
  std::string name;
  std::string source;  // the file it was read from, or "<string>"
  std::optional<Scene> rigid;           // bodies, shapes, joints, actuators and their defaults
  std::optional<soft::SoftBuild> soft;  // nodes, elements, obstacles and their defaults
  WorldCoupling coupling;
  // A fluid on a grid (docs/fluids.md): its model, θ and initial state (scalars as the scene's
  // "fluid" section fills them).
  std::optional<fluid::FluidBuild> fluid;
  // The scene's "cameras" list (docs/scene-format.md, "Cameras"): sensors that render the rigid
  // part from a world state and θ (WorldCamera, diffphys/world_camera.hpp); not part of the
  // state, the parameters or the rollout.
  std::vector<Camera> cameras;
  // How the rigid shapes look to cameras[i]: default_appearance with the colours and background
  // of the camera's entry in the scene file. A camera with no entry here (a World built in C++)
  // sees default_appearance.
  std::vector<Appearance> camera_appearances;

  // Throws Error when the parts do not fit together (time steps, frame bodies) or none is present.
  World(std::string name, std::string source, std::optional<Scene> rigid, std::optional<soft::SoftBuild> soft,
        WorldCoupling coupling = {}, std::optional<fluid::FluidBuild> fluid = std::nullopt);

  bool has_rigid() const { return rigid.has_value(); }
  bool has_soft() const { return soft.has_value(); }
  bool has_fluid() const { return fluid.has_value(); }
  // "rigid", "soft", "rigid + soft" or "fluid".
  std::string kind() const;
  double dt() const;  // the world step, s
  int rigid_steps_per_step() const { return has_soft() ? coupling.substeps : 1; }
  const WorldLayout& layout() const { return layout_; }
  // The rigid parameter slices that also shape the soft part: the sizes of the rigid shapes
  // the soft nodes collide with, copied into the soft obstacles when the scene was read.
  // A rollout refuses values other than the scene's for them, and their gradients miss the
  // soft contact's share (they are listed in WorldGradients::not_differentiable).
  std::span<const NamedSlice> collider_geometry() const { return collider_geometry_; }

  // The scene's initial state, parameter values and default controls (one world step's worth).
  struct WorldState initial_state() const;
  struct WorldParams default_params() const;
  std::vector<double> default_controls() const;

 private:
  WorldLayout layout_;
  std::vector<NamedSlice> collider_geometry_;
};

// Any scene file: a JSON scene with any of the sections "rigid", "soft", "coupling"
// (docs/scene-format.md); a JSON rigid scene without sections (bodies at the top level, as
// before); a soft scene ({"soft": ...}); a URDF or MJCF robot (by extension). Errors name the
// file, the item and the value.
World load_world(const std::filesystem::path& path, const UrdfOptions& urdf_options = {});
World parse_world(std::string_view json_text, const std::string& source = "<string>",
                  const std::string& base_directory = ".");

// x_t of every part. A part the world does not hold stays empty.
struct WorldState {
  double time = 0.0;
  State rigid;
  soft::SoftState soft;
  fluid::FluidState fluid;
};

// The flat state vector (layout().state_size) and back. unpack_state throws Error for a wrong size.
std::vector<double> pack_state(const World& world, const WorldState& state);
WorldState unpack_state(const World& world, std::span<const double> values);

// θ of every part, one flat vector (layout().params).
struct WorldParams {
  std::vector<double> values;
  std::span<double> slice(const World& world, std::string_view name);
  std::span<const double> slice(const World& world, std::string_view name) const;
};

// The rigid and soft parameter vectors inside a WorldParams, as each part's engine takes them.
Params rigid_params(const World& world, const WorldParams& params);
soft::SoftParams soft_params(const World& world, const WorldParams& params);
fluid::FluidParams fluid_params(const World& world, const WorldParams& params);

// Where a loss adds dL/dx_t (tangent layout): spans of one flat tangent vector.
struct WorldStateGradient {
  std::span<double> all;              // (layout().tangent_size)
  std::span<double> rigid;            // 12 per body
  std::span<double> soft_positions;   // 3 per node
  std::span<double> soft_velocities;  // 3 per node
  std::span<double> fluid_velocities;  // (nu + nv) faces, diffphys/fluid.hpp
  std::span<double> fluid_scalars;     // (nscalar × ncell)
};

// An empty function is a loss of 0 (every gradient 0).
using WorldLossGradient = std::function<void(int step, const WorldState& state, WorldStateGradient& gradient)>;

// Feedback inside a world rollout (closed loop): u_t = π(t, x_t), one world step's controls
// (layout().control_count, zeroed before each call). As diffphys::Controller: act() once per
// step going forward; act_backward() once per step going back, t = T−1 … 0, with ū_t, adding
// (∂π/∂x_t)ᵀ ū_t into `state_gradient` (tangent layout) and accumulating the gradient of its
// own parameters. Any world takes one (rigid, soft or both).
class WorldController {
 public:
  virtual ~WorldController() = default;
  virtual void act(int step, const WorldState& state, std::span<double> controls) = 0;
  virtual void act_backward(int step, const WorldState& state, std::span<const double> control_gradient,
                            WorldStateGradient& state_gradient) = 0;
};

struct WorldRolloutOptions {
  // As RolloutOptions (checkpoints, memory budget, decay, clipping, step records), applied to
  // every part.
  RolloutOptions rollout;
};

struct WorldGradients {
  std::vector<double> initial_state;  // (tangent_size) dL/dx_0
  std::vector<double> controls;       // (T × control_count) dL/du_t
  std::vector<double> params;         // (param_count) dL/dθ
  // What each part's backward pass saw (empty defaults for a part the world does not hold).
  GradientHealth rigid_health;
  soft::SoftGradientHealth soft_health;
  fluid::FluidGradientHealth fluid_health;
  bool solver_converged = true;  // every forward step of every part converged
  // false when the per-step logs did not fit in a quarter of RolloutOptions::memory_budget:
  // the parts' per-step arrays (state_gradient_norm, stage_gain, contact_changes,
  // non_converged_steps) are then empty; the summaries (convergence, first unhealthy step,
  // contact_change_count, largest norm, clipped steps) are filled either way.
  bool per_step_kept = true;
  // As Gradients::not_differentiable (rigid slices at a non-differentiable value, static
  // bodies), and in a world of both parts the rigid shape sizes the soft part collides with
  // (World::collider_geometry).
  std::vector<std::string> not_differentiable;

  std::span<const double> param(const World& world, std::string_view name) const;
};

// One world step's status, per part.
struct WorldStepStatus {
  std::span<const StepStatus> rigid;  // the world step's rigid substeps (empty: no rigid part)
  const soft::SoftStepStatus* soft = nullptr;
  const fluid::FluidStepStatus* fluid = nullptr;
  bool converged() const;
};

class WorldRollout {
 public:
  // Copies the world's models; `params` is referenced and must outlive the rollout (change it
  // only between run() and the next run()).
  WorldRollout(const World& world, const WorldParams& params, WorldRolloutOptions options = {});
  WorldRollout(const WorldRollout&) = delete;
  WorldRollout& operator=(const WorldRollout&) = delete;
  ~WorldRollout();

  // `steps` world steps from `initial`; controls: steps × control_count (row-major) or empty
  // for the world's default controls held. Throws Error for mismatched sizes or invalid input.
  void run(const WorldState& initial, std::span<const double> controls, int steps);
  // Closed loop: the controls of step t are controller.act(t, x_t). The controller is
  // referenced until the next run() and must outlive backward().
  void run(const WorldState& initial, WorldController& controller, int steps);
  // The controls used at each step (steps × control_count): the given ones, the defaults
  // held, or the controller's.
  std::vector<double> controls() const;

  int steps() const { return steps_; }
  WorldState state(int step) const;
  const WorldState& final_state() const { return final_state_; }
  // Step `step` in [0, steps): from the per-step statuses when the budget kept them, else
  // recomputed from the nearest checkpoint (the spans point into the rollout: valid until the
  // next status() or run()).
  WorldStepStatus status(int step) const;
  // Whether the last run kept every step's status (per-step logs within a quarter of
  // RolloutOptions::memory_budget); when not, status(t) recomputes step t.
  bool statuses_kept() const;
  bool converged() const;                  // every step of every part
  // What the last run() keeps for backward(): a state every checkpoint_interval() steps (a
  // world whose coupling lags a step keeps the state before each too), those states' bytes,
  // and the bytes of the kept step records (each rigid substep's solution, or its Workspace
  // where no replay skips the solve or keep_step_workspaces asks; each soft step's Cholesky
  // factor; the step θ of a part that a coupling writes).
  int checkpoint_interval() const;
  std::size_t stored_state_bytes() const;
  std::size_t stored_record_bytes() const;

  WorldGradients backward(const WorldLossGradient& loss_gradient) const;

 private:
  struct Engine;
  World world_;  // a copy: the layout and the parts' models
  const WorldParams& params_;
  WorldRolloutOptions options_;
  std::unique_ptr<Engine> engine_;
  int steps_ = 0;
  WorldState final_state_;

  // Checks the parameters (size, finite, the soft part's fixed collider sizes) and copies them
  // into the engines.
  void refresh_params();
};

}  // namespace diffphys
