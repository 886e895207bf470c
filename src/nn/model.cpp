// What nn/model.h declares out of line: token_batch's check of the rows a caller reads, the output layer's screen
// slot.
#include "nn/model.h"

#include <new>

#include "nn/head-screen.h"

namespace wf {

void token_batch::check_out_rows(const std::string& who) const {
    for (size_t i = 0; i < out_rows.size(); ++i)
        if (out_rows[i] < 0 || out_rows[i] >= n_seq * n_tokens || (i > 0 && out_rows[i] <= out_rows[i - 1]))
            throw error(who + ": output row " + std::to_string(out_rows[i]) + " is out of range or out of order");
}

screen_slot::screen_slot() = default;
screen_slot::~screen_slot() = default;

const head_screen* screen_slot::get(const linear& head) const {
    if (unscreened_steps_ >= 0 && unscreened_steps_++ >= head_screen::steps_before) {
        unscreened_steps_ = -1;
        try {
            screen_ = head_screen::make(head);
        } catch (const std::bad_alloc&) {  // no room for the copy: the full layer
        }
    }
    return screen_.get();
}

}  // namespace wf
