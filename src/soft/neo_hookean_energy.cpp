// soft/neo_hookean_energy.cpp — compressible Neo-Hookean tetrahedra:
//   Ψ(F) = μ/2 (tr FᵀF − 3) − μ ln J + λ/2 (ln J)²,   E = V₀ Ψ,   J = det F
// (Bonet & Wood, "Nonlinear continuum mechanics", eq. 6.27). Inverted or flat elements
// (J ≤ 0) have infinite energy, so the line search never accepts them.
// Parameters per material: youngs_modulus, poisson_ratio (→ μ, λ).
#include "soft/tet_kinematics.hpp"

namespace diffphys::soft {
namespace {

struct NeoHookeanLocal : TetLocalBase {
  static constexpr const char* kName = "neo_hookean";
  explicit NeoHookeanLocal(const SoftModel& model) : TetLocalBase(model, ElasticModel::NeoHookean) {}

  template <class T>
  T energy(const TermInputs& in, int e, const T* x, const T* extra) const {
    return energy_of_f(in, e, deformation_gradient(x, tet(in.model, e).rest_inverse), extra);
  }
  void element_derivatives(const TermInputs& in, int e, const double* x, const double* extra,
                           std::array<double, 12>& gradient, std::array<double, 144>& hessian) const {
    tet_derivatives_through_f(*this, in, e, x, extra, gradient, hessian);
  }
  template <class T>
  T energy_of_f(const TermInputs& in, int e, const M3<T>& f, const T* extra) const {
    const TetElement& element = tet(in.model, e);
    const T j = determinant(f);
    if (value_of(j) <= 0.0) return T(kInfinity);
    T mu, lambda;
    lame_parameters(extra[0], extra[1], mu, lambda);
    T trace = 0.0;
    for (int i = 0; i < 9; ++i) trace += f[i] * f[i];
    const T log_j = log(j);
    return element.rest_volume * (0.5 * mu * (trace - 3.0) - mu * log_j + 0.5 * lambda * log_j * log_j);
  }
};

}  // namespace

std::unique_ptr<EnergyTerm> make_neo_hookean_term(const SoftModel& model) {
  return make_local_term(NeoHookeanLocal(model));
}

}  // namespace diffphys::soft
