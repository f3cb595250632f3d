// model/nearest_name.hpp — "did you mean" for a mistyped name: the edit distance of two words
// and the nearest of a list of known names, shared by the scene reader's keys, the lookups of
// parameters, bodies, joints and actuators by name, and the command line's subcommands.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace diffphys {

// Levenshtein distance (insertions, deletions, substitutions of one character).
std::size_t edit_distance(std::string_view a, std::string_view b);

// The known name nearest to `word` when it is close enough to be a typo of it: within
// max(1, |word| / 4) edits, or (prefix_is_near) `word` a prefix of it; "" otherwise. Ties
// keep the first.
std::string nearest_name(std::string_view word, std::span<const std::string_view> known, bool prefix_is_near = true);

// " (did you mean 'x'?)" for the nearest name, "" when none is close.
std::string did_you_mean(std::string_view word, std::span<const std::string_view> known);

struct ParamLayout;
// "unknown parameter 'name'" with the nearest slice name (model.cpp; Params::slice and
// Gradients::param throw it).
std::string unknown_parameter_message(const ParamLayout& layout, std::string_view name);

}  // namespace diffphys
