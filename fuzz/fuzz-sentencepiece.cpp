// libFuzzer driver: SentencePiece .model files (see fuzz/targets.h).
#include "targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    wf::fuzz::sentencepiece(data, size);
    return 0;
}
