"""A literal NumPy transcription of Bahdanau et al. 2014, Appendix A, and Cho et al. 2014, Appendix A.

One sentence at a time, no padding, column-vector notation as in the papers: each `[in, out]` array of
`paper_weights()` is transposed to the paper's `[out, in]` before use, so `W @ x` reads like the text.
"""

import numpy as np


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def log_softmax(x):
    shifted = x - x.max()
    return shifted - np.log(np.exp(shifted).sum())


def paper_matrices(weights):
    """Matrices to `[out, in]` (the papers' orientation); vectors and embeddings stay as they are."""
    return {
        name: value.T if value.ndim == 2 and not name.startswith("E") else value
        for name, value in weights.items()
    }


def gated_unit(p, suffix, x, h_previous, extra=None):
    """A.1.1: z, r, h̃, h for input x; `extra` = (C, C_z, C_r) terms already multiplied by c_i."""
    extra_h, extra_z, extra_r = extra if extra is not None else (0.0, 0.0, 0.0)
    z = sigmoid(p["W_z" + suffix] @ x + p["b_W_z" + suffix] + p["U_z" + suffix] @ h_previous + extra_z)
    r = sigmoid(p["W_r" + suffix] @ x + p["b_W_r" + suffix] + p["U_r" + suffix] @ h_previous + extra_r)
    h_tilde = np.tanh(p["W" + suffix] @ x + p["b_W" + suffix] + p["U" + suffix] @ (r * h_previous) + extra_h)
    return (1.0 - z) * h_previous + z * h_tilde


def embed_previous(p, y_previous):
    """E y_{i-1}; e(y_0) = 0 (the decoder starts from the zero vector)."""
    return np.zeros(p["E"].shape[1]) if y_previous is None else p["E"][y_previous]


def deep_output_log_probs(p, s, e_previous, c):
    """A.2.2: t̃ = U_o s + V_o E y_{i-1} + C_o c_i, maxout over pairs, softmax(W_o t)."""
    t_tilde = p["U_o"] @ s + p["b_U_o"] + p["V_o"] @ e_previous + p["C_o"] @ c
    t = np.maximum(t_tilde[0::2], t_tilde[1::2])  # t_j = max(t̃_{2j-1}, t̃_{2j})
    return log_softmax(p["W_o"] @ t + p["b_W_o"])


def decoder_log_probs(p, target, s, context_fn, readout_state):
    """Runs the decoder over one target sentence; context_fn(s_{i-1}) -> (c_i, α_i)."""
    log_probs, alignments = [], []
    y_previous = None
    for y in target:
        e_previous = embed_previous(p, y_previous)
        c, alpha = context_fn(s)
        s_new = gated_unit(p, "", e_previous, s, extra=(p["C"] @ c, p["C_z"] @ c, p["C_r"] @ c))
        readout = s_new if readout_state == "current" else s
        log_probs.append(deep_output_log_probs(p, readout, e_previous, c)[y])
        alignments.append(alpha)
        s, y_previous = s_new, y
    return np.array(log_probs), alignments


def rnnsearch_log_probs(weights, source, target, readout_state="current"):
    """log p(y_i | y_<i, x) for one unpadded sentence pair, and the alignment weights α_i."""
    p = paper_matrices(weights)
    n = p["U_fwd"].shape[0]
    x = [p["E_src"][word] for word in source]
    h_forward, h = [], np.zeros(n)
    for x_i in x:  # A.2.1, forward RNN
        h = gated_unit(p, "_fwd", x_i, h)
        h_forward.append(h)
    h_backward, h = [None] * len(x), np.zeros(n)
    for i in reversed(range(len(x))):  # backward RNN reads x_T ... x_1
        h = gated_unit(p, "_bwd", x[i], h)
        h_backward[i] = h
    annotations = [np.concatenate([f, b]) for f, b in zip(h_forward, h_backward)]  # Eq. (7)
    s_0 = np.tanh(p["W_s"] @ h_backward[0] + p["b_W_s"])

    def context_fn(s_previous):  # A.1.2 / A.2.2
        e = np.array(
            [p["v_a"] @ np.tanh(p["W_a"] @ s_previous + p["b_W_a"] + p["U_a"] @ h_j) for h_j in annotations]
        )
        alpha = np.exp(e - e.max()) / np.exp(e - e.max()).sum()
        return sum(a * h_j for a, h_j in zip(alpha, annotations)), alpha

    return decoder_log_probs(p, target, s_0, context_fn, readout_state)


def rnnencdec_log_probs(weights, source, target, readout_state="current"):
    """Cho et al. 2014 A.1: c = tanh(V h_T), s_0 = tanh(V' c), c at every step."""
    p = paper_matrices(weights)
    h = np.zeros(p["U_enc"].shape[0])
    for word in source:
        h = gated_unit(p, "_enc", p["E_src"][word], h)
    c = np.tanh(p["V"] @ h + p["b_V"])
    s_0 = np.tanh(p["V_prime"] @ c + p["b_V_prime"])
    return decoder_log_probs(p, target, s_0, lambda s: (c, np.zeros(0)), readout_state)
