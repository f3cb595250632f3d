// camera/camera_setup.hpp — the checks the renderer runs on what it is given (camera,
// appearance, model), kept apart from the pixel loops so that camera_render.cpp reads as
// render and backward only. Each throws Error naming the item and the value (error.hpp).
#pragma once

#include "diffphys/camera.hpp"
#include "diffphys/model.hpp"

namespace diffphys::camera {

void check_camera(const Model& model, const Camera& camera);
void check_appearance(const Model& model, const Appearance& appearance);
// Convex meshes are not rendered: refused rather than drawn wrongly.
void check_model_shapes(const Model& model);

// focal length in pixels of a vertical field of view, (H/2)/tan(fov/2), and its derivative.
double focal_pixels(const Camera& camera);
double focal_pixels_per_fov(const Camera& camera);

// Number of size parameters the camera reads per shape and the bounding radius of a shape
// about its frame's origin (+∞ for a plane).
double bounding_radius(ShapeType type, const double* size);

}  // namespace diffphys::camera
