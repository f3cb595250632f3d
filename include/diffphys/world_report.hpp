// diffphys/world_report.hpp — the text reports of a world that the command line prints, for
// any scene: `diffphys info` (describe_world) and the summary of `diffphys simulate`
// (WorldRunReport, fed by every world step of a WorldSimulator). Each part of the world
// (rigid bodies, soft bodies, their coupling) contributes its own section through one class
// (src/world/part_report.hpp), so that a new part joins the reports in one place.
#pragma once

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "diffphys/world.hpp"

namespace diffphys {

namespace report {
class PartReport;
}

// The world's description: a world of one part under "scene PATH" ("soft scene PATH"), a
// world of several parts as "coupled scene PATH: rigid + soft, two-way coupling" and then each
// part's section ("rigid part", "soft part", the coupling).
void describe_world(std::ostream& out, const World& world, const WorldParams& params);

class WorldRunReport {
 public:
  // `world` and `params` must outlive the report.
  WorldRunReport(const World& world, const WorldParams& params);
  ~WorldRunReport();
  WorldRunReport(const WorldRunReport&) = delete;
  WorldRunReport& operator=(const WorldRunReport&) = delete;

  // After world step `step` (from 1) with the state it reached. Throws Error naming the
  // step, the body and the value if a rigid state is not healthy (docs/robustness.md).
  void observe(long long step, const WorldState& state, const WorldStepStatus& status);
  // "scene", "simulated" and every part's lines (solver, contacts, final state).
  void print_summary(std::ostream& out, const WorldState& final_state, long long steps, double wall_seconds) const;
  // Every part's non-converged steps on `err`; returns whether there were any.
  bool print_failures(std::ostream& err) const;

 private:
  const World& world_;
  std::vector<std::unique_ptr<report::PartReport>> parts_;
};

// What recording one frame of the world's trajectory holds in memory beyond the frame's own
// (the command line refuses recordings that would not fit), summed over its parts, and the
// words that name its size ("2 bodies and 100 soft nodes").
struct RecordingEstimate {
  double bytes_per_frame = 0.0;
  std::string size;
};
RecordingEstimate estimate_recording(const World& world);

// Where a world's last part sets its solves ("soft bodies only (their Newton solver is set in
// ...)"): the command line's refusal of flags that only the rigid bodies take.
std::string solver_settings(const World& world);

}  // namespace diffphys
