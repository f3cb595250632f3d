// world/world_report.cpp — describe_world and WorldRunReport (diffphys/world_report.hpp): the
// world-level lines (headings, the scene and simulated lines) around each part's sections,
// the list of a world's parts (make_part_reports, from the registry of part kinds), the
// recording estimate and the number formats the reports share.
#include "diffphys/world_report.hpp"

#include <cmath>
#include <ostream>

#include "diffphys/error.hpp"
#include "world/coupling_kind.hpp"
#include "world/part_kind.hpp"
#include "world/part_report.hpp"

namespace diffphys {

namespace report {

std::string number(double value, int digits) { return significant(value, digits); }

std::string number_or_zero(double value, int digits) { return number(std::abs(value) < 1e-12 ? 0.0 : value, digits); }

std::string plural(long long count, const char* singular, const char* plural_form) {
  return std::to_string(count) + " " + (count == 1 ? singular : plural_form);
}

// Each held kind's report (world/part_kind.hpp), in the world's order, then each held
// coupling's (world/coupling_kind.hpp).
std::vector<std::unique_ptr<PartReport>> make_part_reports(const World& world, const WorldParams& params) {
  std::vector<std::unique_ptr<PartReport>> parts;
  for (const WorldLayout::PartRange& range : world.layout().parts) parts.push_back(world::kind_of(range).make_report(world, params));
  for (const world::CouplingKind& kind : world::coupling_kinds())
    if (kind.held_by(world)) parts.push_back(kind.make_report(world, params));
  return parts;
}

}  // namespace report

RecordingEstimate estimate_recording(const World& world) {
  RecordingEstimate estimate;
  for (const WorldLayout::PartRange& range : world.layout().parts) {
    const world::PartKind& kind = world::kind_of(range);
    estimate.bytes_per_frame += kind.recording_bytes_per_frame(world);
    estimate.size += (estimate.size.empty() ? "" : " and ") + kind.recording_size(world);
  }
  return estimate;
}

std::string solver_settings(const World& world) {
  return std::string(world::kind_of(world.layout().parts.back()).solver_settings);
}

namespace report {

}  // namespace report

void describe_world(std::ostream& out, const World& world, const WorldParams& params) {
  const auto parts = report::make_part_reports(world, params);
  if (parts.size() == 1) {
    parts.front()->describe(out, parts.front()->single_heading() + " " + world.source);
    return;
  }
  out << "coupled scene " << world.source << ": " << world.kind() << ", "
      << (world.coupling.two_way ? "two-way" : "one-way") << " coupling\n";
  for (const auto& part : parts) {
    out << "\n";
    part->describe(out, part->name() + " part");
  }
}

WorldRunReport::WorldRunReport(const World& world, const WorldParams& params)
    : world_(world), parts_(report::make_part_reports(world, params)) {}

WorldRunReport::~WorldRunReport() = default;

void WorldRunReport::observe(long long step, const WorldState& state, const WorldStepStatus& status) {
  for (const auto& part : parts_) part->observe(step, state, status);
}

void WorldRunReport::print_summary(std::ostream& out, const WorldState& final_state, long long steps, double wall_seconds) const {
  using report::number;
  out << "scene       " << world_.source << " (\"" << world_.name << "\"): ";
  for (std::size_t i = 0; i < parts_.size(); ++i) out << (i > 0 ? "; " : "") << parts_[i]->scene_summary();
  out << "\n";
  out << "simulated   " << report::plural(steps, "step", "steps") << " of " << number(world_.dt()) << " s";
  if (world_.rigid_steps_per_step() > 1) out << " (" << world_.rigid_steps_per_step() << " rigid steps each)";
  out << " = " << report::number_or_zero(final_state.time) << " s in " << number(wall_seconds, 3) << " s wall time";
  if (wall_seconds > 0 && steps > 0) out << " (" << number(static_cast<double>(steps) / wall_seconds, 3) << " steps/s)";
  out << "\n";
  for (const auto& part : parts_) part->print_summary(out, final_state);
}

bool WorldRunReport::print_failures(std::ostream& err) const {
  bool any = false;
  for (const auto& part : parts_) any = part->print_failures(err) || any;
  return any;
}

}  // namespace diffphys
