// diffphys/error.hpp — the one exception type the library throws for bad input.
//
// Every refusal names the item and the value (DESIGN.md §5): "body 'ball': mass must be
// positive, got -1". Solver non-convergence is not an exception: it is reported in the
// step's status (see simulator.hpp), because a caller may want to keep going.
#pragma once

#include <charconv>
#include <sstream>
#include <stdexcept>
#include <string>

namespace diffphys {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
// Numbers print in their shortest exact form (−0.1, not −0.10000000000000001).
inline void append_piece(std::ostringstream& stream, double value) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  stream.write(buffer, result.ptr - buffer);
}
template <typename Piece>
void append_piece(std::ostringstream& stream, const Piece& piece) {
  stream << piece;
}
}  // namespace detail

// A measured value to `digits` significant digits, as printf's "%.*g" (1019.98, not
// 1019.9800000000046): for values computed by the engine, where the shortest exact form
// above would print their round-off.
inline std::string significant(double value, int digits = 6) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::general, digits);
  return std::string(buffer, result.ptr);
}

// Builds a message from streamable pieces: throw Error(message("body '", name, "': ..."));
template <typename... Pieces>
std::string message(const Pieces&... pieces) {
  std::ostringstream stream;
  (detail::append_piece(stream, pieces), ...);
  return stream.str();
}

}  // namespace diffphys
