"""A tiny randomly initialised Qwen2-shaped model with a tokenizer trained on the spot: the training path's
test double (nothing is downloaded; building it takes about a second).

The tokenizer carries Qwen2.5's chat template (the one TRL recognises, tool calls in ``<tool_call>`` tags),
so TRL's tool-calling loop, response parsing and training template behave as with the real model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

_SPECIAL = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
_MARKUP = ["<tool_call>", "</tool_call>", "<tool_response>", "</tool_response>", "<tools>", "</tools>"]
_CORPUS = [
    "You are Qwen, created by Alibaba Cloud. You are a helpful assistant.",
    "# Tools\n\nYou may call one or more functions to assist with the user query.",
    '{"type": "function", "function": {"name": "bash", "description": "Run a shell command", "parameters": '
    '{"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}}',
    '{"name": "bash", "arguments": {"command": "wc -w < /app/text.txt > /app/words.txt"}}',
    "Count the words in /app/text.txt and write the number to /app/words.txt. [exit code 0]",
    "ls cat grep head tail sed awk echo printf mkdir cd python3 sort uniq tr cut find xargs",
]


def tiny_model(seed: int = 0, hidden: int = 32, layers: int = 2) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM
    from trl.chat_template_utils import qwen2_5_chat_template

    raw = Tokenizer(models.BPE())
    raw.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    raw.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=600,
        special_tokens=_SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    raw.train_from_iterator(_CORPUS * 4, trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=raw, eos_token="<|im_end|>", pad_token="<|endoftext|>", padding_side="left"
    )
    tokenizer.add_tokens(_MARKUP)  # plain tokens, as in Qwen's vocabulary: decoding keeps them
    tokenizer.chat_template = qwen2_5_chat_template
    torch.manual_seed(seed)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=8192,
        tie_word_embeddings=True,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
    )
    model = Qwen2ForCausalLM(config)
    model.generation_config.eos_token_id = tokenizer.eos_token_id
    model.generation_config.pad_token_id = tokenizer.pad_token_id
    return model, tokenizer
