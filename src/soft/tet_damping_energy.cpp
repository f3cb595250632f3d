// soft/tet_damping_energy.cpp — viscous damping of tetrahedra (Kelvin–Voigt), in the
// incremental-potential form of implicit Euler:
//   D = c V₀ / (2h) ‖G(x) − G(x_t)‖²_F,   G = ½(FᵀF − I) the Green strain
// whose gradient is c V₀ Ġ : ∂G/∂x with Ġ ≈ (G − G_t)/h: a stress proportional to the strain
// rate. Green strain is invariant under rotation, so rigid motion is not damped (momentum and
// angular momentum of a free body are untouched by it). Parameter per tet material:
// damping c (Pa·s). Lagged on x_t; absent in static solves.
#include "soft/tet_kinematics.hpp"

namespace diffphys::soft {
namespace {

template <class T>
M3<T> green_strain(const M3<T>& f) {
  M3<T> g;
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      T sum = 0.0;
      for (int k = 0; k < 3; ++k) sum += f[3 * k + r] * f[3 * k + c];
      g[3 * r + c] = 0.5 * (sum - (r == c ? 1.0 : 0.0));
    }
  return g;
}

struct TetDampingLocal {
  static constexpr int kNodes = 4;
  static constexpr int kExtra = 13;  // c, x_t of the 4 nodes (12)
  static constexpr const char* kName = "tet_damping";

  int count(const SoftModel& model) const { return static_cast<int>(model.tets.size()); }
  std::array<int, 4> nodes(const SoftModel& model, int e) const { return model.tets[static_cast<std::size_t>(e)].nodes; }
  void extra(const TermInputs& in, int e, double* values, ExtraSource* sources) const {
    const TetElement& tet = in.model.tets[static_cast<std::size_t>(e)];
    const int index = in.model.layout.tet_damping[static_cast<std::size_t>(tet.material)];
    values[0] = in.params[static_cast<std::size_t>(index)];
    sources[0] = {in.lagged_terms ? ExtraSource::Param : ExtraSource::Constant, index};
    for (int a = 0; a < 4; ++a)
      for (int r = 0; r < 3; ++r) {
        const int dof = 3 * tet.nodes[static_cast<std::size_t>(a)] + r;
        values[1 + 3 * a + r] = in.previous_positions[static_cast<std::size_t>(dof)];
        sources[1 + 3 * a + r] = {in.lagged_terms ? ExtraSource::Previous : ExtraSource::Constant, dof};
      }
  }
  bool inactive(const TermInputs& in, int e) const {
    const TetElement& tet = in.model.tets[static_cast<std::size_t>(e)];
    return !in.lagged_terms || in.params[static_cast<std::size_t>(in.model.layout.tet_damping[static_cast<std::size_t>(tet.material)])] == 0.0;
  }
  template <class T>
  T energy(const TermInputs& in, int e, const T* x, const T* extra) const {
    if (!in.lagged_terms) return T(0.0);
    const TetElement& tet = in.model.tets[static_cast<std::size_t>(e)];
    const M3<T> strain = green_strain(deformation_gradient(x, tet.rest_inverse));
    const M3<T> previous = green_strain(deformation_gradient(extra + 1, tet.rest_inverse));
    T sum = 0.0;
    for (int i = 0; i < 9; ++i) {
      const T rate = strain[i] - previous[i];
      sum += rate * rate;
    }
    return extra[0] * tet.rest_volume * (0.5 / in.dt) * sum;
  }
};

}  // namespace

std::unique_ptr<EnergyTerm> make_tet_damping_term(const SoftModel&) { return make_local_term(TetDampingLocal{}); }

}  // namespace diffphys::soft
