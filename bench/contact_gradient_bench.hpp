// bench/contact_gradient_bench.hpp — owns one entry point: registering the contact-rollout
// gradient benchmarks (contact_gradient_bench.cpp) in the `diffphys_gradient_bench` binary,
// whose main() is in gradient_bench.cpp.
#pragma once

namespace diffphys::bench {

// BM_Rollout/{box_tower4_convex, humanoid_convex}/<phase> and BM_ContactGradient/<model>/<method>.
void register_contact_gradient_benchmarks();

}  // namespace diffphys::bench
