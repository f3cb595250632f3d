// diffphys/error.hpp — the one exception type the library throws for bad input.
//
// Every refusal names the item and the value (DESIGN.md §5): "body 'ball': mass must be
// positive, got -1". Solver non-convergence is not an exception: it is reported in the
// step's status (see simulator.hpp), because a caller may want to keep going.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace diffphys {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Builds a message from streamable pieces: throw Error(message("body '", name, "': ..."));
template <typename... Pieces>
std::string message(const Pieces&... pieces) {
  std::ostringstream stream;
  stream.precision(17);
  (stream << ... << pieces);
  return stream.str();
}

}  // namespace diffphys
