"""Helpers the tests share (not tests): the layer-test case, NumPy transcriptions of the papers, tiny
models, searches and exports, and a toy corpus. Imported as `helpers.<module>` (pytest puts tests/ on
the path)."""
