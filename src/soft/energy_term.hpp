// soft/energy_term.hpp — the interface every soft energy term implements, and the generic
// machinery that derives a term's gradient, Hessian and mixed derivatives from one local
// energy template by second-order forward mode (soft/hyper_dual.hpp).
//
// A term is a set of small elements (a spring, a tet, a node against an obstacle), each a
// function of a few nodes' positions and of a few "extra" inputs: parameters θ (stiffness,
// Young's modulus, ...) and lagged previous positions x_t (damping, friction). Adding new
// physics is one file defining a `Local` (see LocalTermSet below) and one line in
// make_energy_terms() (energy_terms.cpp).
//
// Hessian blocks are emitted as 3×3 node blocks in an order that never changes between calls
// (every element always emits all its blocks, zeros included): the Newton solver records the
// order once and scatters later calls straight into the factorised matrix's value array.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "diffphys/soft.hpp"
#include "soft/hyper_dual.hpp"

namespace diffphys::soft {

struct TermInputs {
  const SoftModel& model;
  std::span<const double> params;              // θ
  std::span<const double> positions;           // x (3 nnode), the iterate
  std::span<const double> previous_positions;  // x_t (3 nnode), for lagged quantities
  double dt = 0.0;
  bool lagged_terms = true;  // false for static solves: no damping, no friction
};

// Receives 3×3 Hessian blocks (row-major) in a fixed order.
class HessianSink {
 public:
  // Recording: remembers the (row node, column node) of every block.
  explicit HessianSink(std::vector<std::array<int, 2>>& record) : record_(&record) {}
  // Assembling: block k's entry r goes to values[slots[9k + r]] (slot −1: dropped).
  HessianSink(std::span<const int> slots, std::span<double> values)
      : slots_(slots), values_(values) {}

  void add_block(int row_node, int column_node, const double* block) {
    if (record_ != nullptr) {
      record_->push_back({row_node, column_node});
      return;
    }
    const int* slot = slots_.data() + 9 * cursor_++;
    for (int r = 0; r < 9; ++r)
      if (slot[r] >= 0) values_[static_cast<std::size_t>(slot[r])] += block[r];
  }

 private:
  std::vector<std::array<int, 2>>* record_ = nullptr;
  std::span<const int> slots_;
  std::span<double> values_;
  std::size_t cursor_ = 0;
};

class EnergyTerm {
 public:
  virtual ~EnergyTerm() = default;
  virtual const char* name() const = 0;
  // E(x); +infinity where x is infeasible (an inverted tet, a node through an obstacle).
  virtual double energy(const TermInputs& inputs) const = 0;
  // gradient += ∇ₓE; when `hessian` is given, also emits ∇²ₓE as node blocks.
  virtual void add_derivatives(const TermInputs& inputs, std::span<double> gradient,
                               HessianSink* hessian) const = 0;
  // params_bar += (∂∇ₓE/∂θ)ᵀ w, previous_bar += (∂∇ₓE/∂x_t)ᵀ w: the mixed second derivatives
  // the implicit-function-theorem backward pass contracts with its adjoint w (3 nnode).
  virtual void add_mixed_vjp(const TermInputs& inputs, std::span<const double> w,
                             std::span<double> params_bar, std::span<double> previous_bar) const = 0;
  // The largest α in (0, 1] such that x + s·direction stays feasible for s ∈ [0, α]
  // (continuous collision for barriers); 1 when the term has no feasibility limit.
  virtual double max_feasible_step(const TermInputs& /*inputs*/,
                                   std::span<const double> /*direction*/) const {
    return 1.0;
  }
  // params_grad += ∂E/∂θ (only the parameter inputs of the elements): the force a term exerts
  // on a parameter such as a frame pose (a coupled rollout's contact reaction on a rigid body).
  virtual void add_param_gradient(const TermInputs& /*inputs*/, std::span<double> /*params_grad*/) const {}
  // Its vector–Jacobian product: with c (nθ) a cotangent of ∂E/∂θ, x_bar += (∂²E/∂x∂θ) c,
  // params_bar += (∂²E/∂θ∂θ) c, previous_bar += (∂²E/∂x_t∂θ) c.
  virtual void add_param_gradient_vjp(const TermInputs& /*inputs*/, std::span<const double> /*c*/,
                                      std::span<double> /*x_bar*/, std::span<double> /*params_bar*/,
                                      std::span<double> /*previous_bar*/) const {}
  // Which part of the energy report the term belongs to.
  enum class Kind { Elastic, Contact };
  virtual Kind kind() const { return Kind::Elastic; }
};

// Where an extra input of an element comes from.
struct ExtraSource {
  enum Kind : int { Constant, Param, Previous };
  Kind kind = Constant;
  int index = 0;  // θ index or previous-position DOF (3 node + axis)
};

// A term built from a Local, which provides
//   static constexpr int kNodes, kExtra; static constexpr const char* kName;
//   int count(const SoftModel&) const;                             // number of elements
//   std::array<int, kNodes> nodes(const SoftModel&, int element) const;
//   void extra(const TermInputs&, int element, double* values, ExtraSource* sources) const;
//   template <class T> T energy(const TermInputs&, int element, const T* x, const T* extra) const;
// and optionally
//   void element_derivatives(const TermInputs&, int element, const double* x, const double* extra,
//                            std::array<double, kDofs>& gradient, std::array<double, kDofs²>& hessian) const;
//       // ∇E and ∇²E (row-major) of the element when cheaper than HyperDual over x
//   double max_step(const TermInputs&, int element, const double* x, const double* dx) const;
//   bool inactive(const TermInputs&, int element) const;  // true: E and ∇E vanish near x (the
//       element's derivatives are skipped, zero blocks still emitted; mixed terms unaffected)
//   static constexpr EnergyTerm::Kind kKind;
// x holds the element's 3 kNodes coordinates. energy() returns +inf (double only) when
// infeasible.
template <class Local>
class LocalTermSet final : public EnergyTerm {
 public:
  static constexpr int kNodes = Local::kNodes;
  static constexpr int kDofs = 3 * kNodes;
  static constexpr int kExtra = Local::kExtra;

  explicit LocalTermSet(Local local) : local_(std::move(local)) {}

  const char* name() const override { return Local::kName; }
  Kind kind() const override {
    if constexpr (requires { Local::kKind; }) return Local::kKind;
    return Kind::Elastic;
  }

  double energy(const TermInputs& inputs) const override {
    double total = 0.0;
    std::array<double, kDofs> x{};
    std::array<double, kExtra + 1> extra{};
    std::array<ExtraSource, kExtra + 1> sources{};
    const int count = local_.count(inputs.model);
    for (int e = 0; e < count; ++e) {
      gather(inputs, e, x.data());
      local_.extra(inputs, e, extra.data(), sources.data());
      total += local_.template energy<double>(inputs, e, x.data(), extra.data());
    }
    return total;
  }

  void add_derivatives(const TermInputs& inputs, std::span<double> gradient,
                       HessianSink* hessian) const override {
    using Scalar = HyperDual<kDofs>;
    std::array<double, kDofs> x{};
    std::array<Scalar, kDofs> xs{};
    std::array<double, kExtra + 1> extra{};
    std::array<Scalar, kExtra + 1> extra_scalar{};
    std::array<ExtraSource, kExtra + 1> sources{};
    std::array<double, 9> block{};
    const std::array<double, 9> zero{};
    std::array<double, kDofs> element_gradient{};
    std::array<double, kDofs * kDofs> element_hessian{};
    const int count = local_.count(inputs.model);
    for (int e = 0; e < count; ++e) {
      const auto nodes = local_.nodes(inputs.model, e);
      if constexpr (requires(const Local& l) { l.inactive(inputs, 0); }) {
        if (local_.inactive(inputs, e)) {
          if (hessian != nullptr)
            for (int a = 0; a < kNodes; ++a)
              for (int b = 0; b < kNodes; ++b) hessian->add_block(nodes[a], nodes[b], zero.data());
          continue;
        }
      }
      gather(inputs, e, x.data());
      local_.extra(inputs, e, extra.data(), sources.data());
      if constexpr (requires(const Local& l, std::array<double, kDofs>& g, std::array<double, kDofs * kDofs>& h) {
                      l.element_derivatives(inputs, 0, x.data(), extra.data(), g, h);
                    }) {
        // The Local's own (cheaper) derivatives, e.g. tets through F (tet_kinematics.hpp).
        local_.element_derivatives(inputs, e, x.data(), extra.data(), element_gradient, element_hessian);
        for (int a = 0; a < kNodes; ++a)
          for (int r = 0; r < 3; ++r)
            gradient[static_cast<std::size_t>(3 * nodes[a] + r)] += element_gradient[3 * a + r];
        if (hessian == nullptr) continue;
        for (int a = 0; a < kNodes; ++a)
          for (int b = 0; b < kNodes; ++b) {
            for (int r = 0; r < 3; ++r)
              for (int c = 0; c < 3; ++c) block[3 * r + c] = element_hessian[(3 * a + r) * kDofs + 3 * b + c];
            hessian->add_block(nodes[a], nodes[b], block.data());
          }
        continue;
      }
      for (int i = 0; i < kDofs; ++i) xs[i] = Scalar::variable(x[i], i);
      for (int j = 0; j < kExtra; ++j) extra_scalar[j] = Scalar(extra[j]);
      const Scalar value = local_.template energy<Scalar>(inputs, e, xs.data(), extra_scalar.data());
      for (int a = 0; a < kNodes; ++a)
        for (int r = 0; r < 3; ++r)
          gradient[static_cast<std::size_t>(3 * nodes[a] + r)] += value.gradient[3 * a + r];
      if (hessian == nullptr) continue;
      for (int a = 0; a < kNodes; ++a)
        for (int b = 0; b < kNodes; ++b) {
          for (int r = 0; r < 3; ++r)
            for (int c = 0; c < 3; ++c) block[3 * r + c] = value.second(3 * a + r, 3 * b + c);
          hessian->add_block(nodes[a], nodes[b], block.data());
        }
    }
  }

  // Only the contraction wᵀ ∂²E/∂x∂e is needed, so the element's DOFs move along one
  // direction, x(s) = x + s·w: on HyperDual over (s, extras), ∂²E/∂s∂e_j = Σᵢ wᵢ ∂²E/∂xᵢ∂e_j.
  // That is 1 + kExtra variables instead of kDofs + kExtra (a tet: 3 instead of 14 for the
  // elastic terms), the backward pass's largest cost otherwise.
  void add_mixed_vjp(const TermInputs& inputs, std::span<const double> w,
                     std::span<double> params_bar, std::span<double> previous_bar) const override {
    if constexpr (kExtra > 0) {
      using Scalar = HyperDual<1 + kExtra>;
      std::array<double, kDofs> x{}, w_local{};
      std::array<Scalar, kDofs> xs{};
      std::array<double, kExtra + 1> extra{};
      std::array<Scalar, kExtra + 1> extra_scalar{};
      std::array<ExtraSource, kExtra + 1> sources{};
      const int count = local_.count(inputs.model);
      for (int e = 0; e < count; ++e) {
        const auto nodes = local_.nodes(inputs.model, e);
        bool moving = false;
        for (int a = 0; a < kNodes; ++a)
          for (int r = 0; r < 3; ++r) {
            w_local[3 * a + r] = w[static_cast<std::size_t>(3 * nodes[a] + r)];
            moving = moving || w_local[3 * a + r] != 0.0;
          }
        if (!moving) continue;  // wᵀ(…) = 0 (an element of pinned nodes only)
        gather(inputs, e, x.data());
        local_.extra(inputs, e, extra.data(), sources.data());
        bool any = false;
        for (int j = 0; j < kExtra; ++j) any = any || sources[j].kind != ExtraSource::Constant;
        if (!any) continue;
        for (int i = 0; i < kDofs; ++i) {
          xs[i] = Scalar(x[i]);
          xs[i].gradient[0] = w_local[i];
        }
        for (int j = 0; j < kExtra; ++j) extra_scalar[j] = Scalar::variable(extra[j], 1 + j);
        const Scalar value = local_.template energy<Scalar>(inputs, e, xs.data(), extra_scalar.data());
        for (int j = 0; j < kExtra; ++j) {
          if (sources[j].kind == ExtraSource::Constant) continue;
          auto& target = sources[j].kind == ExtraSource::Param ? params_bar : previous_bar;
          target[static_cast<std::size_t>(sources[j].index)] += value.second(0, 1 + j);
        }
      }
    }
  }

  void add_param_gradient(const TermInputs& inputs, std::span<double> params_grad) const override {
    for_each_param_element(inputs, [&](int, const auto&, const ExtraSource* sources, const auto& value, const double*) {
      for (int j = 0; j < kExtra; ++j)
        if (sources[j].kind == ExtraSource::Param)
          params_grad[static_cast<std::size_t>(sources[j].index)] += value.gradient[static_cast<std::size_t>(kDofs + j)];
    }, nullptr);
  }

  void add_param_gradient_vjp(const TermInputs& inputs, std::span<const double> c, std::span<double> x_bar,
                              std::span<double> params_bar, std::span<double> previous_bar) const override {
    std::array<double, kExtra + 1> weights{};
    for_each_param_element(inputs, [&](int, const auto& nodes, const ExtraSource* sources, const auto& value, const double* w) {
      for (int v = 0; v < kDofs + kExtra; ++v) {
        double sum = 0.0;
        for (int j = 0; j < kExtra; ++j)
          if (w[j] != 0.0) sum += w[j] * value.second(kDofs + j, v);
        if (sum == 0.0) continue;
        if (v < kDofs) {
          x_bar[static_cast<std::size_t>(3 * nodes[v / 3] + v % 3)] += sum;
        } else if (sources[v - kDofs].kind == ExtraSource::Param) {
          params_bar[static_cast<std::size_t>(sources[v - kDofs].index)] += sum;
        } else if (sources[v - kDofs].kind == ExtraSource::Previous) {
          previous_bar[static_cast<std::size_t>(sources[v - kDofs].index)] += sum;
        }
      }
    }, &c, &weights);
  }

  double max_feasible_step(const TermInputs& inputs, std::span<const double> direction) const override {
    if constexpr (requires(const Local& l) { l.max_step(inputs, 0, nullptr, nullptr); }) {
      double alpha = 1.0;
      std::array<double, kDofs> x{}, dx{};
      const int count = local_.count(inputs.model);
      for (int e = 0; e < count; ++e) {
        const auto nodes = local_.nodes(inputs.model, e);
        for (int a = 0; a < kNodes; ++a)
          for (int r = 0; r < 3; ++r) {
            const auto dof = static_cast<std::size_t>(3 * nodes[a] + r);
            x[3 * a + r] = inputs.positions[dof];
            dx[3 * a + r] = direction[dof];
          }
        alpha = std::min(alpha, local_.max_step(inputs, e, x.data(), dx.data()));
      }
      return alpha;
    } else {
      return 1.0;
    }
  }

 private:
  Local local_;

  // Calls visit(element, nodes, sources, value, weights) with the element's energy in
  // HyperDual over (x, extras), for elements that are active and have parameter inputs (and,
  // given a cotangent c, a nonzero weight c[θ index] on one of them).
  template <class Visit>
  void for_each_param_element(const TermInputs& inputs, Visit&& visit, const std::span<const double>* c,
                              std::array<double, kExtra + 1>* weights = nullptr) const {
    if constexpr (kExtra > 0) {
      constexpr int kAll = kDofs + kExtra;
      using Scalar = HyperDual<kAll>;
      std::array<double, kDofs> x{};
      std::array<Scalar, kDofs> xs{};
      std::array<double, kExtra + 1> extra{};
      std::array<Scalar, kExtra + 1> extra_scalar{};
      std::array<ExtraSource, kExtra + 1> sources{};
      std::array<double, kExtra + 1> none{};
      const int count = local_.count(inputs.model);
      for (int e = 0; e < count; ++e) {
        if constexpr (requires(const Local& l) { l.inactive(inputs, 0); }) {
          if (local_.inactive(inputs, e)) continue;
        }
        local_.extra(inputs, e, extra.data(), sources.data());
        bool any = false;
        for (int j = 0; j < kExtra; ++j) {
          const bool param = sources[j].kind == ExtraSource::Param;
          if (weights != nullptr)
            (*weights)[static_cast<std::size_t>(j)] = param ? (*c)[static_cast<std::size_t>(sources[j].index)] : 0.0;
          any = any || (param && (weights == nullptr || (*weights)[static_cast<std::size_t>(j)] != 0.0));
        }
        if (!any) continue;
        const auto nodes = local_.nodes(inputs.model, e);
        gather(inputs, e, x.data());
        for (int i = 0; i < kDofs; ++i) xs[i] = Scalar::variable(x[i], i);
        for (int j = 0; j < kExtra; ++j) extra_scalar[j] = Scalar::variable(extra[j], kDofs + j);
        const Scalar value = local_.template energy<Scalar>(inputs, e, xs.data(), extra_scalar.data());
        visit(e, nodes, sources.data(), value, weights != nullptr ? weights->data() : none.data());
      }
    }
  }

  void gather(const TermInputs& inputs, int element, double* x) const {
    const auto nodes = local_.nodes(inputs.model, element);
    for (int a = 0; a < kNodes; ++a)
      for (int r = 0; r < 3; ++r) x[3 * a + r] = inputs.positions[static_cast<std::size_t>(3 * nodes[a] + r)];
  }
};

template <class Local>
std::unique_ptr<EnergyTerm> make_local_term(Local local) {
  return std::make_unique<LocalTermSet<Local>>(std::move(local));
}

// Small scalar-generic 3-vector algebra for the local energies.
template <class T>
struct V3 {
  T x, y, z;
};
template <class T>
V3<T> load3(const T* p) {
  return {p[0], p[1], p[2]};
}
template <class T>
V3<T> operator-(const V3<T>& a, const V3<T>& b) {
  return {a.x - b.x, a.y - b.y, a.z - b.z};
}
template <class T>
V3<T> operator+(const V3<T>& a, const V3<T>& b) {
  return {a.x + b.x, a.y + b.y, a.z + b.z};
}
template <class T>
T dot(const V3<T>& a, const V3<T>& b) {
  return a.x * b.x + a.y * b.y + a.z * b.z;
}
template <class T>
V3<T> cross(const V3<T>& a, const V3<T>& b) {
  return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}

// Every term of the model (energy_terms.cpp). Gravity, external forces and inertia are not
// terms: they involve the lumped masses and live in the integrator.
std::vector<std::unique_ptr<EnergyTerm>> make_energy_terms(const SoftModel& model);

// One factory per term file.
std::unique_ptr<EnergyTerm> make_spring_term(const SoftModel& model);
std::unique_ptr<EnergyTerm> make_neo_hookean_term(const SoftModel& model);
std::unique_ptr<EnergyTerm> make_corotated_term(const SoftModel& model);
std::unique_ptr<EnergyTerm> make_tet_damping_term(const SoftModel& model);
std::unique_ptr<EnergyTerm> make_cloth_membrane_term(const SoftModel& model);
std::unique_ptr<EnergyTerm> make_cloth_bending_term(const SoftModel& model);
std::unique_ptr<EnergyTerm> make_attachment_term(const SoftModel& model);
std::unique_ptr<EnergyTerm> make_obstacle_contact_term(const SoftModel& model);
std::unique_ptr<EnergyTerm> make_moving_obstacle_contact_term(const SoftModel& model);
std::unique_ptr<EnergyTerm> make_frame_attachment_term(const SoftModel& model);

inline constexpr double kInfinity = std::numeric_limits<double>::infinity();

}  // namespace diffphys::soft
