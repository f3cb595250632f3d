// tests/package/consumer/main.cpp — a user's program built against the installed diffphys
// (tests/package/): loads a scene file, steps it, differentiates a rollout, and checks the
// numbers against closed forms, so that a package that compiles but links the wrong thing, or
// nothing, fails. Usage: consumer SCENE.json (examples/scenes/bouncing_ball.json).
//
// Free fall of the ball from z0 = 1 m for n = 300 steps of h = 1 ms (it reaches the ground,
// z = 0.1 m, after ~428 steps). Semi-implicit Euler: z_n = z0 + g h² n(n+1)/2 with g = −9.81,
// so z_300 = 0.557 m, dz_300/dz0 = 1 and dz_300/dg_z = h² n(n+1)/2 = 0.04515 s².
#include <cmath>
#include <cstdio>
#include <exception>
#include <span>
#include <vector>

#include "diffphys/rollout.hpp"
#include "diffphys/scene.hpp"
#include "diffphys/simulator.hpp"

namespace {

bool check(const char* what, double got, double want, double tolerance) {
  const bool ok = std::isfinite(got) && std::abs(got - want) <= tolerance;
  std::printf("%-28s %.9g (want %.9g ± %g) %s\n", what, got, want, tolerance, ok ? "ok" : "WRONG");
  return ok;
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer SCENE.json\n");
    return 2;
  }
  const diffphys::Scene scene = diffphys::load_scene(argv[1]);
  const int ball = scene.model.body_index("ball");
  constexpr int kSteps = 300;
  const double h = 1e-3;
  const double fall = h * h * kSteps * (kSteps + 1) / 2.0;

  diffphys::Simulator simulator(scene.model, scene.params, scene.state);
  for (int i = 0; i < kSteps; ++i) {
    if (!simulator.step(scene.controls).converged) {
      std::fprintf(stderr, "step %d did not converge\n", i);
      return 1;
    }
  }
  bool ok = check("z after 300 steps", simulator.state().position[ball].z, 1.0 - 9.81 * fall, 1e-9);

  // Loss L = z_T of the ball: dL/dz0 and dL/dθ for the gravity slice, by the adjoint.
  diffphys::Rollout rollout(scene.model, scene.params);
  const std::vector<double> controls;  // no actuators
  rollout.run(scene.state, controls, kSteps);
  const diffphys::Gradients g = rollout.backward([&](int t, const diffphys::State&, std::span<double> dL_dx) {
    if (t == kSteps) dL_dx[12 * ball + 2] += 1.0;
  });
  ok &= check("dz_T/dz_0", g.initial_state[12 * ball + 2], 1.0, 1e-9);
  ok &= check("dz_T/dgravity_z", g.param(scene.model, "gravity")[2], fall, 1e-9);
  return ok ? 0 : 1;
} catch (const std::exception& error) {
  std::fprintf(stderr, "consumer: %s\n", error.what());
  return 1;
}
