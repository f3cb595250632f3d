// viewer/world_trajectory.cpp — WorldTrajectoryRecorder (world_trajectory.hpp): the three
// trajectory formats the replay page reads, chosen by the parts a world holds.
#include "world_trajectory.hpp"

#include <sstream>

#include <nlohmann/json.hpp>

#include "diffphys/trajectory.hpp"
#include "soft_view_json.hpp"

namespace diffphys::viewer {

struct WorldTrajectoryRecorder::Frames {
  const World& world;
  WorldParams params;
  Params rigid;
  soft::SoftParams soft;
  std::unique_ptr<TrajectoryRecorder> rigid_recorder;  // rigid-only worlds
  nlohmann::json frames = nlohmann::json::array();      // soft and coupled worlds
};

namespace {

// The rigid trajectory files' "model" block (bodies with their shapes, joints, gravity:
// docs/scene-format.md, "Trajectory files"), so the viewer draws the rigid bodies' shapes.
nlohmann::json rigid_model_block(const Model& model, const Params& params, const State& state) {
  TrajectoryRecorder recorder(model, params);
  recorder.record(state, {}, StepStatus{});
  std::ostringstream text;
  recorder.write(text);
  return nlohmann::json::parse(text.str()).at("model");
}

}  // namespace

WorldTrajectoryRecorder::WorldTrajectoryRecorder(const World& world, const WorldParams& params)
    : frames_(std::make_unique<Frames>(Frames{world, params, {}, {}, {}, nlohmann::json::array()})) {
  if (world.has_rigid()) frames_->rigid = rigid_params(world, params);
  if (world.has_soft()) frames_->soft = soft_params(world, params);
  if (world.has_rigid() && !world.has_soft())
    frames_->rigid_recorder = std::make_unique<TrajectoryRecorder>(world.rigid->model, frames_->rigid);
}

WorldTrajectoryRecorder::~WorldTrajectoryRecorder() = default;

void WorldTrajectoryRecorder::record(long long step, const WorldSimulator& simulator, const WorldStepStatus* status) {
  Frames& f = *frames_;
  const World& world = f.world;
  const WorldState& state = simulator.state();
  if (f.rigid_recorder) {
    f.rigid_recorder->record(state.rigid, status ? simulator.rigid_contacts() : std::span<const Contact>(),
                             status ? status->rigid.back() : StepStatus{});
    return;
  }
  if (!world.has_rigid()) {
    const soft::SoftEnergies energy = soft::soft_energies(world.soft->model, f.soft, state.soft);
    const soft::SoftStepStatus none;
    const soft::SoftStepStatus& s = status ? *status->soft : none;
    f.frames.push_back({{"step", step}, {"time", state.soft.time}, {"positions", state.soft.positions},
                        {"converged", s.converged}, {"iterations", s.iterations}, {"residual", s.residual},
                        {"energy", {{"kinetic", energy.kinetic}, {"gravity", energy.gravity}, {"elastic", energy.elastic},
                                    {"contact", energy.contact}}}});
    return;
  }
  const Model& rigid = world.rigid->model;
  nlohmann::json bodies = nlohmann::json::array();
  for (int b = 1; b < rigid.body_count(); ++b) {
    const auto i = static_cast<std::size_t>(b);
    const Vec3& p = state.rigid.position[i];
    const Quat& q = state.rigid.orientation[i];
    bodies.push_back({{"name", rigid.bodies[i].name}, {"position", {p.x, p.y, p.z}}, {"orientation", {q.w, q.x, q.y, q.z}}});
  }
  nlohmann::json frame{{"step", step}, {"time", state.soft.time}, {"positions", state.soft.positions}, {"bodies", bodies}};
  if (status) {
    frame["converged"] = status->soft->converged;
    frame["iterations"] = status->soft->iterations;
    frame["residual"] = status->soft->residual;
  }
  f.frames.push_back(frame);
}

int WorldTrajectoryRecorder::frame_count() const {
  return frames_->rigid_recorder ? frames_->rigid_recorder->frame_count() : static_cast<int>(frames_->frames.size());
}

std::string WorldTrajectoryRecorder::document() const {
  const Frames& f = *frames_;
  const World& world = f.world;
  if (f.rigid_recorder) {
    std::ostringstream stream;
    f.rigid_recorder->write(stream);
    return stream.str();
  }
  const soft::SoftModel& soft_model = world.soft->model;
  if (!world.has_rigid())
    return nlohmann::json{{"format", "diffphys-soft-trajectory"}, {"model", soft_model.name}, {"dt", soft_model.dt},
                          {"node_count", soft_model.node_count}, {"topology", soft_topology_json(soft_model)},
                          {"obstacles", soft_obstacles_json(soft_model)}, {"frames", f.frames}}
        .dump();
  const Model& rigid = world.rigid->model;
  return nlohmann::json{{"format", "diffphys-coupled-trajectory"}, {"rigid_model", rigid.name},
                        {"soft_model", soft_model.name}, {"dt", soft_model.dt}, {"substeps", world.coupling.substeps},
                        {"node_count", soft_model.node_count}, {"model", rigid_model_block(rigid, f.rigid, world.rigid->state)},
                        {"topology", soft_topology_json(soft_model)}, {"obstacles", soft_obstacles_json(soft_model)},
                        {"frames", f.frames}}
      .dump();
}

std::string WorldTrajectoryRecorder::file_text() const {
  std::string text = document();
  if (text.empty() || text.back() != '\n') text += '\n';
  return text;
}

}  // namespace diffphys::viewer
