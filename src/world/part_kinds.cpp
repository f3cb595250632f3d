// world/part_kinds.cpp — the registries' lists (world/part_kind.hpp, world/coupling_kind.hpp): every
// kind of part, one line each, in the order their slices come in every vector and their parts
// step; every kind of coupling between parts. Named here
// by function (not registered by static initialisers, which a static library's linker may drop).
#include "diffphys/error.hpp"
#include "world/coupling_kind.hpp"
#include "world/part_kind.hpp"

namespace diffphys::world {

std::span<const PartKind> part_kinds() {
  static const PartKind kinds[] = {
      rigid_part_kind(),
      soft_part_kind(),
      fluid_part_kind(),
  };
  return kinds;
}

std::span<const CouplingKind> coupling_kinds() {
  static const CouplingKind kinds[] = {
      rigid_soft_coupling_kind(),
  };
  return kinds;
}

const PartKind& kind_of(const WorldLayout::PartRange& range) { return part_kinds()[static_cast<std::size_t>(range.kind_index)]; }

}  // namespace diffphys::world
