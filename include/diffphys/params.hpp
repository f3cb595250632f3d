// diffphys/params.hpp — Params θ: the values of every differentiable physical constant.
//
// One flat vector whose layout (named slices) is owned by the Model (model.layout), so a
// gradient dL/dθ comes back in exactly this layout. Cheap to copy; change values freely
// between rollouts — the Model stays the same. validate_params() refuses values that make
// no physical sense (negative mass, NaN, friction < 0, ...), naming the slice and value.
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "diffphys/math.hpp"

namespace diffphys {

class Model;

struct Params {
  std::vector<double> values;  // (model.param_count())

  // The slice named `name` (e.g. "body/ball/mass"); throws Error for an unknown name.
  std::span<double> slice(const Model& model, std::string_view name);
  std::span<const double> slice(const Model& model, std::string_view name) const;

  double at(int offset) const { return values[static_cast<std::size_t>(offset)]; }
  Vec3 vec3_at(int offset) const {
    const auto i = static_cast<std::size_t>(offset);
    return {values[i], values[i + 1], values[i + 2]};
  }
};

// Throws Error naming the first slice whose value is invalid for the model.
void validate_params(const Model& model, const Params& params);

}  // namespace diffphys
