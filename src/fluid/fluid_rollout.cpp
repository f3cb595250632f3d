// fluid/fluid_rollout.cpp — FluidRollout (diffphys/fluid_rollout.hpp): the forward run with
// its checkpoints, and the reverse sweep through each segment's step adjoints.
#include "diffphys/fluid_rollout.hpp"

#include <algorithm>
#include <cmath>

#include "diffphys/error.hpp"
#include "fluid/fluid_step.hpp"

namespace diffphys::fluid {

std::span<const double> FluidGradients::param(const FluidModel& model, std::string_view name) const {
  for (const FluidParamLayout::Slice& s : model.layout.slices)
    if (s.name == name)
      return std::span<const double>(params).subspan(static_cast<std::size_t>(s.offset),
                                                     static_cast<std::size_t>(s.size));
  throw Error(message("fluid gradients: no slice named '", name, "' (fluid/viscosity, fluid/buoyancy)"));
}

FluidRollout::FluidRollout(const FluidModel& model, const FluidParams& params, FluidRolloutOptions options)
    : model_(model), params_(params), options_(options), workspace_(model_) {}

std::span<const double> FluidRollout::step_controls(int step) const {
  if (controls_.empty()) return {};
  const std::size_t size = static_cast<std::size_t>(model_.control_count());
  return std::span<const double>(controls_).subspan(static_cast<std::size_t>(step) * size, size);
}

void FluidRollout::run(const FluidState& initial, std::span<const double> controls, int steps) {
  if (steps < 0) throw Error(message("fluid rollout: steps must be non-negative, got ", steps));
  validate_fluid_params(model_, params_);
  validate_fluid_state(model_, initial);
  if (!controls.empty() && controls.size() != static_cast<std::size_t>(steps) * model_.control_count())
    throw Error(message("fluid rollout: controls have ", controls.size(), " values, expected ", steps, " x ",
                        model_.control_count(), " (2 per cell per step) or none"));
  for (std::size_t k = 0; k < controls.size(); ++k)
    if (!std::isfinite(controls[k]))
      throw Error(message("fluid rollout: control ", k, " (step ", k / model_.control_count(), ") must be finite, got ",
                          controls[k]));
  steps_ = steps;
  controls_.assign(controls.begin(), controls.end());
  const std::size_t state_bytes =
      sizeof(double) * (static_cast<std::size_t>(model_.velocity_count()) +
                        static_cast<std::size_t>(model_.scalar_count) * model_.cell_count());
  const std::size_t record_bytes = sizeof(double) * step_record_size(model_);
  if (options_.checkpoint_interval > 0) {
    interval_ = options_.checkpoint_interval;
  } else if ((static_cast<std::size_t>(steps) + 1) * state_bytes + static_cast<std::size_t>(steps) * record_bytes <=
             options_.memory_budget) {
    interval_ = 1;
  } else {
    interval_ = std::max(1, static_cast<int>(std::ceil(std::sqrt(static_cast<double>(steps)))));
    // Checkpoints plus one segment's states and records must fit.
    while (interval_ < steps &&
           (static_cast<std::size_t>(steps / interval_ + 1) * state_bytes +
            static_cast<std::size_t>(interval_) * (state_bytes + record_bytes)) > options_.memory_budget)
      ++interval_;
  }
  checkpoints_.clear();
  checkpoints_.reserve(static_cast<std::size_t>(steps / interval_ + 1));
  const std::size_t record_size = step_record_size(model_);
  records_.assign(interval_ == 1 ? static_cast<std::size_t>(steps) * record_size : 0, 0.0);
  statuses_.assign(static_cast<std::size_t>(steps), {});
  FluidState current = initial, next = initial;
  for (int t = 0; t < steps; ++t) {
    if (t % interval_ == 0) checkpoints_.push_back(current);
    std::span<double> record;
    if (interval_ == 1)
      record = std::span<double>(records_).subspan(static_cast<std::size_t>(t) * record_size, record_size);
    statuses_[t] = fluid_step_recorded(model_, params_, current, step_controls(t), next, workspace_, record);
    if (!statuses_[t].converged) {
      steps_ = t;
      throw Error(message("fluid rollout: step ", t, " failed: ", statuses_[t].message));
    }
    std::swap(current, next);
  }
  if (steps % interval_ == 0) checkpoints_.push_back(current);
  final_state_ = current;
}

FluidState FluidRollout::state(int step) const {
  if (step < 0 || step > steps_) throw Error(message("fluid rollout: no state ", step, " (0..", steps_, ")"));
  if (step == steps_) return final_state_;
  FluidState current = checkpoints_[static_cast<std::size_t>(step / interval_)], next = current;
  for (int t = step / interval_ * interval_; t < step; ++t) {
    fluid_step(model_, params_, current, step_controls(t), next, workspace_);
    std::swap(current, next);
  }
  return current;
}

std::size_t FluidRollout::stored_bytes() const {
  std::size_t bytes = records_.size() * sizeof(double);
  for (const FluidState& s : checkpoints_) bytes += (s.velocities.size() + s.scalars.size()) * sizeof(double);
  return bytes;
}

FluidGradients FluidRollout::backward(const FluidLossGradient& loss_gradient) const {
  const std::size_t faces = static_cast<std::size_t>(model_.velocity_count());
  const std::size_t record_size = step_record_size(model_);
  const std::size_t scalar_values = static_cast<std::size_t>(model_.scalar_count) * model_.cell_count();
  const std::size_t control_size = static_cast<std::size_t>(model_.control_count());
  FluidGradients gradients;
  gradients.controls.assign(static_cast<std::size_t>(steps_) * control_size, 0.0);
  gradients.params.assign(static_cast<std::size_t>(model_.param_count()), 0.0);
  // x̄_{t+1} and x̄_t.
  std::vector<double> velocities_bar(faces, 0.0), scalars_bar(scalar_values, 0.0);
  std::vector<double> velocities_bar_in(faces), scalars_bar_in(scalar_values);
  loss_gradient(steps_, final_state_, velocities_bar, scalars_bar);
  // Segment scratch (interval > 1): its states and u* records, re-run from its checkpoint.
  std::vector<FluidState> segment;
  std::vector<double> segment_records;
  if (interval_ > 1) {
    segment.assign(static_cast<std::size_t>(interval_), FluidState{});
    segment_records.assign(static_cast<std::size_t>(interval_) * record_size, 0.0);
  }
  const int segment_count = (steps_ + interval_ - 1) / interval_;
  for (int s = segment_count - 1; s >= 0; --s) {
    const int begin = s * interval_, end = std::min(steps_, begin + interval_);
    if (interval_ > 1) {
      segment[0] = checkpoints_[static_cast<std::size_t>(s)];
      FluidState last;  // state `end`: not needed (x̄_end is already known)
      for (int t = begin; t < end; ++t) {
        const std::size_t local = static_cast<std::size_t>(t - begin);
        FluidState& out = t + 1 < end ? segment[local + 1] : last;
        fluid_step_recorded(model_, params_, segment[local], step_controls(t), out, workspace_,
                            std::span<double>(segment_records).subspan(local * record_size, record_size));
      }
    }
    for (int t = end - 1; t >= begin; --t) {
      const FluidState& before =
          interval_ == 1 ? checkpoints_[static_cast<std::size_t>(t)] : segment[static_cast<std::size_t>(t - begin)];
      const std::span<const double> record =
          interval_ == 1
              ? std::span<const double>(records_).subspan(static_cast<std::size_t>(t) * record_size, record_size)
              : std::span<const double>(segment_records)
                    .subspan(static_cast<std::size_t>(t - begin) * record_size, record_size);
      std::fill(velocities_bar_in.begin(), velocities_bar_in.end(), 0.0);
      std::fill(scalars_bar_in.begin(), scalars_bar_in.end(), 0.0);
      // dL/df_t also when the run had no controls (f = 0): the gradient at zero forces.
      const std::span<double> controls_bar =
          std::span<double>(gradients.controls).subspan(static_cast<std::size_t>(t) * control_size, control_size);
      FluidStepStatus status;
      fluid_step_vjp(model_, params_, before, step_controls(t), record, velocities_bar, scalars_bar, velocities_bar_in,
                     scalars_bar_in, controls_bar, gradients.params, workspace_, status);
      gradients.solver_converged = gradients.solver_converged && status.converged;
      std::swap(velocities_bar, velocities_bar_in);
      std::swap(scalars_bar, scalars_bar_in);
      loss_gradient(t, before, velocities_bar, scalars_bar);
    }
  }
  gradients.initial_velocities = std::move(velocities_bar);
  gradients.initial_scalars = std::move(scalars_bar);
  return gradients;
}

}  // namespace diffphys::fluid
