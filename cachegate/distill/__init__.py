"""Distillation of the small tier from the large one: an opt-in log of the large tier's answers (`log`,
`sinks`), LoRA fine-tuning of the small model on them (`cachegate distill`), and the agreement of small
and large answers on held-out requests (`cachegate eval distill`)."""
