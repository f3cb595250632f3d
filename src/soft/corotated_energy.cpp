// soft/corotated_energy.cpp — corotated linear elasticity on tetrahedra:
//   Ψ(F) = μ ‖F − R‖² + λ/2 tr(RᵀF − I)²,   E = V₀ Ψ,
// linear elasticity measured in the element's rotated frame, R the rotation of the polar
// decomposition F = R S (Stomakhin et al. 2012, "Energetically consistent invertible
// elasticity", eq. 2). R comes from Higham's iteration X ← ½(X + X⁻ᵀ) (Higham 1986), which
// converges quadratically and, run on hyper-dual numbers, carries exact derivatives of R.
// Elements with det F ≤ 0 get infinite energy (the polar rotation flips there).
#include <cmath>

#include "soft/tet_kinematics.hpp"

namespace diffphys::soft {
namespace {

struct CorotatedLocal : TetLocalBase {
  static constexpr const char* kName = "corotated";
  explicit CorotatedLocal(const SoftModel& model) : TetLocalBase(model, ElasticModel::Corotated) {}

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
    if (value_of(determinant(f)) <= 0.0) return T(kInfinity);
    M3<T> rotation = f;
    // Converged in value, then two more sweeps so the derivatives (which converge at the same
    // quadratic rate) settle too.
    int extra_sweeps = 2;
    for (int iteration = 0; iteration < 60 && extra_sweeps > 0; ++iteration) {
      const M3<T> inverse_t = inverse_transpose(rotation);
      double change = 0.0;
      for (int i = 0; i < 9; ++i) {
        const T next = 0.5 * (rotation[i] + inverse_t[i]);
        change = std::max(change, std::abs(value_of(next) - value_of(rotation[i])));
        rotation[i] = next;
      }
      if (change < 1e-15) --extra_sweeps;
    }
    T mu, lambda;
    lame_parameters(extra[0], extra[1], mu, lambda);
    T deviation = 0.0, trace = -3.0;
    for (int i = 0; i < 9; ++i) {
      const T d = f[i] - rotation[i];
      deviation += d * d;
      trace += rotation[i] * f[i];  // tr(RᵀF) = Σ R_ij F_ij
    }
    return element.rest_volume * (mu * deviation + 0.5 * lambda * trace * trace);
  }
};

}  // namespace

std::unique_ptr<EnergyTerm> make_corotated_term(const SoftModel& model) {
  return make_local_term(CorotatedLocal(model));
}

}  // namespace diffphys::soft
