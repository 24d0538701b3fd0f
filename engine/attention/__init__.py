"""Attention backends behind one interface (`backend.AttentionBackend`): the torch reference that reads
K/V through the block table (CPU path and test oracle) and, on CUDA, Triton kernels."""
