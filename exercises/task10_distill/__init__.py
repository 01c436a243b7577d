"""Task module 10: knowledge distillation."""
