// soft/cloth_bending_energy.cpp — dihedral bending of cloth (discrete shells, Grinspun et
// al. 2003, eq. 3):
//   E = k_b · 3|ē|²/(Ā₁ + Ā₂) · (θ − θ̄)²
// per interior edge, θ the dihedral angle between the two triangles' normals and barred
// quantities at rest. Parameter per cloth material: bending_stiffness k_b (N·m).
#include "soft/energy_term.hpp"

namespace diffphys::soft {

// The signed dihedral angle of hinge (x0, x1 | x2, x3): 0 when flat (see Hinge in soft.hpp).
template <class T>
T dihedral_angle(const T* x) {
  const V3<T> x0 = load3(x), edge = load3(x + 3) - x0;
  const V3<T> normal_a = cross(edge, load3(x + 6) - x0);
  const V3<T> normal_b = cross(load3(x + 9) - x0, edge);
  return atan2(dot(cross(normal_a, normal_b), edge), dot(normal_a, normal_b) * sqrt(dot(edge, edge)));
}
template double dihedral_angle<double>(const double* x);

namespace {

struct BendingLocal {
  static constexpr int kNodes = 4;
  static constexpr int kExtra = 1;
  static constexpr const char* kName = "cloth_bending";

  int count(const SoftModel& model) const { return static_cast<int>(model.hinges.size()); }
  std::array<int, 4> nodes(const SoftModel& model, int e) const {
    return model.hinges[static_cast<std::size_t>(e)].nodes;
  }
  void extra(const TermInputs& in, int e, double* values, ExtraSource* sources) const {
    const auto material = static_cast<std::size_t>(in.model.hinges[static_cast<std::size_t>(e)].material);
    const int index = in.model.layout.cloth_bending_stiffness[material];
    values[0] = in.params[static_cast<std::size_t>(index)];
    sources[0] = {ExtraSource::Param, index};
  }
  template <class T>
  T energy(const TermInputs& in, int e, const T* x, const T* extra) const {
    const Hinge& hinge = in.model.hinges[static_cast<std::size_t>(e)];
    const T bend = dihedral_angle(x) - hinge.rest_angle;
    return extra[0] * hinge.weight * bend * bend;
  }
};

}  // namespace

std::unique_ptr<EnergyTerm> make_cloth_bending_term(const SoftModel&) {
  return make_local_term(BendingLocal{});
}

}  // namespace diffphys::soft
