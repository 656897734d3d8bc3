//! Side-by-side benchmarks of the bufslab family. See `BENCHMARKS.md` at the workspace root.
