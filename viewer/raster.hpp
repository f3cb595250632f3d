// viewer/raster.hpp — a small software rasteriser, so that `diffphys render` makes pictures of a
// trajectory on a machine without a browser or a GPU (docs/viewer.md, "Pictures without a
// browser"). It owns the image, the depth buffer, the perspective camera and the drawing of
// triangles and lines; what to draw (shapes, soft meshes, the ground) is render_trajectory's.
//
// Conventions: world frame z up (as scene files); the camera looks from `eye` at `target`
// with a vertical field of view. A point p seen from the camera has depth z_C = (p − eye)·f
// along the viewing direction f; it lands on pixel (W/2 + focal x_C / z_C, H/2 − focal y_C / z_C)
// with focal = (H/2) / tan(fov/2) pixels, pixel (i, j)'s centre at (i + ½, j + ½). The depth
// buffer keeps 1/z_C, which is affine in screen space (so interpolating it across a
// triangle is exact), the nearest surface having the largest. Triangles are clipped against
// the near plane z_C = near in camera space before projection, so a ground patch that passes
// behind the camera is drawn correctly.
//
// Shading (Lambert): colour · (ambient + diffuse · max(0, n·l)), n the surface normal turned
// towards the viewer (every surface is seen from both sides: cloth, the ground), l the unit
// direction towards the one directional light. Normals are interpolated across a triangle
// (perspective-correct) and normalised per pixel, so a tessellated sphere reads as smooth.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

namespace diffphys::viewer {

using Vec3 = std::array<double, 3>;

// The little vector algebra the renderer needs (Vec3 is a plain array: no Eigen here).
inline Vec3 operator+(const Vec3& a, const Vec3& b) {
  return {a[0] + b[0], a[1] + b[1], a[2] + b[2]};
}
inline Vec3 operator-(const Vec3& a, const Vec3& b) {
  return {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
}
inline Vec3 operator*(double s, const Vec3& a) {
  return {s * a[0], s * a[1], s * a[2]};
}
inline double dot(const Vec3& a, const Vec3& b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
inline Vec3 cross(const Vec3& a, const Vec3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
inline double norm(const Vec3& a) {
  return std::sqrt(dot(a, a));
}

// An 8-bit RGB colour.
struct Rgb {
  std::uint8_t red = 0, green = 0, blue = 0;
  friend bool operator==(const Rgb&, const Rgb&) = default;
};

// 0xRRGGBB (the web viewer's notation) as Rgb.
constexpr Rgb rgb_from_hex(std::uint32_t hex) {
  return {static_cast<std::uint8_t>(hex >> 16), static_cast<std::uint8_t>(hex >> 8), static_cast<std::uint8_t>(hex)};
}

// Width × height pixels, row-major from the top row, 3 bytes (R, G, B) per pixel.
struct Image {
  int width = 0;
  int height = 0;
  std::vector<std::uint8_t> pixels;  // (height × width × 3)

  Image() = default;
  Image(int width_in, int height_in, Rgb fill);
  Rgb at(int column, int row) const;
  void set(int column, int row, Rgb colour);
};

// Image `source` shrunk by an integer `factor` in both directions, each pixel the mean of a
// factor × factor block (the supersampled picture's antialiasing). Throws std::invalid_argument
// unless both sizes are multiples of factor.
Image downsample(const Image& source, int factor);

struct Camera {
  Vec3 eye{0, -3, 1};
  Vec3 target{0, 0, 0};
  Vec3 up{0, 0, 1};                  // world up; replaced by +y if the view is along it
  double vertical_fov_degrees = 40;  // the web viewer's
  double near = 0.01;                // m: the near clipping plane's depth
};

// A surface's paint: one colour, or a checkerboard of two in the plane spanned by the unit
// vectors `axis_u`, `axis_v` (squares of side `cell`, metres, corner at `origin`).
struct Paint {
  Rgb colour;
  bool checker = false;
  Rgb second;
  Vec3 origin{0, 0, 0};
  Vec3 axis_u{1, 0, 0};
  Vec3 axis_v{0, 1, 0};
  double cell = 1.0;
  // m: depth-tested as if this much nearer to the camera (a thin surface lying on another, as a
  // cloth on an obstacle, whose flat triangles would otherwise let the obstacle show through).
  double depth_bias = 0.0;

  static Paint solid(Rgb colour) {
    Paint paint;
    paint.colour = colour;
    return paint;
  }
};

struct Lighting {
  Vec3 towards_light{0.5, -0.8, 1.5};  // need not be unit (normalised when drawing); the viewer's sun
  double ambient = 0.42;
  double diffuse = 0.62;
};

// Draws into an image with a depth buffer from one camera.
class Rasteriser {
 public:
  // Throws std::invalid_argument unless width and height are positive and the camera's eye
  // and target differ, its field of view is in (0, 180) degrees and near > 0.
  Rasteriser(int width, int height, const Camera& camera, Rgb background, const Lighting& lighting = {});

  // A triangle with a normal at each corner (need not be unit; a zero normal shades the
  // corner by the triangle's face normal). World coordinates.
  void draw_triangle(const std::array<Vec3, 3>& corners, const std::array<Vec3, 3>& normals, const Paint& paint);
  // A flat triangle: its face normal at every corner.
  void draw_triangle(const std::array<Vec3, 3>& corners, const Paint& paint);
  // An unshaded line `width_pixels` wide, depth-tested (springs of a soft body).
  void draw_line(const Vec3& from, const Vec3& to, Rgb colour, int width_pixels);

  const Image& image() const { return image_; }
  // The camera's focal length in pixels: (H/2) / tan(fov/2).
  double focal_pixels() const { return focal_; }
  // How many pixels some triangle or line has been drawn on.
  long long covered_pixels() const;

 private:
  struct CameraPoint;  // a corner in camera space, with what is interpolated across the triangle
  void fill_clipped(const CameraPoint& a, const CameraPoint& b, const CameraPoint& c, const Paint& paint);
  Vec3 to_camera(const Vec3& world) const;

  Image image_;
  std::vector<float> inverse_depth_;  // (height × width): 1/z_C of the nearest surface, 0 = none
  Camera camera_;
  Vec3 right_{}, up_{}, forward_{};  // camera axes in the world, unit
  double focal_ = 1.0;
  Lighting lighting_;
  Vec3 light_direction_{};  // unit, towards the light
};

}  // namespace diffphys::viewer
