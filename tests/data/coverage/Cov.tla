---- MODULE Cov ----
\* The smallest spec a coverage mapping needs (tests/cli/test_record_zk.sh): coverage counts
\* windows and branches, it checks nothing.
EXTENDS Naturals
VARIABLE clock
Init == clock = 0
Tick == clock' = clock + 1
Next == Tick
====
