// diffphys/contact.hpp — one contact point between two shapes, as collision detection
// reports it and the solver and the trajectory writer read it.
#pragma once

#include "diffphys/math.hpp"

namespace diffphys {

struct Contact {
  int body_a = 0, body_b = 0;    // body a is pushed along +normal, body b along −normal
  int shape_a = 0, shape_b = 0;
  Vec3 position;                 // world, m: midway between the two surfaces
  Vec3 normal;                   // world, unit, pointing from b towards a
  double gap = 0.0;              // signed distance between the surfaces, m (< 0: penetration)
  // The distance within which the narrow phase looked for this contact's shape pair, m:
  // contact_margin, or more for a fast pair (speculative contacts; model.hpp). The backward
  // pass repeats the pair's narrow phase with it, to find the same points.
  double margin = 0.0;
  int feature = 0;  // stable id of the touching feature pair within this shape pair (for
                    // warm start and for the backward pass's fixed contact set)
  double normal_impulse = 0.0;   // solved λ_n over the step, N·s
  Vec3 friction_impulse;         // solved tangential impulse, world, N·s
};

}  // namespace diffphys
