"""The model sizes the benches share, and the matmuls of one update at a size: no flags, so that a bench or a
test can import them beside any command's flags (absl refuses a flag defined twice in one process)."""

PRESETS = {
    # configs/tiny.flags on the Multi30k vocabularies; Multi30k sentences average 13 (en) / 14 (fr) words.
    "tiny": dict(vocab_size=10004, embedding_dim=32, hidden_dim=64, maxout_dim=32, alignment_dim=64,
                 batch_size=32, source_length=14, target_length=16),
    "multi30k": dict(vocab_size=10004, embedding_dim=256, hidden_dim=256, maxout_dim=128, alignment_dim=256,
                     batch_size=64, source_length=14, target_length=16),
    # bench.peer_comparison's size: the peer's decoder (OpenNMT-py, hidden 512), Multi30k lengths, batch 80.
    "peer": dict(vocab_size=10004, embedding_dim=256, hidden_dim=512, maxout_dim=256, alignment_dim=512,
                 batch_size=80, source_length=14, target_length=16),
    # Bahdanau et al. 2014: 30000-word vocabularies (+4 reserved ids), batch 80, 50-word sentences (+EOS).
    "rnnsearch50": dict(vocab_size=30004, embedding_dim=620, hidden_dim=1000, maxout_dim=500,
                        alignment_dim=1000, batch_size=80, source_length=51, target_length=51),
}


def forward_matmuls(settings):
    """The forward pass's matmuls of one update: list of `(name, M, K, N, count)`."""
    batch, source_length, target_length = (settings[k] for k in ("batch_size", "source_length", "target_length"))
    m, n, l, n_a, vocab = (
        settings[k] for k in ("embedding_dim", "hidden_dim", "maxout_dim", "alignment_dim", "vocab_size")
    )
    source_tokens, target_tokens = batch * source_length, batch * target_length
    return [
        ("encoder W_z|W_r|W x", source_tokens, m, 3 * n, 2),
        ("encoder U_z|U_r h", batch, n, 2 * n, 2 * source_length),
        ("encoder U [r h]", batch, n, n, 2 * source_length),
        ("W_s", batch, n, n, 1),
        ("U_a h", source_tokens, 2 * n, n_a, 1),
        ("decoder W_z|W_r|W E y", target_tokens, m, 3 * n, 1),
        ("W_a s", batch, n, n_a, target_length),
        ("alignment v_a tanh(.)", batch * source_length, n_a, 1, target_length),
        ("C_z|C_r|C h", source_tokens, 2 * n, 3 * n, 1),
        ("sum_j a_ij C h_j", batch, source_length, 3 * n, target_length),
        ("C_o h", source_tokens, 2 * n, 2 * l, 1),
        ("C_o c_i = sum_j a_ij C_o h_j", target_tokens, source_length, 2 * l, 1),
        ("decoder U_z|U_r s", batch, n, 2 * n, target_length),
        ("decoder U [r s]", batch, n, n, target_length),
        ("U_o s", target_tokens, n, 2 * l, 1),
        ("V_o E y", target_tokens, m, 2 * l, 1),
        ("W_o t", target_tokens, l, vocab, 1),
    ]


def matmul_flops(matmuls):
    """2·M·K·N summed over `(name, M, K, N, count)` rows."""
    return sum(2 * shape_m * shape_k * shape_n * count for _, shape_m, shape_k, shape_n, count in matmuls)
