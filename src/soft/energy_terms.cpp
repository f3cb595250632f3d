// soft/energy_terms.cpp — the list of energy terms of a soft model. A new term is one file
// (a Local, see energy_term.hpp) and one line here.
#include <algorithm>

#include "soft/energy_term.hpp"

namespace diffphys::soft {

std::vector<std::unique_ptr<EnergyTerm>> make_energy_terms(const SoftModel& model) {
  std::vector<std::unique_ptr<EnergyTerm>> terms;
  if (!model.springs.empty()) terms.push_back(make_spring_term(model));
  if (!model.tets.empty()) {
    terms.push_back(make_neo_hookean_term(model));
    terms.push_back(make_corotated_term(model));
    terms.push_back(make_tet_damping_term(model));
  }
  if (!model.triangles.empty()) terms.push_back(make_cloth_membrane_term(model));
  if (!model.hinges.empty()) terms.push_back(make_cloth_bending_term(model));
  if (!model.attachment_nodes.empty()) terms.push_back(make_attachment_term(model));
  const auto moving = std::count_if(model.obstacles.begin(), model.obstacles.end(), [](const Obstacle& o) { return o.frame >= 0; });
  if (moving < static_cast<std::ptrdiff_t>(model.obstacles.size())) terms.push_back(make_obstacle_contact_term(model));
  if (moving > 0) terms.push_back(make_moving_obstacle_contact_term(model));
  if (!model.frame_attachment_nodes.empty()) terms.push_back(make_frame_attachment_term(model));
  return terms;
}

}  // namespace diffphys::soft
