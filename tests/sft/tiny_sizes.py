"""``--set`` overrides for a tiny model small enough for a 2-core CI machine (1 layer, 32 wide)."""

TINY_SIZES = ["--set", "tiny.hidden_size=32", "--set", "tiny.intermediate_size=64",
              "--set", "tiny.num_hidden_layers=1", "--set", "tiny.num_attention_heads=2",
              "--set", "tiny.num_key_value_heads=1", "--set", "tiny.vocab_size=1500",
              "--set", "tiny.tokenizer_rows=40"]
