"""Dense decoder-only transformer shapes and named presets."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ModelShape:
    """Shape of a dense decoder. head_dim = hidden / heads; kv_heads < heads means GQA."""

    name: str
    layers: int
    hidden: int
    ffn: int
    heads: int
    kv_heads: int
    vocab: int
    seq_len: int
    gated_mlp: bool = True  # SwiGLU (3 FFN matrices) vs GELU (2)
    tied_embeddings: bool = False

    def __post_init__(self) -> None:
        if min(self.layers, self.hidden, self.ffn, self.heads, self.kv_heads) <= 0:
            raise ValueError("model dimensions must be positive")
        if self.hidden % self.heads:
            raise ValueError(f"hidden {self.hidden} not divisible by heads {self.heads}")
        if self.heads % self.kv_heads:
            raise ValueError(f"heads {self.heads} not divisible by kv_heads {self.kv_heads}")

    @property
    def head_dim(self) -> int:
        return self.hidden // self.heads

    @property
    def mlp_matrices(self) -> int:
        return 3 if self.gated_mlp else 2

    @property
    def params_per_layer(self) -> int:
        """Q,O (h*h each), K,V (h*kv*d each), MLP (2|3)*h*ffn, two norms (Narayanan 2021)."""
        h = self.hidden
        kv_dim = self.kv_heads * self.head_dim
        return 2 * h * h + 2 * h * kv_dim + self.mlp_matrices * h * self.ffn + 2 * h

    @property
    def embedding_params(self) -> int:
        """Input embedding plus (if untied) the output projection."""
        return self.vocab * self.hidden * (1 if self.tied_embeddings else 2)

    @property
    def total_params(self) -> int:
        return self.layers * self.params_per_layer + self.embedding_params + self.hidden


def _gpt(name: str, layers: int, hidden: int, heads: int, seq: int, vocab: int) -> ModelShape:
    return ModelShape(name, layers, hidden, 4 * hidden, heads, heads, vocab, seq,
                      gated_mlp=False, tied_embeddings=True)


PRESETS: dict[str, ModelShape] = {
    # Brown et al. 2020 Table 2.1; vocab padded to 51200 as in Megatron.
    "gpt3-175b": _gpt("gpt3-175b", 96, 12288, 96, 2048, 51200),
    # Touvron et al. 2023 (Llama 2) Table 1 / HF config.json.
    "llama2-7b": ModelShape("llama2-7b", 32, 4096, 11008, 32, 32, 32000, 4096),
    "llama2-70b": ModelShape("llama2-70b", 80, 8192, 28672, 64, 8, 32000, 4096),
    # Llama 3 Herd of Models (arXiv:2407.21783) Table 3.
    "llama3-8b": ModelShape("llama3-8b", 32, 4096, 14336, 32, 8, 128256, 8192),
    "llama3-70b": ModelShape("llama3-70b", 80, 8192, 28672, 64, 8, 128256, 8192),
    "llama3-405b": ModelShape("llama3-405b", 126, 16384, 53248, 128, 8, 128256, 8192),
    # The seed articles name only parameter counts; we give them Llama-style shapes.
    # seed 7B: "32 layers, 4096 hidden" (seed 000) -> Llama-2 7B shape.
    "seed-7b": ModelShape("seed-7b", 32, 4096, 11008, 32, 32, 32000, 4096),
    "seed-70b": ModelShape("seed-70b", 80, 8192, 28672, 64, 8, 128256, 8192),
    # seed 90B (seed 001 case study, seq 2048): Llama-3-70B width with 104 layers ~ 91B.
    "seed-90b": ModelShape("seed-90b", 104, 8192, 28672, 64, 8, 128256, 2048),
}


def preset(name: str) -> ModelShape:
    """Look up a preset by name; raises KeyError listing the known names."""
    try:
        return PRESETS[name]
    except KeyError:
        raise KeyError(f"unknown model preset {name!r}; known: {sorted(PRESETS)}") from None
