// experiments/drag_shape.hpp — `diffphys experiment drag-shape` (issue 21, experiment 3):
// optimise the aspect ratio of an elliptic solid of fixed area towed through a tank, to reduce
// its drag, by gradient descent on the exact gradient through the fluid and its obstacle
// (fluid/obstacles.hpp); a scan of the same drag over aspect ratios checks the answer.
#pragma once

#include "experiments/experiments.hpp"

namespace diffphys::experiments {

// Success when the optimised shape is streamlined (longer along its motion than across), its
// drag at least 20 % below the starting broadside shape's, and within the scan's resolution of
// the scan's least drag.
ExperimentResult run_drag_shape(const ExperimentOptions& options);

}  // namespace diffphys::experiments
