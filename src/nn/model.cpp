// What nn/model.h declares out of line: token_batch's check of the rows a caller reads.
#include "nn/model.h"

namespace wf {

void token_batch::check_out_rows(const std::string& who) const {
    for (size_t i = 0; i < out_rows.size(); ++i)
        if (out_rows[i] < 0 || out_rows[i] >= n_seq * n_tokens || (i > 0 && out_rows[i] <= out_rows[i - 1]))
            throw error(who + ": output row " + std::to_string(out_rows[i]) + " is out of range or out of order");
}

}  // namespace wf
