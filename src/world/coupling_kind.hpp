// world/coupling_kind.hpp — the registry of the kinds of coupling between a world's parts, as
// part_kind.hpp is of the parts: each kind says when a world holds it, refuses what it cannot
// couple, makes its Couplings (world/part.hpp) for the schedule and gives its report, so that
// the world's shared code — the schedule's make_parts, check_parts, the reports — loops over
// coupling_kinds() instead of naming a pair of parts. part_kinds.cpp lists them, one line per
// kind; a coupling of new parts (a fluid pushing rigid bodies) joins with one descriptor there.
#pragma once

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "diffphys/world.hpp"
#include "world/part.hpp"

namespace diffphys::report {
class PartReport;
}

namespace diffphys::world {

struct CouplingKind {
  std::string_view name;
  // Whether `world` holds this coupling (both parts it couples).
  bool (*held_by)(const World& world);
  // Refusals of what it cannot couple (throws Error naming the item; the caller adds the file).
  void (*check)(const World& world);
  // Its couplings between `parts` (the world's, in the world's order), appended to `couplings`
  // in the order they act.
  void (*make)(const World& world, std::span<const std::unique_ptr<Part>> parts,
               std::vector<std::unique_ptr<Coupling>>& couplings);
  // Its section of `diffphys info` and of a run's summary, after the parts' own.
  std::unique_ptr<report::PartReport> (*make_report)(const World& world, const WorldParams& params);
};

// Every kind of coupling (part_kinds.cpp).
std::span<const CouplingKind> coupling_kinds();

// Each kind's descriptor, defined beside its couplings.
const CouplingKind& rigid_soft_coupling_kind();  // world/rigid_soft_coupling.cpp

}  // namespace diffphys::world
