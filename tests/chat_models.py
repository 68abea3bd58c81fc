"""A tiny chat model for tests: a byte-level BPE tokenizer trained on the test's own texts, with a chat template
that marks the assistant's turns (what TRL's assistant_only_loss trains on), and a one-layer Qwen2 model
saved beside it; and the conversations the tests train on."""

from __future__ import annotations

from tokenizers import ByteLevelBPETokenizer
from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

# The assistant's turns between generation markers: what TRL's assistant_only_loss trains on.
CHAT_TEMPLATE = (
    "{% for message in messages %}{% if message['role'] == 'assistant' %}{% generation %}"
    "{{ message['content'] + eos_token }}{% endgeneration %}{% else %}"
    "{{ 'User: ' + message['content'] + '\\nAssistant: ' }}{% endif %}{% endfor %}"
)


def conversations(count: int) -> list[dict]:
    return [
        {"messages": [{"role": "user", "content": f"What is {i} plus {i + 1}?"}, {"role": "assistant", "content": f"It is {2 * i + 1}."}]}
        for i in range(count)
    ]


def tiny_chat_model(folder, texts: list[str]) -> None:
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(texts * 5, vocab_size=300, special_tokens=["<|endoftext|>"])
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe._tokenizer, eos_token="<|endoftext|>", pad_token="<|endoftext|>")
    tokenizer.chat_template = CHAT_TEMPLATE
    config = Qwen2Config(
        vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2
    )
    config.eos_token_id = config.pad_token_id = tokenizer.eos_token_id
    Qwen2ForCausalLM(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
