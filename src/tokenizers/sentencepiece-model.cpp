// sentencepiece's ModelProto (src/sentencepiece_model.proto), read from the protobuf wire format by hand: a
// message is a run of (field number << 3 | wire type) keys, each followed by a varint, a fixed 32/64-bit value, or a
// varint length and that many bytes. Only the fields encoding needs are read; the others are skipped. Every length
// is checked against the bytes left before it is used, and nothing is allocated that the file does not hold.
#include <cmath>
#include <cstring>

#include "core/error.h"
#include "tokenizers/sentencepiece.h"

namespace wf {

namespace {

constexpr size_t kMaxModelBytes = size_t(64) << 20;
constexpr size_t kMaxPieces = size_t(1) << 22;
constexpr size_t kMaxPieceBytes = 1024;

enum wire : uint32_t { varint = 0, fixed64 = 1, length_delimited = 2, fixed32 = 5 };

class reader {
public:
    reader(std::string_view bytes, std::string where) : s_(bytes), where_(std::move(where)) {}
    bool done() const { return at_ == s_.size(); }
    // The next field's number and wire type.
    std::pair<uint32_t, uint32_t> key() {
        const uint64_t k = read_varint("a field key");
        const auto field = uint32_t(k >> 3), type = uint32_t(k & 7);
        if (field == 0 || k >> 3 > 0x1FFFFFFF) fail("field number " + std::to_string(k >> 3) + " is not a protobuf field number");
        return {field, type};
    }
    uint64_t read_varint(const std::string& what) {
        uint64_t v = 0;
        for (int shift = 0; shift < 70; shift += 7) {
            if (at_ >= s_.size()) fail(what + ": the file ends inside a varint");
            const auto b = uint8_t(s_[at_++]);
            if (shift == 63 && b > 1) fail(what + ": a varint over 64 bits");
            v |= uint64_t(b & 0x7F) << shift;
            if (!(b & 0x80)) return v;
        }
        fail(what + ": a varint longer than 10 bytes");
    }
    std::string_view read_bytes(const std::string& what) {
        const uint64_t n = read_varint(what + "'s length");
        if (n > s_.size() - at_)
            fail(what + ": a length of " + std::to_string(n) + " bytes, but only " + std::to_string(s_.size() - at_) + " are left");
        const std::string_view v = s_.substr(at_, size_t(n));
        at_ += size_t(n);
        return v;
    }
    float read_float(const std::string& what) {
        if (s_.size() - at_ < 4) fail(what + ": the file ends inside a 32-bit value");
        uint32_t bits = 0;
        for (int i = 3; i >= 0; --i) bits = bits << 8 | uint8_t(s_[at_ + size_t(i)]);
        at_ += 4;
        float f;
        std::memcpy(&f, &bits, 4);
        return f;
    }
    // A field's value of the expected wire type; a mismatch is an error naming the field.
    void expect(uint32_t type, uint32_t want, const std::string& field) {
        if (type != want) fail(field + " has wire type " + std::to_string(type) + ", expected " + std::to_string(want));
    }
    bool read_bool(uint32_t type, const std::string& field) {
        expect(type, varint, field);
        return read_varint(field) != 0;
    }
    int32_t read_int32(uint32_t type, const std::string& field) {
        expect(type, varint, field);
        return int32_t(uint32_t(read_varint(field)));  // negative int32s are 10-byte varints of their 64-bit form
    }
    void skip(uint32_t type, uint32_t field) {
        const std::string what = "unknown field " + std::to_string(field);
        switch (type) {
        case varint: read_varint(what); break;
        case fixed64:
            if (s_.size() - at_ < 8) fail(what + ": the file ends inside a 64-bit value");
            at_ += 8;
            break;
        case length_delimited: read_bytes(what); break;
        case fixed32: read_float(what); break;
        default: fail(what + " has wire type " + std::to_string(type) + " (groups and types 6–7 are not protobuf 3 wire types)");
        }
    }
    [[noreturn]] void fail(const std::string& msg) const { throw error(where_ + ": " + msg + " (at byte " + std::to_string(at_) + ")"); }

private:
    std::string_view s_;
    size_t at_ = 0;
    std::string where_;
};

std::string text_field(reader& r, uint32_t type, const std::string& field, size_t max_bytes) {
    r.expect(type, length_delimited, field);
    const std::string_view v = r.read_bytes(field);
    if (v.size() > max_bytes) r.fail(field + " is " + std::to_string(v.size()) + " bytes, over the limit of " + std::to_string(max_bytes));
    return std::string(v);
}

// ModelProto.SentencePiece: 1 piece, 2 score, 3 type.
sentencepiece_piece read_piece(std::string_view bytes, size_t index, const std::string& file) {
    const std::string what = "pieces[" + std::to_string(index) + "]";
    reader r(bytes, file + " " + what);
    sentencepiece_piece p;
    while (!r.done()) {
        const auto [field, type] = r.key();
        if (field == 1) {
            p.text = text_field(r, type, "piece", kMaxPieceBytes);
        } else if (field == 2) {
            r.expect(type, fixed32, "score");
            p.score = r.read_float("score");
            if (!std::isfinite(p.score)) r.fail("score is not a finite number");
        } else if (field == 3) {
            const int32_t t = r.read_int32(type, "type");
            if (t < 1 || t > 6) r.fail("type " + std::to_string(t) + " is not a SentencePiece type (1 … 6)");
            p.type = piece_type(t);
        } else {
            r.skip(type, field);
        }
    }
    if (p.text.empty()) throw error(file + ": " + what + " has no piece text");
    return p;
}

// TrainerSpec: 3 model_type, 24 treat_whitespace_as_suffix, 35 byte_fallback, 45–48 the special pieces' texts.
void read_trainer_spec(std::string_view bytes, sentencepiece_model& m, const std::string& file) {
    reader r(bytes, file + " trainer_spec");
    while (!r.done()) {
        const auto [field, type] = r.key();
        switch (field) {
        case 3: {
            const int32_t t = r.read_int32(type, "model_type");
            if (t == 1) m.type = sentencepiece_model::kind::unigram;
            else if (t == 2) m.type = sentencepiece_model::kind::bpe;
            else r.fail("model_type " + std::to_string(t) + (t == 3 || t == 4 ? " (WORD / CHAR)" : "") + " is not supported (supported: 1 UNIGRAM, 2 BPE)");
            break;
        }
        case 24:
            if (r.read_bool(type, "treat_whitespace_as_suffix")) r.fail("treat_whitespace_as_suffix is not supported");
            break;
        case 35: m.byte_fallback = r.read_bool(type, "byte_fallback"); break;
        case 45: m.unk_piece = text_field(r, type, "unk_piece", kMaxPieceBytes); break;
        case 46: m.bos_piece = text_field(r, type, "bos_piece", kMaxPieceBytes); break;
        case 47: m.eos_piece = text_field(r, type, "eos_piece", kMaxPieceBytes); break;
        case 48: m.pad_piece = text_field(r, type, "pad_piece", kMaxPieceBytes); break;
        default: r.skip(type, field);
        }
    }
}

// NormalizerSpec: 1 name, 2 precompiled_charsmap, 3 add_dummy_prefix, 4 remove_extra_whitespaces, 5 escape_whitespaces.
void read_normalizer_spec(std::string_view bytes, sentencepiece_model& m, const std::string& file) {
    reader r(bytes, file + " normalizer_spec");
    while (!r.done()) {
        const auto [field, type] = r.key();
        switch (field) {
        case 1: m.normalizer_name = text_field(r, type, "name", 256); break;
        case 2: m.precompiled_charsmap = text_field(r, type, "precompiled_charsmap", kMaxModelBytes); break;
        case 3: m.add_dummy_prefix = r.read_bool(type, "add_dummy_prefix"); break;
        case 4: m.remove_extra_whitespaces = r.read_bool(type, "remove_extra_whitespaces"); break;
        case 5: m.escape_whitespaces = r.read_bool(type, "escape_whitespaces"); break;
        default: r.skip(type, field);
        }
    }
}

}  // namespace

sentencepiece_model parse_sentencepiece_model(std::string_view bytes, const std::string& file) {
    if (bytes.size() > kMaxModelBytes)
        throw error(file + ": " + std::to_string(bytes.size()) + " bytes is over the limit of " + std::to_string(kMaxModelBytes));
    if (bytes.empty()) throw error(file + ": the file is empty (expected a SentencePiece ModelProto)");
    sentencepiece_model m;
    reader r(bytes, file);
    bool has_trainer = false, has_normalizer = false;
    // ModelProto: 1 pieces (repeated), 2 trainer_spec, 3 normalizer_spec; 4 self_test_data and 5
    // denormalizer_spec are not needed to encode
    while (!r.done()) {
        const auto [field, type] = r.key();
        if (field == 1) {
            r.expect(type, length_delimited, "pieces");
            if (m.pieces.size() == kMaxPieces) r.fail("more than " + std::to_string(kMaxPieces) + " pieces");
            m.pieces.push_back(read_piece(r.read_bytes("pieces[" + std::to_string(m.pieces.size()) + "]"), m.pieces.size(), file));
        } else if (field == 2) {
            r.expect(type, length_delimited, "trainer_spec");
            read_trainer_spec(r.read_bytes("trainer_spec"), m, file);
            has_trainer = true;
        } else if (field == 3) {
            r.expect(type, length_delimited, "normalizer_spec");
            read_normalizer_spec(r.read_bytes("normalizer_spec"), m, file);
            has_normalizer = true;
        } else {
            r.skip(type, field);
        }
    }
    if (m.pieces.empty()) throw error(file + ": no pieces (is this a SentencePiece .model file?)");
    if (!has_trainer || !has_normalizer)
        throw error(file + ": no " + std::string(has_trainer ? "normalizer_spec" : "trainer_spec") + " (is this a SentencePiece .model file?)");
    return m;
}

}  // namespace wf
