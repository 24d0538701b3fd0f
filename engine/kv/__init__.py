"""Paged KV cache: the block pool tensor, the reference-counted block allocator, the radix-tree prefix
cache over block-aligned token ids, and the block manager that ties them to sequences."""
