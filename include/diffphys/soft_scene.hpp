// diffphys/soft_scene.hpp — soft scene files: a JSON document whose top level is one
// "soft" object (schema in docs/soft-bodies.md#soft-scene-files). A soft scene is a separate
// kind of scene file: `diffphys simulate` recognises it by its "soft" key.
#pragma once

#include <string>
#include <string_view>

#include "diffphys/soft.hpp"

namespace diffphys::soft {

// Parses a soft scene into a spec; relative tet-mesh paths resolve against `base_directory`.
// Throws Error naming the source, the JSON path and the value (unknown keys, wrong types,
// unknown material names, bad meshes, ...).
SoftSpec parse_soft_scene(std::string_view text, const std::string& source = "<soft scene>",
                          const std::string& base_directory = ".");
SoftSpec load_soft_scene(const std::string& path);

// build_soft(spec) for a spec read from `source`: its errors (the physical checks: moduli,
// Poisson ratios, masses, node indices, obstacles, ...) start with "<source>: ", as the
// reader's do, so a message from a scene file always names the file.
SoftBuild build_soft_scene(const SoftSpec& spec, const std::string& source);

// Whether the file is a JSON object with a top-level "soft" key (false for unreadable files
// and rigid scenes, which load_scene() reports on).
bool is_soft_scene_file(const std::string& path);

}  // namespace diffphys::soft
