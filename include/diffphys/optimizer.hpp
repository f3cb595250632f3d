// diffphys/optimizer.hpp — first-order optimisers for what is learned through the simulator
// (physical parameters, initial states, controls, controller weights): gradient descent with
// momentum, Adam, learning-rate schedules and gradient clipping. L-BFGS, which needs loss
// evaluations for its line search, lives in diffphys/lbfgs.hpp.
//
//   Adam adam(OptimizerSettings(1e-3, {}, GradientClip::norm(100)));
//   for (...) { gradient = ...; adam.step(weights, gradient); }
#pragma once

#include <span>
#include <vector>

namespace diffphys {

// rate(i) for iteration i = 0, 1, ...
struct LearningRateSchedule {
  enum class Kind { Constant, Step, Exponential, Cosine };
  Kind kind = Kind::Constant;
  double factor = 0.1;   // Step: ×factor every `period` iterations; Exponential: ×factor^(i/period)
  int period = 100;      // Cosine: iterations from the base rate down to `minimum`, then held
  double minimum = 0.0;  // Cosine: the final rate
  double rate(double base, int iteration) const;

  static LearningRateSchedule step(double factor, int period) { return {Kind::Step, factor, period, 0.0}; }
  static LearningRateSchedule exponential(double factor, int period) { return {Kind::Exponential, factor, period, 0.0}; }
  static LearningRateSchedule cosine(int period, double minimum) { return {Kind::Cosine, 0.0, period, minimum}; }
};

// Applied to a copy of the gradient before each update.
struct GradientClip {
  enum class Kind { None, Norm, Value };
  Kind kind = Kind::None;
  double limit = 0.0;  // Norm: rescale to this Euclidean norm; Value: clamp every entry to ±limit
  void apply(std::span<double> gradient) const;

  static GradientClip norm(double limit) { return {Kind::Norm, limit}; }
  static GradientClip value(double limit) { return {Kind::Value, limit}; }
};

struct OptimizerSettings {
  OptimizerSettings(double rate = 1e-2, LearningRateSchedule rate_schedule = {}, GradientClip gradient_clip = {})
      : learning_rate(rate), schedule(rate_schedule), clip(gradient_clip) {}
  double learning_rate;
  LearningRateSchedule schedule;
  GradientClip clip;
};

class Optimizer {
 public:
  explicit Optimizer(OptimizerSettings settings);
  virtual ~Optimizer() = default;
  // One descent update of `params` from `gradient` (same size every call); throws Error on a
  // size change or a non-finite gradient, naming the entry.
  void step(std::span<double> params, std::span<const double> gradient);
  int iteration() const { return iteration_; }
  double current_rate() const { return settings_.schedule.rate(settings_.learning_rate, iteration_); }
  const OptimizerSettings& settings() const { return settings_; }
  // Changes the base rate from the next step on, keeping the moments and the iteration count
  // (a hand-written schedule, as torch's param_groups[...]["lr"] = ...). Throws Error unless
  // positive and finite.
  void set_learning_rate(double rate);
  // Forgets the iteration count and the moment estimates.
  virtual void reset();

 protected:
  virtual void update(std::span<double> params, std::span<const double> gradient, double rate) = 0;

 private:
  OptimizerSettings settings_;
  int iteration_ = 0;
  std::vector<double> clipped_;
};

// θ ← θ − rate·m,  m ← μ m + g (heavy-ball momentum; μ = 0 is plain gradient descent).
class GradientDescent final : public Optimizer {
 public:
  explicit GradientDescent(OptimizerSettings settings, double momentum = 0.0);
  void reset() override;

 private:
  void update(std::span<double> params, std::span<const double> gradient, double rate) override;
  double momentum_;
  std::vector<double> velocity_;
};

// Adam (Kingma & Ba 2015, Algorithm 1), with bias-corrected first and second moments.
class Adam final : public Optimizer {
 public:
  explicit Adam(OptimizerSettings settings, double beta1 = 0.9, double beta2 = 0.999, double epsilon = 1e-8);
  void reset() override;

 private:
  void update(std::span<double> params, std::span<const double> gradient, double rate) override;
  double beta1_, beta2_, epsilon_;
  double beta1_power_ = 1.0, beta2_power_ = 1.0;
  std::vector<double> first_moment_, second_moment_;
};

}  // namespace diffphys
