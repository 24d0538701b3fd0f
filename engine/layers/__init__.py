"""Building blocks of the model: norm, rotary embedding, packed linear, and the attention boundary."""
