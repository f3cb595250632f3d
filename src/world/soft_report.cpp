// world/soft_report.cpp — the soft part's PartReport (world/part_report.hpp): its
// description for `diffphys info` (what the scene builds: nodes, pinned nodes, springs, tets,
// cloth triangles and hinges, attachments, obstacles; the solver settings; every slice of θ
// with its values) and its lines of the `diffphys simulate` summary (Newton's convergence,
// the final mass, centre of mass, velocity and energies; the non-converged steps on stderr).
#include <algorithm>
#include <ostream>
#include <span>

#include "diffphys/error.hpp"
#include "world/rigid_soft_coupling.hpp"
#include "world/part_report.hpp"

namespace diffphys::report {

namespace {

using soft::SoftModel;
using soft::SoftParams;

// Up to `shown` values, then how many there are in all.
std::string values_text(std::span<const double> values, std::size_t shown = 8) {
  std::string text = "[";
  for (std::size_t i = 0; i < std::min(values.size(), shown); ++i) {
    if (i > 0) text.append(", ");
    text.append(number(values[i], 10));
  }
  if (values.size() > shown) text.append(", … (").append(std::to_string(values.size())).append(" values)");
  text.append("]");
  return text;
}

class SoftReport final : public PartReport {
 public:
  SoftReport(const World& world, const WorldParams& params) : world_(world), params_(soft_params(world, params)) {}

  std::string name() const override { return "soft"; }
  std::string single_heading() const override { return "soft scene"; }
  void describe(std::ostream& out, const std::string& heading) const override;

  std::string scene_summary() const override {
    const SoftModel& model = world_.soft->model;
    return "soft, " + std::to_string(model.node_count) + " nodes, " + std::to_string(model.tets.size()) + " tets, " +
           std::to_string(model.triangles.size()) + " triangles, " + std::to_string(model.springs.size()) + " springs, " +
           std::to_string(model.obstacles.size()) + " obstacles";
  }

  void observe(long long step, const WorldState& state, const WorldStepStatus& status) override {
    const soft::SoftStepStatus& s = *status.soft;
    // An unhealthy state is not a result (docs/robustness.md, "State health"): stop, as the
    // rigid report does; the outputs are written only after the run.
    if (s.health != soft::SoftStepStatus::Health::Ok)
      throw Error(message("step ", step, " (t = ", number(state.time), " s): soft '", world_.soft->model.name, "' ",
                          s.message, "; stopped, nothing written"));
    max_iterations_ = std::max(max_iterations_, s.iterations);
    max_residual_ = std::max(max_residual_, s.residual);
    if (!s.converged && ++non_converged_ <= static_cast<long long>(kListed)) listed_.push_back({step, s});
  }

  void print_summary(std::ostream& out, const WorldState& final_state) const override {
    const SoftModel& model = world_.soft->model;
    const soft::SoftState& state = final_state.soft;
    out << "solver      newton: "
        << (non_converged_ == 0 ? std::string("converged at every step")
                                : "did not converge at " + std::to_string(non_converged_) + " steps")
        << "; max residual " << number_or_zero(max_residual_, 3) << " N, max " << max_iterations_ << " iterations\n";
    // θ at the final state: moving frames at their bodies' final poses (coupled worlds).
    SoftParams theta = params_;
    if (world_.rigid)
      for (const bool previous : {true, false})
        world::set_frame_poses(model, theta, world_.coupling.frame_bodies, final_state.rigid, previous);
    std::vector<double> masses(static_cast<std::size_t>(model.node_count));
    soft::lumped_masses(model, theta, masses);
    double total = 0.0, lowest = 1e300;
    double centre[3] = {0, 0, 0}, velocity[3] = {0, 0, 0};
    for (int i = 0; i < model.node_count; ++i) {
      const double m = masses[static_cast<std::size_t>(i)];
      total += m;
      for (int r = 0; r < 3; ++r) {
        centre[r] += m * state.positions[static_cast<std::size_t>(3 * i + r)];
        velocity[r] += m * state.velocities[static_cast<std::size_t>(3 * i + r)];
      }
      lowest = std::min(lowest, state.positions[static_cast<std::size_t>(3 * i + 2)]);
    }
    if (total > 0)
      for (int r = 0; r < 3; ++r) {
        centre[r] /= total;
        velocity[r] /= total;
      }
    const soft::SoftEnergies energies = soft::soft_energies(model, theta, state);
    out << "final state mass " << number_or_zero(total) << " kg, centre of mass (" << number_or_zero(centre[0]) << ", "
        << number_or_zero(centre[1]) << ", " << number_or_zero(centre[2]) << ") m, velocity (" << number_or_zero(velocity[0])
        << ", " << number_or_zero(velocity[1]) << ", " << number_or_zero(velocity[2]) << ") m/s, lowest node z "
        << number_or_zero(lowest) << " m\n";
    out << "energies    kinetic " << number_or_zero(energies.kinetic) << " J, gravity " << number_or_zero(energies.gravity)
        << " J, elastic " << number_or_zero(energies.elastic) << " J, contact " << number_or_zero(energies.contact) << " J\n";
  }

  bool print_failures(std::ostream& err) const override {
    if (non_converged_ == 0) return false;
    const SoftModel& model = world_.soft->model;
    err << "diffphys: the Newton solver did not converge at " << non_converged_ << " steps (tolerance "
        << number_or_zero(model.newton.tolerance, 3) << " m/s, max " << model.newton.max_iterations << " iterations):\n";
    for (const auto& [step, status] : listed_)
      err << "  step " << step << ": " << status.iterations << " iterations, residual " << number_or_zero(status.residual, 3)
          << " N: " << status.message << "\n";
    return true;
  }

 private:
  static constexpr std::size_t kListed = 10;  // non-converged steps listed
  const World& world_;
  SoftParams params_;
  long long non_converged_ = 0;
  int max_iterations_ = 0;
  double max_residual_ = 0.0;
  std::vector<std::pair<long long, soft::SoftStepStatus>> listed_;
};

void SoftReport::describe(std::ostream& out, const std::string& heading) const {
  using namespace diffphys::soft;
  const SoftModel& model = world_.soft->model;
  const SoftParams& params = params_;
  const auto pinned = std::count(model.pinned.begin(), model.pinned.end(), char{1});
  std::vector<double> masses(static_cast<std::size_t>(model.node_count));
  lumped_masses(model, params, masses);
  double total_mass = 0.0;
  for (std::size_t i = 0; i < masses.size(); ++i)
    if (!model.pinned[i]) total_mass += masses[i];

  out << heading << ": \"" << model.name << "\", dt " << number(model.dt) << " s\n";
  out << "newton: max_iterations " << model.newton.max_iterations << ", tolerance "
            << number(model.newton.tolerance) << " m/s, armijo " << number(model.newton.armijo) << "\n";
  out << "contact: barrier_distance " << number(model.contact.barrier_distance) << " m, friction_velocity "
            << number(model.contact.friction_velocity) << " m/s\n";
  out << "\nnodes: " << model.node_count << " (" << pinned << " pinned), " << model.dof_count()
            << " DOFs, free mass " << number(total_mass) << " kg\n";
  out << "elements: " << model.springs.size() << " springs, " << model.tets.size() << " tets, "
            << model.triangles.size() << " cloth triangles, " << model.hinges.size() << " hinges, "
            << model.attachment_nodes.size() << " attachments";
  if (!model.frame_attachment_nodes.empty())
    out << ", " << model.frame_attachment_nodes.size() << " nodes attached to frames";
  out << "\n";
  if (!model.tet_materials.empty()) {
    out << "\ntet materials (" << model.tet_materials.size() << "):\n";
    for (std::size_t m = 0; m < model.tet_materials.size(); ++m) {
      const auto count = std::count_if(model.tets.begin(), model.tets.end(),
                                       [&](const TetElement& tet) { return tet.material == static_cast<int>(m); });
      out << "  [" << m << "] " << model.tet_materials[m].name << "  "
                << (model.tet_materials[m].model == ElasticModel::NeoHookean ? "neo_hookean" : "corotated") << "  "
                << count << " tets\n";
    }
  }
  if (!model.cloth_materials.empty()) {
    out << "\ncloth materials (" << model.cloth_materials.size() << "):\n";
    for (std::size_t m = 0; m < model.cloth_materials.size(); ++m) {
      const auto count = std::count_if(model.triangles.begin(), model.triangles.end(),
                                       [&](const TriangleElement& t) { return t.material == static_cast<int>(m); });
      out << "  [" << m << "] " << model.cloth_materials[m] << "  " << count << " triangles\n";
    }
  }
  out << "\nobstacles (" << model.obstacles.size() << "):\n";
  for (std::size_t i = 0; i < model.obstacles.size(); ++i) {
    const Obstacle& obstacle = model.obstacles[i];
    out << "  [" << i << "] " << obstacle.name << "  ";
    const auto vec = [](const Vector3& v) {
      std::string text("(");
      text.append(number(v[0])).append(", ").append(number(v[1])).append(", ").append(number(v[2])).append(")");
      return text;
    };
    if (obstacle.type == ObstacleType::Plane)
      out << "plane through " << vec(obstacle.point) << " normal " << vec(obstacle.normal) << "\n";
    else if (obstacle.type == ObstacleType::Sphere)
      out << "sphere at " << vec(obstacle.point) << " radius " << number(obstacle.radius) << " m\n";
    else if (obstacle.type == ObstacleType::Box)
      out << "box at " << vec(obstacle.point) << " half extents " << vec(obstacle.half_extents) << " m"
                << (obstacle.rounding > 0 ? " rounded " + number(obstacle.rounding) + " m" : std::string()) << "\n";
    else if (obstacle.type == ObstacleType::Capsule)
      out << "capsule at " << vec(obstacle.point) << " radius " << number(obstacle.radius) << " m, half length "
                << number(obstacle.half_length) << " m\n";
    else  // shapes added later print their reference point until described here
      out << "shape at " << vec(obstacle.point) << "\n";
    if (obstacle.frame >= 0)  // coordinates are in the frame's (a rigid body's) coordinates
      out << "        moving with frame " << model.frames[static_cast<std::size_t>(obstacle.frame)] << " (in its coordinates)\n";
  }
  out << "\nparameters θ (" << model.param_count() << " values in " << model.layout.slices.size() << " slices):\n";
  std::size_t width = 0;
  for (const SoftParamLayout::Slice& slice : model.layout.slices) width = std::max(width, slice.name.size());
  for (const SoftParamLayout::Slice& slice : model.layout.slices) {
    std::string padded = slice.name;
    padded.resize(width, ' ');
    out << "  " << padded << "  @" << slice.offset << "  "
              << values_text(std::span<const double>(params.values)
                                 .subspan(static_cast<std::size_t>(slice.offset), static_cast<std::size_t>(slice.size)))
              << "\n";
  }
}

}  // namespace

std::unique_ptr<PartReport> make_soft_report(const World& world, const WorldParams& params) {
  return std::make_unique<SoftReport>(world, params);
}

}  // namespace diffphys::report
