// soft/spring_energy.cpp — Hookean springs with damping along the spring.
//
//   E = k/2 (l − l₀)² + c/(2h) (l − l_t)²,   l = |x_b − x_a|,  l_t = |x_b,t − x_a,t|
//
// The first part is Hooke's law as in Rojas (2020); the second is a Rayleigh dissipation
// potential in the incremental form of implicit Euler: its gradient is c (l − l_t)/h ∇l =
// c l̇ ∇l, a damping force along the spring proportional to the rate of stretch.
// Parameters: spring_stiffness k (N/m), spring_rest_length l₀ (m), spring_damping c (N·s/m).
#include "soft/energy_term.hpp"

namespace diffphys::soft {
namespace {

struct SpringLocal {
  static constexpr int kNodes = 2;
  static constexpr int kExtra = 9;  // k, l0, c, x_a,t (3), x_b,t (3)
  static constexpr const char* kName = "spring";

  int count(const SoftModel& model) const { return static_cast<int>(model.springs.size()); }
  std::array<int, 2> nodes(const SoftModel& model, int e) const {
    return model.springs[static_cast<std::size_t>(e)];
  }
  void extra(const TermInputs& in, int e, double* values, ExtraSource* sources) const {
    const SoftParamLayout& layout = in.model.layout;
    const int offsets[3] = {layout.spring_stiffness, layout.spring_rest_length, layout.spring_damping};
    for (int j = 0; j < 3; ++j) {
      const int index = offsets[j] + e;
      values[j] = in.params[static_cast<std::size_t>(index)];
      sources[j] = {ExtraSource::Param, index};
    }
    const auto pair = nodes(in.model, e);
    for (int a = 0; a < 2; ++a)
      for (int r = 0; r < 3; ++r) {
        const int dof = 3 * pair[a] + r;
        values[3 + 3 * a + r] = in.previous_positions[static_cast<std::size_t>(dof)];
        sources[3 + 3 * a + r] = {in.lagged_terms ? ExtraSource::Previous : ExtraSource::Constant, dof};
      }
  }
  template <class T>
  T energy(const TermInputs& in, int, const T* x, const T* extra) const {
    const V3<T> d = load3(x + 3) - load3(x);
    const T length = sqrt(dot(d, d));
    const T stretch = length - extra[1];
    T e = 0.5 * extra[0] * stretch * stretch;
    if (in.lagged_terms) {
      const V3<T> d_previous = load3(extra + 6) - load3(extra + 3);
      const T rate = length - sqrt(dot(d_previous, d_previous));
      e += extra[2] * rate * rate * (0.5 / in.dt);
    }
    return e;
  }
};

}  // namespace

std::unique_ptr<EnergyTerm> make_spring_term(const SoftModel&) { return make_local_term(SpringLocal{}); }

}  // namespace diffphys::soft
