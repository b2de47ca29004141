// The one exception type of the ranking core. The N-API layer turns it into a JavaScript
// TypeError, RangeError or Error with the same message, so the core stays free of N-API.
#pragma once
#include <stdexcept>
#include <string>

namespace pinclaw {
namespace ranking {

class Error : public std::runtime_error {
 public:
  enum Kind { kError, kType, kRange };
  explicit Error(const std::string& message, Kind kind = kError) : std::runtime_error("ranking: " + message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

}  // namespace ranking
}  // namespace pinclaw
