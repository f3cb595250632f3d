// soft/attachment_energy.cpp — nodes pulled to fixed world points by zero-length springs:
//   E = k/2 |x_i − p_i|²   (parameter attachment_stiffness k, N/m).
// Hard pins are not an energy: pinned DOFs are removed from the solve (newton_solver.cpp).
#include "soft/energy_term.hpp"

namespace diffphys::soft {
namespace {

struct AttachmentLocal {
  static constexpr int kNodes = 1;
  static constexpr int kExtra = 1;
  static constexpr const char* kName = "attachment";

  int count(const SoftModel& model) const { return static_cast<int>(model.attachment_nodes.size()); }
  std::array<int, 1> nodes(const SoftModel& model, int e) const {
    return {model.attachment_nodes[static_cast<std::size_t>(e)]};
  }
  void extra(const TermInputs& in, int e, double* values, ExtraSource* sources) const {
    const int index = in.model.layout.attachment_stiffness + e;
    values[0] = in.params[static_cast<std::size_t>(index)];
    sources[0] = {ExtraSource::Param, index};
  }
  template <class T>
  T energy(const TermInputs& in, int e, const T* x, const T* extra) const {
    const Vector3& target = in.model.attachment_targets[static_cast<std::size_t>(e)];
    T sum = 0.0;
    for (int r = 0; r < 3; ++r) {
      const T offset = x[r] - target[static_cast<std::size_t>(r)];
      sum += offset * offset;
    }
    return 0.5 * extra[0] * sum;
  }
};

}  // namespace

std::unique_ptr<EnergyTerm> make_attachment_term(const SoftModel&) {
  return make_local_term(AttachmentLocal{});
}

}  // namespace diffphys::soft
