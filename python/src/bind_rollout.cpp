// python/src/bind_rollout.cpp — diffphys/rollout.hpp: RolloutOptions and GradientHealth, the
// options and the rigid part's health report of every rollout. The rigid Rollout, Controller
// and Gradients of the Python API are a thin layer (python/diffphys/_rollout.py) over the world
// binding (bind_world.cpp): one rollout binding for every kind of world.
#include "bindings.hpp"
#include "diffphys/rollout.hpp"

namespace diffphys::python {

void bind_rollout(py::module_& module) {
  module.attr("STATE_TANGENT_PER_BODY") = kStateTangentPerBody;

  py::class_<RolloutOptions>(module, "RolloutOptions",
                             "Memory and long-horizon options of a Rollout (docs/gradients.md).")
      .def(
          py::init([](int checkpoint_interval, std::size_t memory_budget, double gradient_decay, double gradient_clip) {
            return RolloutOptions{checkpoint_interval, memory_budget, gradient_decay, gradient_clip};
          }),
          py::arg("checkpoint_interval") = 0, py::arg("memory_budget") = std::size_t{256} << 20,
          py::arg("gradient_decay") = 1.0, py::arg("gradient_clip") = 0.0)
      .def_readwrite("checkpoint_interval", &RolloutOptions::checkpoint_interval,
                     "Keep one state every k steps (0: every state if they fit in memory_budget, else ⌈√T⌉).")
      .def_readwrite("memory_budget", &RolloutOptions::memory_budget,
                     "Bytes of what the rollout keeps that grows with T: states, step records, and the per-step logs "
                     "(statuses, |dL/dx_t|, stage gains, contact changes), kept only when they fit in a quarter of it.")
      .def_readwrite("gradient_decay", &RolloutOptions::gradient_decay, "α ∈ (0, 1]: x̄_t ← α x̄_t per step back.")
      .def_readwrite("gradient_clip", &RolloutOptions::gradient_clip, "Clip |x̄_t| to this norm per step (0: off).")
      .def_readwrite("parameter_gradients", &RolloutOptions::parameter_gradients,
                     "dL/dθ too (False: Gradients.params stays empty; dL/dx_0 and dL/du_t only, faster).");

  py::class_<GradientHealth>(module, "GradientHealth", "What the backward pass saw.")
      .def_property_readonly(
          "state_gradient_norm", [](const GradientHealth& health) { return vector_of(health.state_gradient_norm); },
          "(T + 1) |dL/dx_t|.")
      .def_readonly("first_non_finite_step", &GradientHealth::first_non_finite_step, "-1 if none.")
      .def_readonly("first_non_finite_stage", &GradientHealth::first_non_finite_stage)
      .def_readonly("contact_changes", &GradientHealth::contact_changes,
                    "Steps whose contact set differs from the previous.")
      .def_readonly("clipped_steps", &GradientHealth::clipped_steps)
      .def_readonly("per_step_kept", &GradientHealth::per_step_kept,
                    "False when the per-step arrays were not kept (a long rollout beyond a quarter of memory_budget).")
      .def_readonly("contact_change_count", &GradientHealth::contact_change_count,
                    "Steps whose contact set differs from the previous (counted even when the list is not kept).")
      .def_readonly("largest_state_gradient_norm", &GradientHealth::largest_state_gradient_norm, "max_t |dL/dx_t|.")
      .def_readonly("solver_converged", &GradientHealth::solver_converged)
      .def_property_readonly(
          "stage_gain",
          [](const GradientHealth& health) {
            py::array_t<double> out({static_cast<py::ssize_t>(health.stage_gain.size()), py::ssize_t{3}});
            auto view = out.mutable_unchecked<2>();
            for (std::size_t t = 0; t < health.stage_gain.size(); ++t)
              for (std::size_t k = 0; k < 3; ++k)
                view(static_cast<py::ssize_t>(t), static_cast<py::ssize_t>(k)) = health.stage_gain[t][k];
            return out;
          },
          "(T, 3) per rigid step, the adjoint's norm after the joint projection and integration, after the "
          "velocity solve and after the whole step, relative to the step's input (docs/gradients.md); "
          "(0, 3) in joint coordinates.");
}

}  // namespace diffphys::python
