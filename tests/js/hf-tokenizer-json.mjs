// tokenizer.json files in Hugging Face's layout (as `tokenizers` saves them for bert-base-uncased and gpt2), built
// from the committed vocabularies, for the independent implementation and for our own tokenizer.json loader.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { root } from './helpers.mjs';

const tok = (rel) => readFileSync(path.join(root, 'tests/data/tokenizers', rel), 'utf8');

export function bertTokenizerJson() {
  const lines = tok('bert/vocab.txt').split('\n');
  if (lines.at(-1) === '') lines.pop();
  const vocab = Object.fromEntries(lines.map((t, i) => [t, i]));
  const special = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: special.map((content) => ({ id: vocab[content], content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true })),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      pair: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } },
             { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '[SEP]', type_id: 1 } }],
      special_tokens: { '[CLS]': { id: '[CLS]', ids: [101], tokens: ['[CLS]'] }, '[SEP]': { id: '[SEP]', ids: [102], tokens: ['[SEP]'] } },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
  };
}

export function gpt2TokenizerJson() {
  const vocab = JSON.parse(tok('gpt2/encoder.json'));
  const merges = tok('gpt2/vocab.bpe').split('\n').filter((l, i) => l && !(i === 0 && l.startsWith('#version')));
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [{ id: 50256, content: '<|endoftext|>', single_word: false, lstrip: false, rstrip: false, normalized: true, special: true }],
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: true },
    post_processor: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: false, use_regex: true },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: '', end_of_word_suffix: '', fuse_unk: false, byte_fallback: false, vocab, merges },
  };
}

export const bertTokenizerConfig = { do_lower_case: true, model_max_length: 512, tokenizer_class: 'BertTokenizer', cls_token: '[CLS]', sep_token: '[SEP]',
  unk_token: '[UNK]', pad_token: '[PAD]', mask_token: '[MASK]' };
export const gpt2TokenizerConfig = { model_max_length: 1024, tokenizer_class: 'GPT2Tokenizer', bos_token: '<|endoftext|>', eos_token: '<|endoftext|>',
  unk_token: '<|endoftext|>', add_prefix_space: false };
