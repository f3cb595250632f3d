// soft/frame_attachment_energy.cpp — nodes tied to points fixed in a moving frame (a rigid
// body's pose in a coupled scene, coupled.hpp) by zero-length springs:
//   E = k/2 |x_i − (p + R r_i)|²
// with r_i the point in the frame, (p, R) the frame's end-of-step pose (θ slice
// "frame/<name>/pose", set every step by the coupled rollout) and k the θ entry
// frame_attachment_stiffness. The pose is an input of the term like any parameter, so the
// backward pass returns dL/d(p, R) through the same mixed derivatives (energy_term.hpp).
#include "soft/shape_distance.hpp"

namespace diffphys::soft {
namespace {

struct FrameAttachmentLocal {
  static constexpr int kNodes = 1;
  static constexpr int kExtra = 13;  // k, pose (12)
  static constexpr const char* kName = "frame_attachment";

  int count(const SoftModel& model) const { return static_cast<int>(model.frame_attachment_nodes.size()); }
  std::array<int, 1> nodes(const SoftModel& model, int e) const {
    return {model.frame_attachment_nodes[static_cast<std::size_t>(e)]};
  }
  void extra(const TermInputs& in, int e, double* values, ExtraSource* sources) const {
    const SoftParamLayout& layout = in.model.layout;
    const int stiffness = layout.frame_attachment_stiffness + e;
    values[0] = in.params[static_cast<std::size_t>(stiffness)];
    sources[0] = {ExtraSource::Param, stiffness};
    const auto frame = static_cast<std::size_t>(in.model.frame_attachment_frames[static_cast<std::size_t>(e)]);
    for (int k = 0; k < 12; ++k) {
      const int index = layout.frame_pose[frame] + k;
      values[1 + k] = in.params[static_cast<std::size_t>(index)];
      sources[1 + k] = {ExtraSource::Param, index};
    }
  }
  template <class T>
  T energy(const TermInputs& in, int e, const T* x, const T* extra) const {
    const Vector3& r = in.model.frame_attachment_points[static_cast<std::size_t>(e)];
    const V3<T> target = from_frame(extra + 1, V3<T>{T(r[0]), T(r[1]), T(r[2])});
    const V3<T> offset = load3(x) - target;
    return 0.5 * extra[0] * dot(offset, offset);
  }
};

}  // namespace

std::unique_ptr<EnergyTerm> make_frame_attachment_term(const SoftModel&) {
  return make_local_term(FrameAttachmentLocal{});
}

}  // namespace diffphys::soft
