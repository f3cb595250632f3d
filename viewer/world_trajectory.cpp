// viewer/world_trajectory.cpp — WorldTrajectoryRecorder (world_trajectory.hpp): each part's
// trajectory writer (rigid, soft, fluid), and the world's envelope around them.
#include "world_trajectory.hpp"

#include <algorithm>
#include <iterator>
#include <sstream>
#include <string_view>

#include <nlohmann/json.hpp>

#include "diffphys/error.hpp"
#include "diffphys/trajectory.hpp"
#include "soft_view_json.hpp"

namespace diffphys::viewer {
namespace {

// The rigid bodies: TrajectoryRecorder's document (bodies, model block, contacts, energies).
class RigidTrajectory final : public PartTrajectory {
 public:
  RigidTrajectory(const World& world, const WorldParams& params)
      : params_(rigid_params(world, params)), recorder_(world.rigid->model, params_) {}
  std::string kind() const override { return "rigid"; }
  void record(long long, const WorldSimulator& simulator, const WorldStepStatus* status) override {
    recorder_.record(simulator.state().rigid, status ? simulator.rigid_contacts() : std::span<const Contact>(),
                     status ? status->rigid.back() : StepStatus{});
  }
  int frame_count() const override { return recorder_.frame_count(); }
  std::string document() const override {
    std::ostringstream stream;
    recorder_.write(stream);
    return stream.str();
  }

 private:
  Params params_;
  TrajectoryRecorder recorder_;
};

// The soft bodies: node positions, Newton's status and the energies per frame; the topology
// and the obstacles once.
class SoftTrajectory final : public PartTrajectory {
 public:
  SoftTrajectory(const World& world, const WorldParams& params) : model_(world.soft->model), params_(soft_params(world, params)) {}
  std::string kind() const override { return "soft"; }
  void record(long long step, const WorldSimulator& simulator, const WorldStepStatus* status) override {
    const soft::SoftState& state = simulator.state().soft;
    const soft::SoftEnergies energy = soft::soft_energies(model_, params_, state);
    const soft::SoftStepStatus none;
    const soft::SoftStepStatus& s = status ? *status->soft : none;
    frames_.push_back({{"step", step}, {"time", state.time}, {"positions", state.positions}, {"converged", s.converged},
                       {"iterations", s.iterations}, {"residual", s.residual},
                       {"energy", {{"kinetic", energy.kinetic}, {"gravity", energy.gravity}, {"elastic", energy.elastic},
                                   {"contact", energy.contact}}}});
  }
  int frame_count() const override { return static_cast<int>(frames_.size()); }
  std::string document() const override {
    return nlohmann::json{{"format", "diffphys-soft-trajectory"}, {"model", model_.name}, {"dt", model_.dt},
                          {"node_count", model_.node_count}, {"topology", soft_topology_json(model_)},
                          {"obstacles", soft_obstacles_json(model_)}, {"frames", frames_}}
        .dump();
  }

 private:
  const soft::SoftModel& model_;
  soft::SoftParams params_;
  nlohmann::json frames_ = nlohmann::json::array();
};

// The fluid: per frame its face velocities and scalar fields (diffphys/fluid.hpp's layouts)
// and the step's pressure solve; the grid once.
class FluidTrajectory final : public PartTrajectory {
 public:
  explicit FluidTrajectory(const World& world) : model_(world.fluid->model) {}
  std::string kind() const override { return "fluid"; }
  void record(long long step, const WorldSimulator& simulator, const WorldStepStatus* status) override {
    const fluid::FluidState& state = simulator.state().fluid;
    const auto u_count = static_cast<std::ptrdiff_t>(model_.u_count());
    const auto cells = static_cast<std::ptrdiff_t>(model_.cell_count());
    nlohmann::json scalars = nlohmann::json::object();
    for (int k = 0; k < model_.scalar_count; ++k)
      scalars[model_.scalar_names[static_cast<std::size_t>(k)]] =
          std::vector<double>(state.scalars.begin() + k * cells, state.scalars.begin() + (k + 1) * cells);
    const fluid::FluidStepStatus none;
    const fluid::FluidStepStatus& s = status ? *status->fluid : none;
    frames_.push_back({{"step", step},
                       {"time", state.time},
                       {"velocity_u", std::vector<double>(state.velocities.begin(), state.velocities.begin() + u_count)},
                       {"velocity_v", std::vector<double>(state.velocities.begin() + u_count, state.velocities.end())},
                       {"scalars", scalars},
                       {"pressure_iterations", s.pressure_iterations},
                       {"divergence_after", s.divergence_after},
                       {"cfl", s.cfl}});
  }
  int frame_count() const override { return static_cast<int>(frames_.size()); }
  std::string document() const override {
    return nlohmann::json{{"format", "diffphys-fluid-trajectory"}, {"version", 1}, {"model", model_.name}, {"dt", model_.dt},
                          {"grid", {{"nx", model_.nx}, {"ny", model_.ny}, {"spacing", model_.spacing}}},
                          {"scalars", model_.scalar_names}, {"frames", frames_}}
        .dump();
  }

 private:
  const fluid::FluidModel& model_;
  nlohmann::json frames_ = nlohmann::json::array();
};

// Each kind's writer, by the kind's name (WorldLayout::PartRange::kind): one line per kind.
struct TrajectoryWriterKind {
  std::string_view kind;
  std::unique_ptr<PartTrajectory> (*make)(const World& world, const WorldParams& params);
};
constexpr TrajectoryWriterKind kTrajectoryWriters[] = {
    {"rigid", [](const World& w, const WorldParams& p) -> std::unique_ptr<PartTrajectory> { return std::make_unique<RigidTrajectory>(w, p); }},
    {"soft", [](const World& w, const WorldParams& p) -> std::unique_ptr<PartTrajectory> { return std::make_unique<SoftTrajectory>(w, p); }},
    {"fluid", [](const World& w, const WorldParams&) -> std::unique_ptr<PartTrajectory> { return std::make_unique<FluidTrajectory>(w); }},
};

// The parts' writers, in the world's order.
std::vector<std::unique_ptr<PartTrajectory>> make_part_trajectories(const World& world, const WorldParams& params) {
  std::vector<std::unique_ptr<PartTrajectory>> parts;
  for (const WorldLayout::PartRange& range : world.layout().parts) {
    const auto writer = std::find_if(std::begin(kTrajectoryWriters), std::end(kTrajectoryWriters),
                                     [&](const TrajectoryWriterKind& w) { return w.kind == range.kind; });
    if (writer == std::end(kTrajectoryWriters))
      throw Error(message(world.source, ": no trajectory writer for a '", range.kind, "' part (viewer/world_trajectory.cpp)"));
    parts.push_back(writer->make(world, params));
  }
  return parts;
}

}  // namespace

WorldTrajectoryRecorder::WorldTrajectoryRecorder(const World& world, const WorldParams& params)
    : world_(world), parts_(make_part_trajectories(world, params)) {}

WorldTrajectoryRecorder::~WorldTrajectoryRecorder() = default;

void WorldTrajectoryRecorder::record(long long step, const WorldSimulator& simulator, const WorldStepStatus* status) {
  for (const auto& part : parts_) part->record(step, simulator, status);
}

int WorldTrajectoryRecorder::frame_count() const { return parts_.front()->frame_count(); }

std::string WorldTrajectoryRecorder::document() const {
  if (parts_.size() == 1) return parts_.front()->document();
  nlohmann::json parts = nlohmann::json::object();
  for (const auto& part : parts_) parts[part->kind()] = nlohmann::json::parse(part->document());
  return nlohmann::json{{"format", "diffphys-world-trajectory"}, {"version", 1}, {"name", world_.name}, {"dt", world_.dt()},
                        {"parts", parts}}
      .dump();
}

std::string WorldTrajectoryRecorder::file_text() const {
  std::string text = document();
  if (text.empty() || text.back() != '\n') text += '\n';
  return text;
}

}  // namespace diffphys::viewer
