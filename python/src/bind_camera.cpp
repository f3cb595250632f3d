// python/src/bind_camera.cpp — diffphys/camera.hpp and diffphys/world_camera.hpp: Camera,
// ShapeLook, Texture, Appearance (values, copied across), World.cameras and
// World.camera_appearance, and WorldCamera — a world's camera rendering flat world states to
// NumPy (colour (…, H, W, 3), depth (…, H, W)) and its backward pass into the world's tangent
// and θ layouts, the camera's pose and field of view, colours and texels.
//
// A WorldCamera owns a copy of its World (the C++ one references the world). Frames of a batch
// are drawn one after the other, each on the camera's threads (bands of rows, the same bits for
// any thread count); the GIL is released meanwhile, and nothing is allocated per frame: one
// WorldState, image, cotangent and gradient buffer serve every frame of the call.
#include <numbers>

#include "bindings.hpp"
#include "diffphys/camera.hpp"
#include "diffphys/world.hpp"
#include "diffphys/world_camera.hpp"
#include "state_vector.hpp"

namespace diffphys::python {
namespace {

struct BoundWorldCamera {
  World world;  // constructed first: the camera references it
  WorldCamera camera;
  WorldState state;  // the frame being drawn (its rigid part; the camera ignores the soft one)
  CameraImage image, cotangent;
  WorldCameraGradients gradients;
  BoundWorldCamera(const World& world_in, std::string_view name, int threads)
      : world(world_in), camera(world, name, threads) {
    state.rigid.resize(world.rigid->model.body_count());
  }
  py::ssize_t height() const { return camera.camera().height; }
  py::ssize_t width() const { return camera.camera().width; }
};

// The leading axes of `states` (…, state_size) and their product; refuses another last axis.
std::vector<py::ssize_t> frame_axes(const DoubleArray& states, const World& world, const char* what) {
  const py::ssize_t size = world.layout().state_size;
  if (states.ndim() < 1 || states.shape(states.ndim() - 1) != size)
    throw Error(message(what, ": states must have shape (..., state_size = ", size, ") for world '", world.name,
                        "', got ", shape_text(states)));
  return {states.shape(), states.shape() + states.ndim() - 1};
}

py::ssize_t product(const std::vector<py::ssize_t>& axes) {
  py::ssize_t count = 1;
  for (py::ssize_t axis : axes) count *= axis;
  return count;
}

// θ of each frame: (param_count), shared, or (…, param_count) with the states' leading axes.
// Returns the values and the stride between frames (0 when shared).
std::pair<const double*, std::size_t> frame_params(const DoubleArray& params, const std::vector<py::ssize_t>& axes,
                                                   const World& world, const char* what) {
  const py::ssize_t count = world.layout().param_count;
  std::vector<py::ssize_t> per_frame = axes;
  per_frame.push_back(count);
  const std::span<const py::ssize_t> shape(params.shape(), static_cast<std::size_t>(params.ndim()));
  if (params.ndim() == 1 && params.shape(0) == count) return {params.data(), 0};
  if (std::ranges::equal(shape, per_frame)) return {params.data(), static_cast<std::size_t>(count)};
  throw Error(message(what, ": params must have shape (", count, ",) or ", shape_text(per_frame),
                      " (one θ per frame), got ", shape_text(params)));
}

// Frame f's state into self.state and θ into `theta` (sized once).
void load_frame(BoundWorldCamera& self, const double* states, std::pair<const double*, std::size_t> params,
                py::ssize_t frame, WorldParams& theta) {
  const auto width = static_cast<std::size_t>(self.world.layout().state_size);
  read_state_vector({states + static_cast<std::size_t>(frame) * width, width}, self.state.rigid);
  const double* values = params.first + static_cast<std::size_t>(frame) * params.second;
  std::copy(values, values + theta.values.size(), theta.values.begin());
}

DoubleArray params_or_defaults(const std::optional<DoubleArray>& params, const World& world) {
  return params ? *params : py::cast<DoubleArray>(vector_of(world.default_params().values));
}

WorldParams params_buffer(const World& world) {
  return WorldParams{std::vector<double>(static_cast<std::size_t>(world.layout().param_count))};
}

py::tuple render(BoundWorldCamera& self, const DoubleArray& states, const std::optional<DoubleArray>& params) {
  const World& world = self.world;
  const std::vector<py::ssize_t> axes = frame_axes(states, world, "WorldCamera.render");
  const DoubleArray theta_array = params_or_defaults(params, world);
  const auto theta_source = frame_params(theta_array, axes, world, "WorldCamera.render");
  std::vector<py::ssize_t> colour_shape = axes, depth_shape = axes;
  for (py::ssize_t axis : {self.height(), self.width()}) colour_shape.push_back(axis), depth_shape.push_back(axis);
  colour_shape.push_back(3);
  py::array_t<double> colour(colour_shape), depth(depth_shape);
  const py::ssize_t frames = product(axes);
  const auto pixels = static_cast<std::size_t>(self.height() * self.width());
  double* colour_out = colour.mutable_data();
  double* depth_out = depth.mutable_data();
  WorldParams theta = params_buffer(world);
  {
    py::gil_scoped_release release;
    for (py::ssize_t f = 0; f < frames; ++f) {
      load_frame(self, states.data(), theta_source, f, theta);
      self.camera.render(theta, self.state, self.image);
      std::copy(self.image.colour.begin(), self.image.colour.end(),
                colour_out + static_cast<std::size_t>(f) * pixels * 3);
      std::copy(self.image.depth.begin(), self.image.depth.end(), depth_out + static_cast<std::size_t>(f) * pixels);
    }
  }
  return py::make_tuple(colour, depth);
}

// dL/d(inputs) of every frame: a dict of arrays with the frames' leading axes.
py::dict backward(BoundWorldCamera& self, const DoubleArray& states, const std::optional<DoubleArray>& params,
                  const std::optional<DoubleArray>& colour_gradient, const std::optional<DoubleArray>& depth_gradient) {
  const World& world = self.world;
  const char* what = "WorldCamera.backward";
  const std::vector<py::ssize_t> axes = frame_axes(states, world, what);
  const DoubleArray theta_array = params_or_defaults(params, world);
  const auto theta_source = frame_params(theta_array, axes, world, what);
  std::vector<py::ssize_t> colour_shape = axes, depth_shape = axes;
  for (py::ssize_t axis : {self.height(), self.width()}) colour_shape.push_back(axis), depth_shape.push_back(axis);
  colour_shape.push_back(3);
  const double* colour_values =
      colour_gradient
          ? shaped(*colour_gradient, colour_shape, message(what, ": colour_gradient"), "(..., H, W, 3)").data()
          : nullptr;
  const double* depth_values =
      depth_gradient ? shaped(*depth_gradient, depth_shape, message(what, ": depth_gradient"), "(..., H, W)").data()
                     : nullptr;
  const py::ssize_t frames = product(axes);
  const auto pixels = static_cast<std::size_t>(self.height() * self.width());
  const auto with = [&axes](std::initializer_list<py::ssize_t> tail) {
    std::vector<py::ssize_t> shape = axes;
    shape.insert(shape.end(), tail);
    return shape;
  };
  const WorldLayout& layout = world.layout();
  const auto shapes = static_cast<py::ssize_t>(world.rigid->model.shape_count());
  py::array_t<double> state_out(with({layout.tangent_size})), params_out(with({layout.param_count}));
  py::array_t<double> position_out(with({3})), rotation_out(with({3})), fov_out(axes), colours_out(with({shapes, 3}));
  const std::vector<Texture>& textures = self.camera.appearance().textures;
  py::list textures_out;
  std::vector<double*> texture_data;
  for (const Texture& texture : textures) {
    py::array_t<double> array(with({texture.height, texture.width, 3}));
    texture_data.push_back(array.mutable_data());
    textures_out.append(array);
  }
  WorldParams theta = params_buffer(world);
  double* const state_data = state_out.mutable_data();
  double* const params_data = params_out.mutable_data();
  double* const position_data = position_out.mutable_data();
  double* const rotation_data = rotation_out.mutable_data();
  double* const fov_data = fov_out.mutable_data();
  double* const colours_data = colours_out.mutable_data();
  {
    py::gil_scoped_release release;
    CameraImage& cotangent = self.cotangent;
    cotangent.width = self.camera.camera().width;
    cotangent.height = self.camera.camera().height;
    cotangent.colour.resize(colour_values ? pixels * 3 : 0);
    cotangent.depth.resize(depth_values ? pixels : 0);
    for (py::ssize_t f = 0; f < frames; ++f) {
      const auto frame = static_cast<std::size_t>(f);
      load_frame(self, states.data(), theta_source, f, theta);
      if (colour_values) std::copy_n(colour_values + frame * pixels * 3, pixels * 3, cotangent.colour.begin());
      if (depth_values) std::copy_n(depth_values + frame * pixels, pixels, cotangent.depth.begin());
      WorldCameraGradients& g = self.gradients;
      self.camera.backward(theta, self.state, cotangent, g);
      std::copy(g.state.begin(), g.state.end(), state_data + frame * g.state.size());
      std::copy(g.params.begin(), g.params.end(), params_data + frame * g.params.size());
      for (int i = 0; i < 3; ++i) {
        position_data[frame * 3 + static_cast<std::size_t>(i)] = g.camera_position[i];
        rotation_data[frame * 3 + static_cast<std::size_t>(i)] = g.camera_rotation[i];
      }
      fov_data[frame] = g.vertical_fov;
      for (std::size_t k = 0; k < g.colours.size(); ++k)
        for (int c = 0; c < 3; ++c)
          colours_data[(frame * g.colours.size() + k) * 3 + static_cast<std::size_t>(c)] = g.colours[k][c];
      for (std::size_t t = 0; t < g.textures.size(); ++t)
        std::copy(g.textures[t].begin(), g.textures[t].end(), texture_data[t] + frame * g.textures[t].size());
    }
  }
  py::dict out;
  out["state"] = state_out;
  out["params"] = params_out;
  out["camera_position"] = position_out;
  out["camera_rotation"] = rotation_out;
  out["vertical_fov"] = fov_out;
  out["colours"] = colours_out;
  out["textures"] = textures_out;
  return out;
}

void bind_looks(py::module_& module) {
  py::class_<ShapeLook>(module, "ShapeLook", "How one shape looks to a camera (a value).")
      .def(py::init<>())
      .def_readwrite("colour", &ShapeLook::colour, "RGB albedo; a textured plane's texture is tinted by it.")
      .def_readwrite("texture", &ShapeLook::texture, "Index into Appearance.textures, or -1 (planes only).")
      .def_readwrite("texture_size", &ShapeLook::texture_size, "Metres covered by one repeat of the texture.")
      .def("__repr__", [](const ShapeLook& look) {
        return message("<ShapeLook colour [", look.colour.x, ", ", look.colour.y, ", ", look.colour.z, "] texture ",
                       look.texture, ">");
      });

  py::class_<Texture>(module, "Texture", "An RGB texture sampled bilinearly and repeated (a value).")
      .def(py::init([](const DoubleArray& texels) {
             if (texels.ndim() != 3 || texels.shape(2) != 3)
               throw Error(message("Texture: texels must have shape (H, W, 3), got ", shape_text(texels)));
             Texture texture;
             texture.height = static_cast<int>(texels.shape(0));
             texture.width = static_cast<int>(texels.shape(1));
             texture.texels.assign(texels.data(), texels.data() + texels.size());
             return texture;
           }),
           py::arg("texels"), "From an (H, W, 3) array of RGB values, row 0 first.")
      .def_readonly("width", &Texture::width)
      .def_readonly("height", &Texture::height)
      .def_property_readonly(
          "texels",
          [](const Texture& t) {
            return copy_of(t.texels, {t.height, t.width, 3});
          },
          "(H, W, 3), a copy.");
  module.def("checker_texture", &checker_texture, py::arg("cells"), py::arg("texels_per_cell"), py::arg("colour_a"),
             py::arg("colour_b"), "A checker of cells × cells squares of two colours, each texels_per_cell wide.");

  py::class_<Appearance>(module, "Appearance",
                         "How a model's shapes look to a camera: one ShapeLook per shape, textures, light and "
                         "background (a value: edit a copy and give it back, e.g. WorldCamera.appearance = look).")
      .def(py::init<>())
      .def(py::init<const Appearance&>(), py::arg("appearance"), "A copy.")
      .def_readwrite("shapes", &Appearance::shapes, "(nshape) ShapeLook, copies; assign the list back.")
      .def_readwrite("textures", &Appearance::textures)
      .def_readwrite("light_direction", &Appearance::light_direction, "The direction the light travels, world frame.")
      .def_readwrite("ambient", &Appearance::ambient)
      .def_readwrite("diffuse", &Appearance::diffuse)
      .def_readwrite("background", &Appearance::background, "RGB where no shape is seen.");
  module.def("default_appearance", &default_appearance, py::arg("model"),
             "Every shape grey, planes light grey, no texture, a black background.");
}

}  // namespace

void bind_camera(py::module_& module) {
  py::class_<Camera>(module, "Camera",
                     "A pinhole camera (a value; docs/camera.md): looks along its +z, image x right, y down. "
                     "position and orientation (w, x, y, z) are X_WC, or X_BC on body `body` (-1: the world).")
      .def(py::init<>())
      .def(py::init<const Camera&>(), py::arg("camera"), "A copy.")
      .def_readwrite("name", &Camera::name)
      .def_readwrite("body", &Camera::body)
      .def_readwrite("position", &Camera::position, "m")
      .def_readwrite("orientation", &Camera::orientation, "(w, x, y, z), camera frame → world (or body) frame.")
      .def_readwrite("vertical_fov", &Camera::vertical_fov, "rad, in (0, π).")
      .def_readwrite("width", &Camera::width)
      .def_readwrite("height", &Camera::height)
      .def_readwrite("far_depth", &Camera::far_depth, "Depth given to the background, m.")
      .def("__repr__", [](const Camera& camera) {
        return message("<Camera '", camera.name, "' ", camera.width, " × ", camera.height, ", fov ",
                       camera.vertical_fov * 180.0 / std::numbers::pi, " deg>");
      });
  module.def("camera_look_at", &camera_look_at, py::arg("eye"), py::arg("target"), py::arg("up") = Vec3{0, 0, 1},
             "The orientation of a camera at `eye` looking at `target`.");
  bind_looks(module);

  // World.cameras and World.camera_appearance, beside bind_world.cpp's members of World.
  auto world_class = py::reinterpret_borrow<py::class_<World>>(py::type::of<World>());
  world_class
      .def_property_readonly(
          "cameras", [](const World& world) { return world.cameras; },
          "The scene's cameras, a list of copies (docs/scene-format.md, \"Cameras\").")
      .def(
          "camera_appearance",
          [](const World& world, std::string_view name) {
            return world_camera_appearance(world, world_camera_index(world, name));
          },
          py::arg("name"), "How the shapes look to camera `name` (the scene file's colours and background).");

  py::class_<BoundWorldCamera>(
      module, "WorldCamera",
      "A world's camera as a sensor of the world: renders flat world states (…, state_size) under θ to colour "
      "(…, H, W, 3) and depth (…, H, W) arrays, and gives the exact gradient of a loss on them in the world's "
      "tangent and θ layouts (docs/camera.md, \"A camera of the world\"). Only the rigid part is drawn.")
      .def(py::init<const World&, std::string_view, int>(), py::arg("world"), py::arg("name"), py::kw_only(),
           py::arg("threads") = 1,
           "Camera `name` of `world` (a copy is kept) with the scene's look for it, drawn on `threads` threads.")
      .def_property(
          "camera", [](const BoundWorldCamera& self) { return self.camera.camera(); },
          [](BoundWorldCamera& self, const Camera& camera) { self.camera.set_camera(camera); },
          "The Camera (a copy); assign a changed one to move it or change its field of view.")
      .def_property(
          "appearance", [](const BoundWorldCamera& self) { return self.camera.appearance(); },
          [](BoundWorldCamera& self, const Appearance& look) { self.camera.set_appearance(look); },
          "The Appearance (a copy); assign a changed one to recolour.")
      .def_property_readonly("width", &BoundWorldCamera::width)
      .def_property_readonly("height", &BoundWorldCamera::height)
      .def("render", &render, py::arg("states"), py::arg("params") = py::none(),
           "(colour (…, H, W, 3), depth (…, H, W)) of states (…, state_size) under θ: (param_count) for every frame, "
           "(…, param_count) one per frame, or None for the world's defaults. Rows top first; depth in m along "
           "each pixel's ray. Quaternions must be unit.")
      .def("backward", &backward, py::arg("states"), py::arg("params") = py::none(),
           py::arg("colour_gradient") = py::none(), py::arg("depth_gradient") = py::none(),
           "dL/d(inputs) for dL/d(colour) (…, H, W, 3) and dL/d(depth) (…, H, W) (None: zero), per frame, as a dict: "
           "'state' (…, tangent_size) in the tangent layout (rigid rows [p, θ]; velocity and soft rows zero, static "
           "bodies included), 'params' (…, param_count) (the shape sizes), 'camera_position' (…, 3), "
           "'camera_rotation' (…, 3) (world-frame increment, q' = exp(δθ) ⊗ q), 'vertical_fov' (…) per rad, "
           "'colours' (…, nshape, 3), 'textures' [(…, H_t, W_t, 3)].");
}

}  // namespace diffphys::python
