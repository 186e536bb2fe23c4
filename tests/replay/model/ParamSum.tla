---- MODULE ParamSum ----
\* Instantiated with a parameter by ParamInst (S(N) == INSTANCE ParamSum): Total depends on N
\* alone, yet each S(n)!Total has its own value (not one per run, as a constant's would be).
EXTENDS Naturals
CONSTANT N
Total == N * (N + 1) \div 2
Scaled(k) == k * Total
====
