// adjoint/contact_tangents.hpp — the Jacobian of a box's face contact (a box on a box's
// face, or a box on a plane) and of a capsule's end on a plane in closed form, for the
// backward pass.
//
// Such a contact is a point x of the incident box (a vertex, an edge crossing a side plane
// of the reference face, or a reference-face corner carried onto the incident face), with
// gap g = n·(x − c) to the reference face (normal n, a point c of it), position x − n g/2
// and normal ±n (collision/box_features.cpp gives the feature ids and the values). Its
// derivatives along each of the 18 inputs of contact_geometry.hpp follow from those of
// points and directions fixed in a body, δx = δp + δθ × (x − p_body) + R (s ∘ δh), by the
// product and quotient rules; they are computed here on plain doubles, where Dual<18>
// arithmetic through the same formulas cost most of a box tower's backward pass.
//
// A capsule's end e on a plane is the same with x = e − n r, the capsule's surface point
// (narrow_phase.cpp's capsule_plane: gap n·(e − o) − r, position e − n (r + h)/2).
//
// Covers box_box's face-pair and deepest-vertex features, box_plane's vertices and
// capsule_plane's ends (cylinders collide as capsules); false for every other contact (the
// caller evaluates it on dual numbers instead). Tests compare it with the dual narrow phase
// (tests/box_features_test.cpp, tests/contact_geometry_test.cpp).
#pragma once

#include "adjoint/contact_geometry.hpp"

namespace diffphys::adjoint {

// The Jacobian of `contact` between shapes a and b (posed by contact_shape_frame); false
// when it is not a contact covered above.
bool closed_form_contact_jacobian(const Contact& contact, const ContactShapeFrame& a, const ContactShapeFrame& b,
                               ContactGeometryJacobian& jacobian);

}  // namespace diffphys::adjoint
