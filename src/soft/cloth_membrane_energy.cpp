// soft/cloth_membrane_energy.cpp — the in-plane (membrane) energy of cloth triangles, a
// Saint Venant–Kirchhoff material in plane stress:
//   F = [x1−x0, x2−x0] D_m⁻¹ (3×2),  G = ½(FᵀF − I),  Ψ = μ ‖G‖² + λ/2 (tr G)²,  E = A₀ Ψ
// with μ = Y/(2(1+ν)), λ = Yν/(1−ν²) from the stretch modulus Y = Young's modulus ×
// thickness, N/m (Volino et al. 2009, "A simple approach to nonlinear tensile stiffness for
// accurate cloth simulation", §3). Parameters per cloth material: stretch_modulus,
// poisson_ratio.
#include "soft/energy_term.hpp"

namespace diffphys::soft {
namespace {

struct MembraneLocal {
  static constexpr int kNodes = 3;
  static constexpr int kExtra = 2;
  static constexpr const char* kName = "cloth_membrane";

  int count(const SoftModel& model) const { return static_cast<int>(model.triangles.size()); }
  std::array<int, 3> nodes(const SoftModel& model, int e) const {
    return model.triangles[static_cast<std::size_t>(e)].nodes;
  }
  void extra(const TermInputs& in, int e, double* values, ExtraSource* sources) const {
    const auto material = static_cast<std::size_t>(in.model.triangles[static_cast<std::size_t>(e)].material);
    const int indices[2] = {in.model.layout.cloth_stretch_modulus[material],
                            in.model.layout.cloth_poisson_ratio[material]};
    for (int j = 0; j < 2; ++j) {
      values[j] = in.params[static_cast<std::size_t>(indices[j])];
      sources[j] = {ExtraSource::Param, indices[j]};
    }
  }
  template <class T>
  T energy(const TermInputs& in, int e, const T* x, const T* extra) const {
    const TriangleElement& triangle = in.model.triangles[static_cast<std::size_t>(e)];
    const auto& inverse = triangle.rest_inverse;
    const V3<T> e1 = load3(x + 3) - load3(x), e2 = load3(x + 6) - load3(x);
    // Columns of F: f1 = e1 D⁻¹₀₀ + e2 D⁻¹₁₀, f2 = e1 D⁻¹₀₁ + e2 D⁻¹₁₁.
    const V3<T> f1{e1.x * inverse[0] + e2.x * inverse[2], e1.y * inverse[0] + e2.y * inverse[2],
                   e1.z * inverse[0] + e2.z * inverse[2]};
    const V3<T> f2{e1.x * inverse[1] + e2.x * inverse[3], e1.y * inverse[1] + e2.y * inverse[3],
                   e1.z * inverse[1] + e2.z * inverse[3]};
    const T g11 = 0.5 * (dot(f1, f1) - 1.0), g22 = 0.5 * (dot(f2, f2) - 1.0), g12 = 0.5 * dot(f1, f2);
    const T& stretch_modulus = extra[0];
    const T& poisson = extra[1];
    const T mu = stretch_modulus / (2.0 * (1.0 + poisson));
    const T lambda = stretch_modulus * poisson / (1.0 - poisson * poisson);
    const T trace = g11 + g22;
    return triangle.rest_area * (mu * (g11 * g11 + g22 * g22 + 2.0 * g12 * g12) + 0.5 * lambda * trace * trace);
  }
};

}  // namespace

std::unique_ptr<EnergyTerm> make_cloth_membrane_term(const SoftModel&) {
  return make_local_term(MembraneLocal{});
}

}  // namespace diffphys::soft
