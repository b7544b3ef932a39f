// WRED / ECN decision. See wred.h.
#include "switch/qos/wred.h"

namespace sf::sw {

std::string_view to_string(EcnAction a) {
  switch (a) {
    case EcnAction::kPass: return "pass";
    case EcnAction::kMark: return "mark";
    case EcnAction::kDrop: return "drop";
  }
  return "unknown";
}

}  // namespace sf::sw
