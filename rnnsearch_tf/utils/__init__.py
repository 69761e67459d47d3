"""Small helpers every package may use: text files, progress lines, config checks."""
