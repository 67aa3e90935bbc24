"""trainspec: one distributed-training job spec in, every deployment format out."""

__version__ = "0.1.0"
