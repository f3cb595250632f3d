// world/part_report.hpp — the text a part of a world contributes to the reports of
// diffphys/world_report.hpp (`diffphys info`, the summary of `diffphys simulate`). Each part
// (rigid bodies, soft bodies, a fluid, the coupling between rigid and soft bodies) is one
// PartReport; each kind of part registers its own (world/part_kind.hpp, make_report) and
// make_part_reports lists a world's, so that a new kind joins the command line's reports
// through its registry entry, not by an edit of every command.
#pragma once

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "diffphys/world.hpp"

namespace diffphys::report {

class PartReport {
 public:
  virtual ~PartReport() = default;
  // "rigid", "soft", "coupling": the heading of its section in a world of several parts.
  virtual std::string name() const = 0;
  // `diffphys info` of a world holding only this part: the heading's first words ("scene",
  // "soft scene"); empty for a part that never stands alone (the coupling).
  virtual std::string single_heading() const = 0;
  // `diffphys info`: the part's description under `heading`.
  virtual void describe(std::ostream& out, const std::string& heading) const = 0;
  // The part in the "scene" line of the simulate summary ("3 bodies (2 dynamic), ...").
  virtual std::string scene_summary() const = 0;
  // After world step `step` (from 1): accumulate the statuses. Allocates nothing unless a
  // step is listed as not converged (the first ten are) or throws Error (a rigid state
  // that is not healthy: nothing is written).
  virtual void observe(long long step, const WorldState& state, const WorldStepStatus& status) = 0;
  // The part's lines of the simulate summary (solver, contacts, final state).
  virtual void print_summary(std::ostream& out, const WorldState& final_state) const = 0;
  // The part's non-converged steps on `err`; returns whether there were any.
  virtual bool print_failures(std::ostream& err) const = 0;
};

// The parts of `world`, in the order its reports print them. `params` must outlive them.
std::vector<std::unique_ptr<PartReport>> make_part_reports(const World& world, const WorldParams& params);

std::unique_ptr<PartReport> make_rigid_report(const World& world, const WorldParams& params);
std::unique_ptr<PartReport> make_soft_report(const World& world, const WorldParams& params);
std::unique_ptr<PartReport> make_coupling_report(const World& world, const WorldParams& params);
std::unique_ptr<PartReport> make_fluid_report(const World& world, const WorldParams& params);  // src/fluid/fluid_report.cpp

// Numbers as the reports print them: `digits` significant digits ("%.*g"); number_or_zero
// prints round-off below 1e-12 in magnitude as 0.
std::string number(double value, int digits = 6);
std::string number_or_zero(double value, int digits = 6);
std::string plural(long long count, const char* singular, const char* plural_form);

}  // namespace diffphys::report
