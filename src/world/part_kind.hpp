// world/part_kind.hpp — the registry of the kinds of part a world can hold (rigid bodies, soft
// bodies, a fluid): each kind's folder describes it once in a PartKind (its slices of the
// world's flat vectors and its state's conversion to and from them, its Part for the schedule,
// its report, its health norms, its gradient check, its recording estimate), and the world's
// shared code — the layout, pack_state/unpack_state, the schedule's parts and its gradient
// view, the reports, combined_health, check_world_gradients, the command line's recording
// estimate — loops over part_kinds() instead of naming the kinds. part_kinds.cpp lists them,
// one line per kind, in the order their slices come in every vector and their parts step.
// docs/architecture.md, "What a part provides", says which files a new kind touches.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "diffphys/world.hpp"
#include "diffphys/world_gradcheck.hpp"
#include "world/part.hpp"

namespace diffphys::report {
class PartReport;
}

namespace diffphys::world {

// A part's share of combined_health (diffphys/gradient_health.hpp): views of its health in
// WorldGradients (empty for a part the world does not hold).
struct PartHealthSummary {
  std::span<const double> state_gradient_norm;  // (T + 1) ‖x̄_t‖ of its slice, after clipping
  int first_non_finite_step = -1;
  std::string_view first_non_finite_stage;
  int clipped_steps = 0;
  bool solver_converged = true;
  std::string_view stage_prefix;  // before its first_non_finite_stage in the combined health ("soft: ")
};

// What a kind of part provides to the world's shared code. Plain function pointers: the table
// is filled once (part_kinds(), at its first call) and nothing in it allocates when called per step.
struct PartKind {
  // "rigid", "soft", "fluid": the name of its report section, its trajectory document under
  // "parts" and its entry in WorldLayout::parts.
  std::string_view name;
  bool (*held_by)(const World& world);
  // Appends its slices to the four vectors of `layout` (the world records their ranges).
  void (*add_slices)(const World& world, WorldLayout& layout);
  // Where the layout keeps its offsets under their own names (soft_state_offset, ...): null
  // for a kind that has none (WorldLayout::parts holds every kind's ranges).
  int WorldLayout::*legacy_offsets[4];  // state, tangent, params, controls

  // A scene file's section that holds this kind alone ("fluid") and its reader, given the
  // whole file's object (it refuses the sections it cannot share a scene with); empty and
  // null for a kind read by parse_json_parts (src/world/world.cpp: "rigid", "soft" and their
  // "coupling", read together).
  std::string_view section;
  World (*read_section)(const nlohmann::json& root, const std::string& source);
  // Throws Error (naming world.source) for a world it cannot share (a fluid beside bodies: no
  // coupling yet); null: any.
  void (*check_world)(const World& world);
  // Whether its statuses of one world step converged (true when the status holds none).
  bool (*converged)(const WorldStepStatus& status);

  // Its step (s) and the time of its state; the world step is the last held kind's step
  // (the coarsest: a rigid part takes several steps inside a soft step).
  double (*dt)(const World& world);
  // x_0 of the scene into `state` (its field only); its scene's θ and one world step's
  // default controls (its ranges of the world's vectors).
  void (*initial_state)(const World& world, WorldState& state);
  double (*time)(const WorldState& state);
  std::span<const double> (*default_params)(const World& world);
  void (*default_controls)(const World& world, std::span<double> controls);
  // Its state into its range of the flat state vector (throws Error for a state of the wrong
  // size) and back.
  void (*pack)(const World& world, const WorldState& state, std::span<double> values);
  void (*unpack)(const World& world, std::span<const double> values, WorldState& state);
  // Its spans of WorldStateGradient over its range of a tangent vector.
  void (*view_gradient)(const World& world, std::span<double> tangent, WorldStateGradient& gradient);

  // Its part in the world's schedule (world/part.hpp), which steps every world.
  std::unique_ptr<Part> (*make_part)(const World& world);

  std::unique_ptr<report::PartReport> (*make_report)(const World& world, const WorldParams& params);
  PartHealthSummary (*health)(const WorldGradients& gradients);
  // check_world_gradients of a world whose last held kind this is; null: not checked.
  WorldGradientCheckReport (*check_gradients)(const World& world, std::span<const double> controls,
                                              const GradientCheckOptions& options);
  int (*default_gradcheck_steps)(const World& world);
  // A recorded frame's memory beyond the frame's own (tools' refusal of recordings that do not
  // fit), and the words that name its size in that message ("3 bodies").
  double (*recording_bytes_per_frame)(const World& world);
  std::string (*recording_size)(const World& world);
  // Where a world holding no rigid part sets its solves (the rigid flags' refusal).
  std::string_view solver_settings;
};

// Every kind, in the world's order (part_kinds.cpp).
std::span<const PartKind> part_kinds();
const PartKind& kind_of(const WorldLayout::PartRange& range);

// Each kind's descriptor, defined in its own folder.
const PartKind& rigid_part_kind();  // world/rigid_kind.cpp
const PartKind& soft_part_kind();   // world/soft_kind.cpp
const PartKind& fluid_part_kind();  // fluid/fluid_kind.cpp

}  // namespace diffphys::world
