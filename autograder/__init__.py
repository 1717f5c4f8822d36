"""The instructor side of GEMM Lab: collect, autograde (nbgrader in bubblewrap), feedback, grades."""
