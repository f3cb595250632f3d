// world/coupling_report.cpp — the coupling's PartReport (world/part_report.hpp) in a world
// of rigid and soft bodies: for `diffphys info`, one- or two-way, substeps, which rigid body
// each soft frame follows, the soft nodes attached to each body (with their stiffness) and the
// shapes moving with them; in the simulate summary's scene line, the kind of coupling.
#include <algorithm>
#include <cmath>
#include <ostream>
#include <span>

#include "world/part_report.hpp"

namespace diffphys::report {

namespace {

const char* obstacle_type_name(soft::ObstacleType type) {
  switch (type) {
    case soft::ObstacleType::Plane: return "plane";
    case soft::ObstacleType::Sphere: return "sphere";
    case soft::ObstacleType::Box: return "box";
    case soft::ObstacleType::Capsule: return "capsule";
  }
  return "shape";
}

// "0, 1, 2, … (49 nodes)": the first few indices of a list.
std::string index_list(const std::vector<int>& indices, std::size_t shown = 8) {
  std::string text;
  for (std::size_t i = 0; i < std::min(indices.size(), shown); ++i)
    text.append(i > 0 ? ", " : "").append(std::to_string(indices[i]));
  if (indices.size() > shown) text.append(", …");
  return text;
}

class CouplingReport final : public PartReport {
 public:
  CouplingReport(const World& world, const WorldParams& params) : world_(world), soft_params_(soft_params(world, params)) {}

  std::string name() const override { return "coupling"; }
  std::string single_heading() const override { return ""; }
  void describe(std::ostream& out, const std::string& heading) const override;
  std::string scene_summary() const override {
    return std::string("coupled (") + (world_.coupling.two_way ? "two-way" : "one-way") + "), " +
           std::to_string(world_.soft->model.frame_attachment_nodes.size()) + " nodes attached to rigid bodies, " +
           std::to_string(world_.coupling.substeps) + " rigid steps per soft step";
  }
  void observe(long long, const WorldState&, const WorldStepStatus&) override {}
  void print_summary(std::ostream&, const WorldState&) const override {}
  bool print_failures(std::ostream&) const override { return false; }

 private:
  const World& world_;
  soft::SoftParams soft_params_;
};

void CouplingReport::describe(std::ostream& out, const std::string&) const {
  const Model& rigid = world_.rigid->model;
  const soft::SoftModel& soft_model = world_.soft->model;
  const WorldCoupling& system = world_.coupling;
  const auto body_name = [&](int frame) {
    return rigid.bodies[static_cast<std::size_t>(system.frame_bodies[static_cast<std::size_t>(frame)])].name;
  };
  out << "coupling: "
            << (system.two_way ? "two-way (the attachment and contact forces act back on the rigid bodies, staggered by one soft step)"
                               : "one-way (the rigid bodies move the soft body; its forces do not act on them)")
            << "\n";
  out << "substeps " << system.substeps << ": soft dt " << number(soft_model.dt) << " s = " << system.substeps
            << " rigid steps of " << number(rigid.dt) << " s\n";

  out << "\nframes (" << soft_model.frames.size() << ", soft θ slices frame/<name>/pose set from the rigid body each step):\n";
  for (std::size_t f = 0; f < soft_model.frames.size(); ++f)
    out << "  [" << f << "] " << soft_model.frames[f] << "  follows rigid body " << body_name(static_cast<int>(f)) << "\n";

  const auto& nodes = soft_model.frame_attachment_nodes;
  out << "\nattachments (" << nodes.size() << " soft nodes tied to rigid bodies):\n";
  const std::span<const double> stiffness =
      soft_model.layout.frame_attachment_stiffness < 0
          ? std::span<const double>()
          : std::span<const double>(soft_params_.values)
                .subspan(static_cast<std::size_t>(soft_model.layout.frame_attachment_stiffness), nodes.size());
  for (std::size_t f = 0; f < soft_model.frames.size(); ++f) {
    std::vector<int> attached;
    double low = INFINITY, high = -INFINITY;
    for (std::size_t a = 0; a < nodes.size(); ++a) {
      if (soft_model.frame_attachment_frames[a] != static_cast<int>(f)) continue;
      attached.push_back(nodes[a]);
      if (!stiffness.empty()) {
        low = std::min(low, stiffness[a]);
        high = std::max(high, stiffness[a]);
      }
    }
    if (attached.empty()) continue;
    out << "  " << body_name(static_cast<int>(f)) << ": " << attached.size() << " nodes (" << index_list(attached)
              << "), stiffness " << (low == high ? number(low) : number(low) + " to " + number(high)) << " N/m\n";
  }

  std::vector<std::size_t> moving;
  for (std::size_t i = 0; i < soft_model.obstacles.size(); ++i)
    if (soft_model.obstacles[i].frame >= 0) moving.push_back(i);
  out << "\ncolliders (" << moving.size() << " soft obstacles moving with rigid bodies):\n";
  for (const std::size_t i : moving) {
    const soft::Obstacle& obstacle = soft_model.obstacles[i];
    out << "  [" << i << "] " << obstacle.name << "  " << obstacle_type_name(obstacle.type) << " on "
              << body_name(obstacle.frame);
    if (i < soft_model.layout.obstacle_friction.size() && soft_model.layout.obstacle_friction[i] >= 0)
      out << "  friction "
                << number(soft_params_.values[static_cast<std::size_t>(soft_model.layout.obstacle_friction[i])]);
    out << "\n";
  }
}

}  // namespace

std::unique_ptr<PartReport> make_coupling_report(const World& world, const WorldParams& params) {
  return std::make_unique<CouplingReport>(world, params);
}

}  // namespace diffphys::report
