// camera/camera_setup.hpp — the checks the renderer runs on what it is given (camera,
// appearance, model), kept apart from the pixel loops so that camera_render.cpp reads as
// render and backward only. Each throws Error naming the item and the value (error.hpp).
#pragma once

#include "camera/shape_rays.hpp"
#include "diffphys/camera.hpp"
#include "diffphys/model.hpp"

namespace diffphys::camera {

void check_camera(const Model& model, const Camera& camera);
void check_appearance(const Model& model, const Appearance& appearance);

// focal length in pixels of a vertical field of view, (H/2)/tan(fov/2), and its derivative.
double focal_pixels(const Camera& camera);
double focal_pixels_per_fov(const Camera& camera);

// The radius of a sphere about the shape frame's origin that holds the shape (+∞ for a plane):
// rays that pass outside it are not cast against the shape.
double bounding_radius(const RayTarget& target);

}  // namespace diffphys::camera
