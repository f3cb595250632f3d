// learn/optimizer.cpp — the optimisers of diffphys/optimizer.hpp.
#include "diffphys/optimizer.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "diffphys/error.hpp"

namespace diffphys {

double LearningRateSchedule::rate(double base, int iteration) const {
  const double i = iteration;
  switch (kind) {
    case Kind::Constant:
      return base;
    case Kind::Step:
      return base * std::pow(factor, std::floor(i / std::max(1, period)));
    case Kind::Exponential:
      return base * std::pow(factor, i / std::max(1, period));
    case Kind::Cosine: {
      const double progress = std::min(1.0, i / std::max(1, period));
      return minimum + 0.5 * (base - minimum) * (1.0 + std::cos(std::numbers::pi * progress));
    }
  }
  return base;
}

void GradientClip::apply(std::span<double> gradient) const {
  if (kind == Kind::Value) {
    for (double& g : gradient) g = std::clamp(g, -limit, limit);
  } else if (kind == Kind::Norm) {
    double squared = 0.0;
    for (const double g : gradient) squared += g * g;
    const double norm = std::sqrt(squared);
    if (norm > limit)
      for (double& g : gradient) g *= limit / norm;
  }
}

Optimizer::Optimizer(OptimizerSettings settings) : settings_(settings) {
  if (!(settings_.learning_rate > 0) || !std::isfinite(settings_.learning_rate))
    throw Error(message("optimizer: learning_rate must be positive and finite, got ", settings_.learning_rate));
  if (settings_.clip.kind != GradientClip::Kind::None && !(settings_.clip.limit > 0))
    throw Error(message("optimizer: gradient clip limit must be positive, got ", settings_.clip.limit));
  if (settings_.schedule.period < 1)
    throw Error(message("optimizer: schedule period must be at least 1, got ", settings_.schedule.period));
}

void Optimizer::set_learning_rate(double rate) {
  if (!(rate > 0) || !std::isfinite(rate))
    throw Error(message("optimizer: learning_rate must be positive and finite, got ", rate));
  settings_.learning_rate = rate;
}

void Optimizer::step(std::span<double> params, std::span<const double> gradient) {
  if (params.size() != gradient.size())
    throw Error(message("optimizer: ", gradient.size(), " gradient entries for ", params.size(), " parameters"));
  if (!clipped_.empty() && clipped_.size() != params.size())
    throw Error(message("optimizer: parameter count changed from ", clipped_.size(), " to ", params.size(),
                        " (call reset() for a new problem)"));
  for (std::size_t i = 0; i < gradient.size(); ++i)
    if (!std::isfinite(gradient[i]))
      throw Error(message("optimizer: gradient entry ", i, " is ", gradient[i], " at iteration ", iteration_));
  clipped_.assign(gradient.begin(), gradient.end());
  settings_.clip.apply(clipped_);
  update(params, clipped_, current_rate());
  ++iteration_;
}

void Optimizer::reset() {
  iteration_ = 0;
  clipped_.clear();
}

GradientDescent::GradientDescent(OptimizerSettings settings, double momentum)
    : Optimizer(settings), momentum_(momentum) {
  if (!(momentum >= 0 && momentum < 1))
    throw Error(message("gradient descent: momentum must lie in [0, 1), got ", momentum));
}

void GradientDescent::reset() {
  Optimizer::reset();
  velocity_.clear();
}

void GradientDescent::update(std::span<double> params, std::span<const double> gradient, double rate) {
  velocity_.resize(params.size(), 0.0);
  for (std::size_t i = 0; i < params.size(); ++i) {
    velocity_[i] = momentum_ * velocity_[i] + gradient[i];
    params[i] -= rate * velocity_[i];
  }
}

Adam::Adam(OptimizerSettings settings, double beta1, double beta2, double epsilon)
    : Optimizer(settings), beta1_(beta1), beta2_(beta2), epsilon_(epsilon) {
  if (!(beta1 >= 0 && beta1 < 1) || !(beta2 >= 0 && beta2 < 1) || !(epsilon > 0))
    throw Error(message("adam: need 0 ≤ β1, β2 < 1 and ε > 0, got β1 = ", beta1, ", β2 = ", beta2, ", ε = ", epsilon));
}

void Adam::reset() {
  Optimizer::reset();
  first_moment_.clear();
  second_moment_.clear();
  beta1_power_ = beta2_power_ = 1.0;
}

void Adam::update(std::span<double> params, std::span<const double> gradient, double rate) {
  first_moment_.resize(params.size(), 0.0);
  second_moment_.resize(params.size(), 0.0);
  beta1_power_ *= beta1_;
  beta2_power_ *= beta2_;
  for (std::size_t i = 0; i < params.size(); ++i) {
    first_moment_[i] = beta1_ * first_moment_[i] + (1 - beta1_) * gradient[i];
    second_moment_[i] = beta2_ * second_moment_[i] + (1 - beta2_) * gradient[i] * gradient[i];
    const double m_hat = first_moment_[i] / (1 - beta1_power_);
    const double v_hat = second_moment_[i] / (1 - beta2_power_);
    params[i] -= rate * m_hat / (std::sqrt(v_hat) + epsilon_);
  }
}

}  // namespace diffphys
