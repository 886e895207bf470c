// The engine's errors and cancellation. Every error the core raises is a wf::error whose message names the file,
// field, tensor, option or value at fault; a failed call leaves every object as it was before the call.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>

namespace wf {

struct error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Thrown when the cancel callback asks to stop; the state a call works on is left as it was before the call.
struct cancelled : error {
    cancelled() : error("cancelled") {}
};

// Polled between layers and between generated tokens; returns true to stop.
using cancel_fn = std::function<bool()>;

inline void check_cancel(const cancel_fn* c) {
    if (c && *c && (*c)()) throw cancelled();
}

}  // namespace wf
